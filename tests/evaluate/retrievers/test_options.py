"""Retriever options: text converted by the dataclass' field types, one-line errors, every entry point.

``--retriever-option`` on evaluate and calibrate, the ``[evaluate.retriever]`` table of pipeline.toml
and Python dicts all go through ``make_options``; the older specific flags keep working.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluate.retrievers.fakes import HashingEmbedder
from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers import (
    RETRIEVERS,
    BM25Options,
    DenseOptions,
    HybridOptions,
    LocalDenseOptions,
    build_retriever,
    make_options,
    parse_option_assignments,
)
from realrecall.evaluate.retrievers.options import option_rows
from realrecall.evaluate.retrievers.registry import CUSTOM, options_help
from realrecall.pipeline.config import load_pipeline_config
from support import cli


def options(name: str, given: dict[str, object], **kwargs: object) -> object:
    return make_options(RETRIEVERS[name], given, **kwargs)  # type: ignore[arg-type]


def test_text_is_converted_by_each_field_type() -> None:
    assert options("bm25", {"k1": "1.2", "b": "1", "method": "atire", "stemmer": "none"}) == BM25Options(
        k1=1.2, b=1.0, method="atire", stemmer=None
    )
    assert options("local-dense", {"local_model": "models/mini", "batch_size": " 8 "}) == LocalDenseOptions(
        local_model=Path("models/mini"), batch_size=8
    )
    assert options("hybrid", {"rrf_k": "10", "stopwords": "None"}) == HybridOptions(rrf_k=10, stopwords=None)


def test_typed_values_are_taken_as_they_are_and_ints_serve_as_floats() -> None:
    assert options("bm25", {"k1": 2, "stemmer": None}) == BM25Options(k1=2.0, stemmer=None)
    built = options("bm25", {"k1": 2})
    assert isinstance(built, BM25Options)
    assert isinstance(built.k1, float)


@pytest.mark.parametrize(
    ("name", "given", "expected"),
    [
        ("bm25", {"k1": "high"}, "retriever bm25 option k1 must be a number, got 'high'; e.g. k1=0.5"),
        ("bm25", {"k1": "nan"}, "retriever bm25 option k1 must be a number, got 'nan'; e.g. k1=0.5"),
        ("bm25", {"k1": True}, "retriever bm25 option k1 must be a number, got True; e.g. k1=0.5"),
        ("bm25", {"method": None}, "retriever bm25 option method must be text, got None; e.g. method=text"),
        (
            "local-dense",
            {"batch_size": "2.5"},
            "retriever local-dense option batch_size must be an integer, got '2.5'; e.g. batch_size=10",
        ),
        (
            "dense",
            {"embedder": "my-model"},
            "retriever dense option embedder must be a Python object (Python only) or none, got 'my-model'; "
            "give embedder in Python, as DenseOptions",
        ),
    ],
)
def test_a_bad_value_names_the_retriever_the_key_and_the_expected_type(
    name: str, given: dict[str, object], expected: str
) -> None:
    with pytest.raises(InputError) as caught:
        options(name, given)
    assert str(caught.value) == expected


def test_an_unknown_key_names_the_retriever_and_its_valid_options() -> None:
    with pytest.raises(InputError) as caught:
        options("bm25", {"k2": "1"})
    assert str(caught.value) == (
        "retriever bm25 has no option 'k2' (its options: k1, b, method, stemmer, stopwords); "
        "did you mean 'k1'?"
    )


def test_a_run_setting_given_as_an_option_points_to_its_flag() -> None:
    with pytest.raises(InputError) as caught:
        options("bm25", {"workers": "4"})
    assert str(caught.value).endswith(
        "workers is a setting of the run, not a retriever option: use --workers"
    )


def test_values_the_options_refuse_are_input_errors_too() -> None:
    with pytest.raises(InputError, match="unknown BM25 method 'okapi'; choose from lucene, robertson, atire"):
        options("bm25", {"method": "okapi"})
    with pytest.raises(InputError, match=r"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1=0.9, b=2.0"):
        options("hybrid", {"b": "2"})


def test_an_options_instance_of_another_retriever_is_refused(pets_corpus: Corpus) -> None:
    with pytest.raises(InputError, match="options of retriever bm25 must be a BM25Options or a mapping"):
        build_retriever("bm25", pets_corpus, options=DenseOptions())


def test_defaults_reach_only_retrievers_with_that_option_and_never_override() -> None:
    defaults = {"embed_model": "small", "dense_component": "dense"}
    assert options("bm25", {}, defaults=defaults) == BM25Options()
    assert options("dense", {}, defaults=defaults) == DenseOptions(embed_model="small")
    hybrid = options("hybrid", {"embed_model": "large"}, defaults=defaults)
    assert hybrid == HybridOptions(embed_model="large", dense_component="dense")


def test_relative_paths_are_read_from_the_base_folder(tmp_path: Path) -> None:
    built = options("local-dense", {"local_model": "models/mini"}, base=tmp_path)
    assert built == LocalDenseOptions(local_model=tmp_path / "models" / "mini")
    absolute = options("local-dense", {"local_model": "/opt/mini"}, base=tmp_path)
    assert absolute == LocalDenseOptions(local_model=Path("/opt/mini"))


def test_hybrid_passes_its_component_options_on(pets_corpus: Corpus, tmp_path: Path) -> None:
    retriever = build_retriever(
        "hybrid",
        pets_corpus,
        options={"dense_component": "dense", "embedder": HashingEmbedder(), "k1": "1.5", "stemmer": "none"},
    )
    assert "k1=1.5" in retriever.description
    assert "stemmer=none" in retriever.description
    assert "fake-hashing-64" in retriever.description


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["k1"], "--retriever-option 'k1' is not KEY=VALUE; write e.g. --retriever-option k1=1.2"),
        (["=1"], "--retriever-option '=1' is not KEY=VALUE"),
        (["k1=1", "k1=2"], "--retriever-option k1 is given twice; give each option once"),
    ],
)
def test_option_assignments_are_key_equals_value(values: list[str], expected: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_option_assignments(values)
    assert str(caught.value).startswith(expected)


def test_option_assignments_keep_everything_after_the_first_equals_sign() -> None:
    assert parse_option_assignments(["base_url=http://h/v1?a=b", "stemmer="]) == {
        "base_url": "http://h/v1?a=b",
        "stemmer": "",
    }


def test_a_custom_function_named_twice_is_refused(pets_corpus: Corpus) -> None:
    with pytest.raises(InputError, match="was also given the option function='other:f'"):
        build_retriever("mine:search", pets_corpus, options={"function": "other:f"})


def test_help_lists_each_retrievers_own_options_from_the_registry() -> None:
    parts = options_help().split("; ")
    # One part per registered retriever, in the registry's order, whatever retrievers it holds.
    assert [part.partition(": ")[0] for part in parts] == list(RETRIEVERS)
    assert "bm25: k1, b, method, stemmer, stopwords" in parts
    assert "hybrid: dense_component, rrf_k, fusion_depth and its parts' options" in parts
    assert "dense: embed_model, base_url" in parts  # llm_config and embedder are Python only


def test_every_option_has_help() -> None:
    # docs/retrievers.md's options tables are made of these rows (tests/test_docs_tables.py).
    for spec in [*RETRIEVERS.values(), CUSTOM]:
        for name, _, _, help_text in option_rows(spec):
            assert help_text, f"{spec.name} option {name} has no help"


# The command line -------------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    corpus, gold = tmp_path / "corpus.jsonl", tmp_path / "gold.jsonl"
    texts = {"c1": "Cats purr when content.", "c2": "Dogs bark at strangers.", "c3": "Fish swim."}
    corpus.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in texts.items()))
    gold.write_text(json.dumps({"query_id": "q1", "query": "do dogs bark", "gold_ids": ["c2"]}) + "\n")
    return {"corpus": corpus, "gold": gold, "results": tmp_path / "results.json"}


def evaluate_args(files: dict[str, Path], *extra: str) -> list[str]:
    return [
        "evaluate", "--corpus", str(files["corpus"]), "--gold", str(files["gold"]), "--k", "1",
        "-o", str(files["results"]), *extra,
    ]  # fmt: skip


def test_evaluate_passes_retriever_options_to_the_retriever(files: dict[str, Path]) -> None:
    options = ["--retriever-option", "k1=1.5", "--retriever-option", "stemmer=none"]
    done = cli.run(*evaluate_args(files, *options))
    assert done.returncode == 0, done.stderr
    description = json.loads(files["results"].read_text())["retriever"]["description"]
    assert "k1=1.5 b=0.4 method=lucene stemmer=none" in description


def test_evaluate_refuses_an_unknown_retriever_option_in_one_line(files: dict[str, Path]) -> None:
    done = cli.run(*evaluate_args(files, "--retriever-option", "k=3"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: retriever bm25 has no option 'k' (its options: k1, b, method, stemmer, stopwords); "
        "did you mean 'k1'?"
    ]
    assert not files["results"].exists()


def test_evaluate_refuses_retriever_options_with_a_run(files: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 c2 1 1.0 x\n")
    done = cli.run(*evaluate_args(files, "--run", str(run), "--retriever-option", "k1=1"))
    assert done.returncode == 2
    assert "give --run or --retriever-option, not both" in done.stderr


def test_the_older_hybrid_dense_flag_still_reaches_hybrid(files: dict[str, Path]) -> None:
    done = cli.run(*evaluate_args(files, "--retriever", "hybrid", "--hybrid-dense", "sparse"))
    assert done.returncode == 2
    assert "unknown dense component 'sparse' for hybrid" in done.stderr


def test_calibrate_one_call_passes_retriever_options(files: dict[str, Path], tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text(json.dumps({"query_id": "r1", "query": "cats purr", "gold_ids": ["c1"]}) + "\n")
    args = [
        "calibrate", "--synthetic", str(files["gold"]), "--real", str(real), "--corpus", str(files["corpus"]),
        "--k", "1,10", "--format", "json",
    ]  # fmt: skip
    refused = cli.run(*args, "--retriever-option", "b=7")
    assert refused.returncode == 2
    assert "BM25 needs k1 >= 0 and 0 <= b <= 1, got k1=0.9, b=7.0" in refused.stderr
    done = cli.run(*args, "--retriever-option", "k1=1.1")
    assert done.returncode == 0, done.stderr
    assert "k1=1.1" in done.stdout


# pipeline.toml ----------------------------------------------------------------------------------

BASE = "[corpus]\npath = 'c.jsonl'\n[generate]\noutput = 's.jsonl'\n[evaluate]\nk = [1, 10]\n"


def test_an_evaluate_retriever_table_gives_the_name_and_the_options(tmp_path: Path) -> None:
    path = tmp_path / "pipeline.toml"
    path.write_text(BASE + "[evaluate.retriever]\nname = 'local-dense'\nlocal_model = 'models/mini'\n")
    config = load_pipeline_config(path)
    assert config.evaluate.retriever == "local-dense"
    assert config.evaluate.retriever_options == {"local_model": tmp_path / "models" / "mini"}


def test_the_table_name_defaults_to_bm25_and_embed_model_of_evaluate_still_counts(tmp_path: Path) -> None:
    path = tmp_path / "pipeline.toml"
    path.write_text(BASE + "[evaluate.retriever]\nk1 = 1.2\nstemmer = 'none'\n")
    config = load_pipeline_config(path)
    assert (config.evaluate.retriever, config.evaluate.retriever_options) == (
        "bm25",
        {"k1": 1.2, "stemmer": None},
    )
    path.write_text(
        BASE + "embed_model = 'small'\nretriever = { name = 'dense', base_url = 'http://h/v1' }\n"
    )
    config = load_pipeline_config(path)
    assert (config.evaluate.embed_model, config.evaluate.retriever_options) == (
        "small",
        {"base_url": "http://h/v1"},
    )


def test_the_scheduled_job_builds_the_retriever_with_the_table_options(tmp_path: Path) -> None:
    from realrecall.pipeline.run import run_pipeline

    texts = {"c1": "Cats purr when content.", "c2": "Dogs bark at strangers.", "c3": "Fish swim in bowls."}
    (tmp_path / "c.jsonl").write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in texts.items())
    )
    path = tmp_path / "pipeline.toml"
    path.write_text(
        BASE.replace("output = 's.jsonl'", "output = 's.jsonl'\nbackend = 'extractive'")
        + "[evaluate.retriever]\nname = 'bm25'\nk1 = 1.3\nmethod = 'atire'\n"
    )
    result = run_pipeline(load_pipeline_config(path))
    description = json.loads(result.results_path.read_text())["retriever"]["description"]
    assert "k1=1.3 b=0.4 method=atire" in description


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        (
            "name = 'bm25'\nk2 = 1\n",
            ":9: [evaluate.retriever] retriever bm25 has no option 'k2' "
            "(its options: k1, b, method, stemmer, stopwords); did you mean 'k1'?",
        ),
        ("name = 'bm25'\nb = 'wide'\n", ":9: [evaluate.retriever] retriever bm25 option b must be a number"),
        ("name = 'bm52'\n", ":8: [evaluate] retriever 'bm52' is unknown; choose from bm25, dense"),
        ("name = 'dense'\n", "[evaluate] retriever dense needs embed_model"),
    ],
)
def test_mistakes_in_the_table_name_the_file_and_the_line(tmp_path: Path, table: str, expected: str) -> None:
    path = tmp_path / "pipeline.toml"
    path.write_text(BASE + "[evaluate.retriever]\n" + table)
    with pytest.raises(InputError) as caught:
        load_pipeline_config(path)
    assert str(caught.value).startswith(str(path))
    assert expected in str(caught.value)


def test_run_settings_take_a_cache_folder_given_as_text(tmp_path) -> None:
    from pathlib import Path

    from realrecall.errors import InputError
    from realrecall.evaluate.retrievers import RunSettings

    assert RunSettings(cache_dir=str(tmp_path)).resolved_cache_dir == Path(tmp_path)
    with pytest.raises(InputError, match="cache_dir must be a path or none, got 3"):
        RunSettings(cache_dir=3)  # type: ignore[arg-type]
