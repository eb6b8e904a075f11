"""The Ray engine on a real local cluster: the same figures as the local engine, and actors that die.

Every test that needs a cluster is in this file and uses the session's one (``ray_cluster``, in
conftest.py): pytest-xdist gives a file to one worker, so no other worker starts a second.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from generate.fakes import make_corpus
from realrecall.engine import EngineSettings
from realrecall.errors import EngineError, InputError, UserCodeError
from realrecall.evaluate import evaluate, evaluate_files, load_results
from realrecall.generate import GenerateConfig, generate
from realrecall.gold import load_gold
from realrecall.llm import LLMConfig, OpenAIChatClient
from realrecall.pipeline.config import load_pipeline_config
from realrecall.pipeline.demo import sample_data_dir
from realrecall.pipeline.run import run_pipeline, run_pipelines
from realrecall.runs import Run
from support.dying_client import AlwaysDyingChatClient, DyingChatClient
from support.fake_openai import FakeOpenAI
from support.questions import http_question_handler

pytest.importorskip("ray", reason="the Ray engine's tests need the extra: pip install 'realrecall[ray]'")
pytestmark = pytest.mark.slow  # each test a Ray job (seconds): the file starts early

RAY = EngineSettings(engine="ray", actor_retries=2)
ON_RAY: dict[str, Any] = {"engine": "ray", "actor_retries": 2}  # evaluate's keywords for RAY
SAMPLE = sample_data_dir()


def without_created_and_engine(results: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in results.items() if key not in ("created", "engine")}


def per_query(result: Any) -> dict[tuple[str, str], dict[str, float]]:
    return {(q.gold_set, q.query_id): dict(q.metrics) for q in result.queries}


@pytest.mark.reference_data
def test_bm25_on_ray_gives_every_scifact_query_the_local_engines_values(ray_cluster, reference_data):
    scifact = reference_data / "scifact"
    gold = [scifact]
    options: dict[str, Any] = {"corpus": scifact / "corpus.jsonl", "k": (1, 10, 100)}
    local = evaluate_files(gold, **options)
    on_ray = evaluate_files(gold, **options, **ON_RAY)

    assert len(local.queries) == 300
    assert per_query(on_ray) == per_query(local)  # exact floats, not approximately
    assert [q.top for q in on_ray.queries] == [q.top for q in local.queries]
    assert without_created_and_engine(on_ray.to_dict()) == without_created_and_engine(local.to_dict())


def test_a_run_with_tied_scores_is_scored_on_ray_as_locally(ray_cluster):
    gold = load_gold(SAMPLE / "real_questions.jsonl", origin="real")
    ids = [chunk_id for query in gold for chunk_id in query.gold][:40]
    # Every query ranks the same 40 chunks with three scores only: ties everywhere, broken by id.
    run = Run.from_scores({q.query_id: {pid: float(i % 3) for i, pid in enumerate(ids)} for q in gold})
    options: dict[str, Any] = {"run": run, "metrics": ("recall@5", "mrr@10", "ndcg@10", "recall@40")}
    assert per_query(evaluate(gold, **options, **ON_RAY)) == per_query(evaluate(gold, **options))


def test_a_custom_retrievers_error_on_ray_is_the_local_engines_one_line(ray_cluster, tmp_path):
    code = tmp_path / "broken.py"
    code.write_text("def search(query, k):\n    raise ValueError('no index here')\n")
    gold = [(SAMPLE / "real_questions.jsonl", "real")]
    options: dict[str, Any] = {"corpus": SAMPLE / "docs_corpus.jsonl", "retriever": f"{code}:search"}
    with pytest.raises(UserCodeError) as local:
        evaluate_files(gold, **options)
    with pytest.raises(UserCodeError) as on_ray:
        evaluate_files(gold, **options, **ON_RAY, retrieval_actors=1)
    assert str(on_ray.value) == str(local.value)


def test_a_bad_retriever_option_is_refused_before_any_ray_work(ray_cluster):
    with pytest.raises(InputError, match="k1"):
        evaluate_files(
            [SAMPLE / "real_questions.jsonl"],
            corpus=SAMPLE / "docs_corpus.jsonl",
            retriever_options={"k1": "-1"},
            engine="ray",
            address="127.0.0.1:9",
        )


@pytest.fixture
def server(fake_openai: FakeOpenAI) -> FakeOpenAI:
    fake_openai.chat_handler = http_question_handler
    return fake_openai


def llm_config(server: FakeOpenAI) -> LLMConfig:
    return LLMConfig(base_url=server.base_url, timeout=5.0, max_attempts=2, max_wait=0.1, initial_wait=0.01)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def test_generation_survives_a_killed_actor_with_each_request_sent_once_and_a_rerun_sends_none(
    ray_cluster, server, tmp_path
):
    # One request at a time, so the actor that dies holds no other request the endpoint has seen; one
    # actor (the pool's spreading is the duplicates test's): Ray restarts it in a new process.
    one_actor = dataclasses.replace(RAY, generation_actors=1)
    config = GenerateConfig(per_chunk=2, strategy="direct", concurrency=1, engine_settings=one_actor)
    marker = tmp_path / "died"
    client = DyingChatClient(llm_config(server), marker=marker, die_at=3)
    output = tmp_path / "synthetic.jsonl"
    summary = generate(make_corpus(6), output, config, client=client)

    assert marker.exists()  # an actor died with a request in hand
    bodies = server.bodies("chat")
    unique = {json.dumps([body["messages"], body.get("seed")], sort_keys=True) for body in bodies}
    assert len(bodies) == len(unique) == 12  # each slot's request sent once, the lost one again
    written = lines(output)
    assert summary.total == len(written) == 12
    assert len({record["query_id"] for record in written}) == 12
    assert len({record["query"] for record in written}) == 12

    again = generate(make_corpus(6), output, config, client=client)
    assert server.count("chat") == 12
    assert again.kept == 12
    assert lines(output) == written


def test_an_actor_that_keeps_dying_stops_generation_in_one_line_keeping_only_whole_records(
    ray_cluster, server, tmp_path
):
    output = tmp_path / "synthetic.jsonl"
    once = EngineSettings(engine="ray", actor_retries=1, generation_actors=1)  # a process a death: few
    with pytest.raises(EngineError, match="died 2 times") as failure:
        generate(
            make_corpus(2),
            output,
            GenerateConfig(strategy="direct", concurrency=1, engine_settings=once),
            client=AlwaysDyingChatClient(),
        )
    assert "\n" not in str(failure.value)
    # As a local run stopped there leaves it: the output opened, no answer came back, nothing written.
    assert output.read_text("utf-8") == ""


def test_duplicates_answered_to_different_actors_are_caught_on_the_driver(ray_cluster, server, tmp_path):
    # Every other slot is answered with the same question: the slots go to both actors of the pool,
    # and the one near-duplicate index, on the driver, sees them all.
    def handler(body: dict[str, Any]) -> str:
        seed = int(body.get("seed") or 0)
        return (
            json.dumps({"question": "why does my printer keep jamming on the second page?"})
            if seed % 2
            else (http_question_handler(body))
        )

    server.chat_handler = handler
    config = GenerateConfig(per_chunk=2, strategy="direct", concurrency=4, max_attempts=1)
    client = OpenAIChatClient(llm_config(server))
    local = generate(make_corpus(6), tmp_path / "local.jsonl", config, client=client)
    on_ray_config = dataclasses.replace(config, engine_settings=RAY)
    on_ray = generate(make_corpus(6), tmp_path / "ray.jsonl", on_ray_config, client=client)

    queries = [record["query"] for record in lines(tmp_path / "ray.jsonl")]
    assert len(queries) == len(set(queries))
    assert on_ray.filtered.get("near_duplicate", 0) == local.filtered.get("near_duplicate", 0) > 0
    assert on_ray.total == local.total


PIPELINE = """
[corpus]
path = "{corpus}"
[real]
path = "{real}"
date = "2026-11-30"
[generate]
output = "synthetic.jsonl"
backend = "extractive"
[evaluate]
k = [1, 3]
by = ["type"]
[calibrate]
metric = "recall@3"
[engine]
engine = "ray"
actor_retries = 1
retrieval_actors = 1
"""


def test_pipelines_on_ray_one_or_together_write_the_local_runs_results_but_created_and_engine(
    ray_cluster, tmp_path
):
    inputs = {"corpus": SAMPLE / "docs_corpus.jsonl", "real": SAMPLE / "real_questions.jsonl"}
    configs = []
    for name, k in (("a", "[1, 3]"), ("b", "[3, 5]")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "pipeline.toml").write_text(PIPELINE.format(**inputs).replace("[1, 3]", k), "utf-8")
        configs.append(load_pipeline_config(folder / "pipeline.toml"))
    assert all(config.engine.on_ray for config in configs)
    local = [dataclasses.replace(config, engine=EngineSettings()) for config in configs]
    written: dict[str, list[dict[str, Any]]] = {}
    # The same jobs (same outputs) on each engine in turn: the later runs' generation is the first's.
    # One pipeline is one Ray Data job in this process; several are one Ray task a pipeline.
    done = run_pipelines(local)
    written["local"] = [json.loads(result.results_path.read_text("utf-8")) for result in done]
    one = run_pipeline(configs[0])
    written["ray, one"] = [json.loads(one.results_path.read_text("utf-8"))]
    assert load_results(one.results_path).engine == "ray"
    done = run_pipelines(configs)
    written["ray"] = [json.loads(result.results_path.read_text("utf-8")) for result in done]

    assert [results["engine"] for results in written["ray"]] == ["ray", "ray"]
    assert written["ray, one"][0]["engine"] == "ray"
    assert "engine" not in written["local"][0]
    # Each pipeline scored by its own settings: its own cut-offs.
    first, second = (results["metrics"] for results in written["ray"])
    assert "recall@1" in first
    assert "recall@5" not in first
    assert "recall@5" in second
    assert "recall@1" not in second
    assert [without_created_and_engine(r) for r in written["ray"]] == [
        without_created_and_engine(r) for r in written["local"]
    ]
    assert without_created_and_engine(written["ray, one"][0]) == without_created_and_engine(
        written["local"][0]
    )


def cached_vectors(folder: Path) -> dict[tuple[str, str], bytes]:
    with contextlib.closing(sqlite3.connect(folder / "embeddings.sqlite3")) as connection:
        rows = connection.execute("SELECT model, text_sha256, vector FROM embeddings").fetchall()
    return {(model, key): vector for model, key, vector in rows}


def test_local_dense_on_ray_embeds_in_actors_the_local_engines_vectors_bit_for_bit(ray_cluster, tmp_path):
    pytest.importorskip("sentence_transformers", reason="local-dense needs realrecall[local]")
    # A small corpus (MiniLM embeds tens of chunks a second on 2 CPUs) and the real questions on it.
    chunks = lines(SAMPLE / "docs_corpus.jsonl")[:24]
    kept = {chunk["id"] for chunk in chunks}
    questions = [q for q in lines(SAMPLE / "real_questions.jsonl") if set(q["gold"]) <= kept]
    corpus, gold = tmp_path / "corpus.jsonl", tmp_path / "real.jsonl"
    corpus.write_text("".join(json.dumps(chunk) + "\n" for chunk in chunks), "utf-8")
    gold.write_text("".join(json.dumps(q) + "\n" for q in questions), "utf-8")
    options: dict[str, Any] = {"corpus": corpus, "retriever": "local-dense", "k": (1, 5)}
    loaded_before = "sentence_transformers" in sys.modules
    bars: dict[str, list[tuple[int, int]]] = {"embedding": [], "retrieving": []}

    on_ray = evaluate_files(
        [gold], **options, **ON_RAY, cache_dir=tmp_path / "ray",
        index_progress=lambda *done: bars["embedding"].append(done),
        progress=lambda *done: bars["retrieving"].append(done),
    )  # fmt: skip
    if not loaded_before:  # the model was loaded in the actors only, never in this process
        assert "sentence_transformers" not in sys.modules
    local = evaluate_files([gold], **options, cache_dir=tmp_path / "local")

    assert len(questions) == 11
    # Each engine's cache holds the vector of every chunk and query it embedded: the same bytes.
    assert len(cached_vectors(tmp_path / "local")) == len(chunks) + len(questions)
    assert cached_vectors(tmp_path / "ray") == cached_vectors(tmp_path / "local")
    assert per_query(on_ray) == per_query(local)
    assert [q.top for q in on_ray.queries] == [q.top for q in local.queries]
    assert without_created_and_engine(on_ray.to_dict()) == without_created_and_engine(local.to_dict())
    # The bars, fed from the driver: the corpus's chunks, then the queries.
    assert bars["embedding"][0] == (0, len(chunks))
    assert bars["embedding"][-1] == (len(chunks), len(chunks))
    assert bars["retrieving"] == [(0, len(questions)), (len(questions), len(questions))]


# A custom retriever whose process exits on its first search while the marker file is missing (it
# creates it first): one retrieval actor dies once, holding a part that Ray must search again.
DYING_RETRIEVER = """
import json, os
MARKER = {marker!r}
CHUNKS = [json.loads(line) for line in open({corpus!r}, encoding="utf-8")]
def search(query, k):
    if {always!r} or not os.path.exists(MARKER):
        open(MARKER, "w").write(str(os.getpid()))
        os._exit(1)
    words = set(query.lower().split())
    shared = lambda chunk: len(words & set(chunk["text"].lower().split()))
    return [chunk["id"] for chunk in sorted(CHUNKS, key=lambda chunk: (-shared(chunk), chunk["id"]))[:k]]
"""


def dying_retriever(tmp_path: Path, *, always: bool) -> tuple[Path, str]:
    marker, code = tmp_path / "died", tmp_path / "dying.py"
    corpus = str(SAMPLE / "docs_corpus.jsonl")
    code.write_text(DYING_RETRIEVER.format(marker=str(marker), corpus=corpus, always=always), "utf-8")
    return marker, f"{code}:search"


def test_a_retrieval_actor_that_dies_is_restarted_and_its_part_searched_again(ray_cluster, tmp_path):
    marker, retriever = dying_retriever(tmp_path, always=False)
    gold = [(SAMPLE / "real_questions.jsonl", "real")]
    options: dict[str, Any] = {"corpus": SAMPLE / "docs_corpus.jsonl", "retriever": retriever, "k": (1, 5)}
    on_ray = evaluate_files(gold, **options, **ON_RAY, retrieval_actors=1)
    assert marker.exists()  # an actor died with a part in hand
    local = evaluate_files(gold, **options)  # the marker exists: here, nothing dies
    assert per_query(on_ray) == per_query(local)
    assert without_created_and_engine(on_ray.to_dict()) == without_created_and_engine(local.to_dict())


def test_a_retrieval_actor_that_keeps_dying_stops_evaluate_in_one_line(ray_cluster, tmp_path):
    _, retriever = dying_retriever(tmp_path, always=True)
    with pytest.raises(EngineError, match="a Ray worker of the retrieval died 2 times") as failure:
        evaluate_files(
            [SAMPLE / "real_questions.jsonl"],
            corpus=SAMPLE / "docs_corpus.jsonl",
            retriever=retriever,
            engine="ray",
            actor_retries=1,
            retrieval_actors=1,
        )
    assert "\n" not in str(failure.value)


def free_cpus_again() -> bool:
    """Whether every CPU of the session's cluster is free within a minute (an interrupted job's actors
    stopped): polled, since Ray releases an actor's CPU once its process has gone."""
    import ray

    for _ in range(600):
        if ray.available_resources().get("CPU", 0) == ray.cluster_resources().get("CPU"):
            return True
        time.sleep(0.1)
    return False


def test_ctrl_c_during_retrieval_on_ray_stops_the_job_and_frees_the_cluster(ray_cluster, tmp_path):
    pressed: list[int] = []

    def interrupt(done: int, total: int) -> None:
        if done > 0 and not pressed:  # the first part is back, the others being searched: Ctrl-C
            pressed.append(done)
            raise KeyboardInterrupt

    gold = [(SAMPLE / "real_questions.jsonl", "real")]
    with pytest.raises(KeyboardInterrupt):
        evaluate_files(
            gold, corpus=SAMPLE / "docs_corpus.jsonl", progress=interrupt, retrieval_actors=2, **ON_RAY
        )
    assert free_cpus_again()


def test_ctrl_c_during_generation_on_ray_leaves_whole_records_and_a_rerun_sends_only_the_rest(
    ray_cluster, server, tmp_path
):
    pressed: list[int] = []

    def interrupt(progress: Any) -> None:
        if progress.done >= 4 and not pressed:  # Ctrl-C, once
            pressed.append(progress.done)
            raise KeyboardInterrupt

    one_actor = dataclasses.replace(RAY, generation_actors=1)
    config = GenerateConfig(per_chunk=2, strategy="direct", concurrency=2, engine_settings=one_actor)
    client = OpenAIChatClient(llm_config(server))
    output = tmp_path / "synthetic.jsonl"
    with pytest.raises(KeyboardInterrupt):
        generate(make_corpus(6), output, config, client=client, progress=interrupt)
    assert free_cpus_again()
    kept = lines(output)  # as a local run stopped there: whole records only, each slot once
    assert 4 <= len(kept) < 12
    assert len({record["query_id"] for record in kept}) == len(kept)

    summary = generate(make_corpus(6), output, config, client=client)
    bodies = server.bodies("chat")
    unique = {json.dumps([body["messages"], body.get("seed")], sort_keys=True) for body in bodies}
    assert summary.total == len(lines(output)) == 12
    assert len(unique) == 12  # no slot's request sent twice with the same seed


def embedded_texts(server: FakeOpenAI) -> list[str]:
    inputs = [body["input"] for body in server.bodies("embeddings")]
    return sorted(text for item in inputs for text in ([item] if isinstance(item, str) else item))


def test_dense_on_ray_sends_the_corpus_to_the_endpoint_once_as_the_local_engine_does(
    ray_cluster, fake_openai, tmp_path
):
    gold = [(SAMPLE / "real_questions.jsonl", "real")]
    options: dict[str, Any] = {
        "corpus": SAMPLE / "docs_corpus.jsonl",
        "retriever": "dense",
        "retriever_options": {"embed_model": "text-embedding-3-small", "base_url": fake_openai.base_url},
        "k": (1, 5),
    }
    local = evaluate_files(gold, **options, cache_dir=tmp_path / "local")
    sent_locally = embedded_texts(fake_openai)
    on_ray = evaluate_files(gold, **options, **ON_RAY, cache_dir=tmp_path / "ray")
    sent = embedded_texts(fake_openai)

    # The corpus embedded once, on the driver (not once a retrieval actor), the queries in the actors.
    assert len(sent_locally) == len(lines(SAMPLE / "docs_corpus.jsonl")) + len(local.queries)
    assert sorted(sent_locally + sent_locally) == sent
    assert per_query(on_ray) == per_query(local)
    assert without_created_and_engine(on_ray.to_dict()) == without_created_and_engine(local.to_dict())
