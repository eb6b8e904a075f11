"""`realrecall generate` on the command line (offline backend; the HTTP tests drive the llm backend)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import cli

TEXT = (
    "The VPN client disconnects after ten minutes of idle time. Set keepalive to 60 in vpn.conf to stop it."
)


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    path = tmp_path / "chunks.jsonl"
    rows = [{"id": f"c{i}", "text": f"{TEXT} Office {i} uses gateway number {i * 7}."} for i in range(4)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def invoke(*args: str) -> cli.Result:
    return cli.run("generate", *args)


def test_extractive_run_writes_a_gold_set_and_a_summary(corpus_file, tmp_path):
    output = tmp_path / "synthetic.jsonl"
    result = invoke("--corpus", str(corpus_file), "--output", str(output), "--backend", "extractive")
    assert result.returncode == 0, result.stderr
    assert "4 questions for 4 chunks (added 4, kept 0, removed 0)" in result.stdout
    lines = output.read_text().splitlines()
    assert len(lines) == 4
    assert json.loads(lines[0])["origin"] == "synthetic"
    rerun = invoke("--corpus", str(corpus_file), "--output", str(output), "--backend", "extractive")
    assert "(added 0, kept 4, removed 0)" in rerun.stdout


def test_dry_run_prints_requests_tokens_and_cost_method(corpus_file, tmp_path):
    result = invoke(
        "--corpus",
        str(corpus_file),
        "--output",
        str(tmp_path / "s.jsonl"),
        "--dry-run",
        "--per-chunk",
        "2",
        "--price-in",
        "0.15",
        "--price-out",
        "0.6",
        "--strategy",
        "direct",  # one request a question (situation-first: two; see test_prompting.py)
    )
    assert result.returncode == 0, result.stderr
    assert "requests: 8" in result.stdout
    assert "characters a token" in result.stdout or "tiktoken" in result.stdout
    assert not (tmp_path / "s.jsonl").exists()


def test_missing_corpus_exits_2_naming_the_file(tmp_path):
    result = invoke("--corpus", str(tmp_path / "nope.jsonl"), "--output", str(tmp_path / "s.jsonl"))
    assert result.returncode == 2
    assert "nope.jsonl: file not found" in result.stderr


def test_unknown_question_type_exits_2(corpus_file, tmp_path):
    result = invoke("--corpus", str(corpus_file), "--output", str(tmp_path / "s.jsonl"), "--types", "riddle")
    assert result.returncode == 2
    assert "unknown question type 'riddle'" in result.stderr


def test_malformed_corpus_line_exits_2_with_its_line(tmp_path):
    corpus = tmp_path / "bad.jsonl"
    corpus.write_text('{"id": "a", "text": "fine"}\n{"id": "b", "text": \n')
    result = invoke("--corpus", str(corpus), "--output", str(tmp_path / "s.jsonl"), "--backend", "extractive")
    assert result.returncode == 2
    assert "bad.jsonl:2: malformed JSON" in result.stderr


def test_run_that_keeps_nothing_exits_1(corpus_file, tmp_path):
    result = invoke(
        "--corpus",
        str(corpus_file),
        "--output",
        str(tmp_path / "s.jsonl"),
        "--backend",
        "extractive",
        "--max-overlap",
        "0.2",
    )
    assert result.returncode == 1
    assert "no question was kept" in result.stderr


# -- outputs that would overwrite an input, bad values: one line, exit 2, before any work ------------------


def one_line_error(result: cli.Result) -> str:
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    return lines[0]


@pytest.mark.parametrize("flag", ["--corpus", "--style-examples"])
def test_output_equal_to_an_input_is_refused_and_the_input_left_alone(corpus_file, tmp_path, flag):
    gold = tmp_path / "real.jsonl"
    gold.write_text(
        json.dumps({"query_id": "r1", "query": "how do I stop the vpn dropping?", "gold": {"c0": 1}}) + "\n"
    )
    target = corpus_file if flag == "--corpus" else gold
    before = {path: path.read_bytes() for path in (corpus_file, gold)}
    result = invoke(
        "--corpus",
        str(corpus_file),
        "--style-examples",
        str(gold),
        "--output",
        str(target),
        "--backend",
        "extractive",
    )
    line = one_line_error(result)
    assert line == f"error: --output {target} is the same file as {flag} {target}; " + (
        "write the output to another file; the input is left as it is"
    )
    assert {path: path.read_bytes() for path in before} == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["chunks.jsonl", "real.jsonl"]


def test_output_through_a_symlink_to_the_corpus_is_refused(corpus_file, tmp_path):
    link = tmp_path / "link.jsonl"
    link.symlink_to(corpus_file)
    before = corpus_file.read_bytes()
    line = one_line_error(
        invoke("--corpus", str(corpus_file), "--output", str(link), "--backend", "extractive")
    )
    assert "is the same file as --corpus" in line
    assert corpus_file.read_bytes() == before


def test_cache_equal_to_the_output_is_refused(corpus_file, tmp_path):
    output = tmp_path / "s.jsonl"
    line = one_line_error(
        invoke(
            "--corpus",
            str(corpus_file),
            "--output",
            str(output),
            "--cache",
            str(output),
            "--backend",
            "extractive",
        )
    )
    assert f"--cache {output} is the same file as --output {output}" in line
    assert not output.exists()


def test_output_naming_a_folder_is_one_line(corpus_file, tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    line = one_line_error(invoke("--corpus", str(corpus_file), "--output", str(folder), "--dry-run"))
    assert line == f"error: {folder}: is a folder, not a file; name a file inside it"


@pytest.mark.parametrize("seconds", ["0", "-5", "nan", "inf"])
def test_request_timeout_must_be_positive(corpus_file, tmp_path, seconds):
    line = one_line_error(
        invoke(
            "--corpus", str(corpus_file), "--output", str(tmp_path / "s.jsonl"), "--request-timeout", seconds
        )
    )
    assert line.startswith("error: --request-timeout must be a number of seconds > 0, got ")
    assert not (tmp_path / "s.jsonl").exists()


def test_request_timeout_reaches_the_model_client(corpus_file, tmp_path, monkeypatch):
    import realrecall.llm
    from generate.fakes import FakeChatClient

    configs = []

    def client(config):
        configs.append(config)
        return FakeChatClient()

    monkeypatch.setattr(realrecall.llm, "DeferredChatClient", client, raising=False)
    result = invoke(
        "--corpus", str(corpus_file), "--output", str(tmp_path / "s.jsonl"), "--request-timeout", "7.5"
    )
    assert result.returncode == 0, result.stderr
    assert [config.timeout for config in configs] == [7.5]


def test_poll_interval_must_be_positive(corpus_file, tmp_path):
    line = one_line_error(
        invoke(
            "--corpus",
            str(corpus_file),
            "--output",
            str(tmp_path / "s.jsonl"),
            "--batch",
            "--poll-interval",
            "0",
        )
    )
    assert line == "error: --poll-interval must be a number of seconds > 0, got 0.0; e.g. 30"


# -- user and endpoint text is printed as written, never as markup ----------------------------------------


def test_paths_and_chunk_ids_with_brackets_print_as_written(tmp_path):
    folder = tmp_path / "runs [final] [red]"
    folder.mkdir()
    corpus = folder / "chunks [bold].jsonl"
    rows = [
        {"id": "[/]", "text": f"{TEXT} Office one uses gateway seven."},
        {"id": "[bold]", "text": "ok"},  # no sentence to cut a question from: reported missing by its id
    ]
    corpus.write_text("".join(json.dumps(row) + "\n" for row in rows))
    output = folder / "synthetic [local].jsonl"
    # --no-screen: the screen would skip "ok" (too short) before it could be reported missing.
    result = invoke(
        "--corpus", str(corpus), "--output", str(output), "--backend", "extractive", "--no-screen"
    )
    assert result.returncode == 0, result.stderr
    assert f"{output}: 1 questions for 2 chunks" in result.stdout
    assert "(by chunk: [bold] 1)" in result.stderr


def test_batch_status_from_the_endpoint_prints_as_written(capsys):
    from realrecall.cli.generate import report_batch
    from realrecall.llm import BatchCounts, BatchStatus

    report_batch(BatchStatus("batch_[b]1", "in_progress [/]", None, None, BatchCounts(3, 1, 0)))
    assert capsys.readouterr().err.strip() == "batch batch_[b]1: in_progress [/] (1/3 done, 0 failed)"


@pytest.mark.parametrize("length", [240, 300])
def test_an_output_name_too_long_for_it_or_its_side_files_is_one_line_before_any_work(
    corpus_file, tmp_path, length
):
    output = tmp_path / ("q" * length + ".jsonl")
    line = one_line_error(
        invoke("--corpus", str(corpus_file), "--output", str(output), "--backend", "extractive")
    )
    assert line.startswith(f"error: {output}: ")
    assert "too long" in line
    assert sorted(path.name for path in tmp_path.iterdir()) == ["chunks.jsonl"]
