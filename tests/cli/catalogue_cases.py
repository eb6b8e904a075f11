"""The bad-input catalogue: every command with inputs a new user gets wrong (issue 8).

Every case of ``CASES`` runs in a fresh copy of the workspace (see conftest.py: ``corpus.jsonl``,
``gold.jsonl``, ``synth.jsonl``, ``run.trec``, ``results.json``, ``pipeline.toml``, ...), after
its ``files`` are applied, and must end in exit code 2 with exactly one ``error:`` line on stderr
holding each ``expect`` text, no traceback, and not one byte changed in the workspace (inputs
untouched, no partial output, no stray temp file).

``files`` maps a workspace name to its new content: ``str``/``bytes`` (written as given), ``None``
(deleted), ``FOLDER`` (replaced by an empty folder), ``SYMLINK_TO(name)``/``HARDLINK_TO(name)``,
``COPY_OF(name)``, ``NULL_DEVICE`` (a copy of /dev/null, ``mknod NAME c 1 3``: root only), or a
function of the file's old bytes (to break one line of a valid file).

``ACCEPTED`` holds valid-but-odd inputs that must work (exit 0) and print their brackets as
written; ``WARNED`` holds inputs that may be refused (one-line error) or accepted with a warning,
but never silently. ``KNOWN_FAILURES`` names the cases that fail today, with what happens.
"""

# One case per line reads as a table; wrapping them would hide the columns.
# ruff: noqa: E501

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

# ---------------------------------------------------------------------------------------------------
# How a case changes the workspace


class _Folder:
    def __repr__(self) -> str:
        return "FOLDER"


FOLDER: Final = _Folder()


class _NullDevice:
    def __repr__(self) -> str:
        return "NULL_DEVICE"


NULL_DEVICE: Final = _NullDevice()


@dataclass(frozen=True)
class SYMLINK_TO:  # capitals: reads as a marker in the table
    target: str


@dataclass(frozen=True)
class HARDLINK_TO:
    target: str


@dataclass(frozen=True)
class COPY_OF:
    source: str


Edit = (
    str | bytes | None | _Folder | _NullDevice | SYMLINK_TO | HARDLINK_TO | COPY_OF | Callable[[bytes], bytes]
)


@dataclass(frozen=True)
class Case:
    """One bad input: the command line, what to break first, and what the error line must name."""

    name: str
    args: tuple[str, ...]
    expect: tuple[str, ...] = ()
    files: Mapping[str, Edit] = field(default_factory=dict)
    allowed_before: tuple[str, ...] = ()  # stderr lines allowed before the error (e.g. "warning:")
    server: bool = False  # start the fake OpenAI endpoint first (generate --backend llm)
    unreadable: tuple[str, ...] = ()  # chmod 000 these (skipped as root, who reads anything)
    hide_modules: tuple[str, ...] = ()  # import as if not installed (in-process only)
    needs: tuple[str, ...] = ()  # modules of an extra the case exercises (skipped, with the reason, without)


@dataclass(frozen=True)
class Accepted:
    """A valid input with brackets or other odd text: exit 0, and ``shows`` appear as written."""

    name: str
    args: tuple[str, ...]
    shows: tuple[str, ...] = ()  # each must appear in stdout + stderr exactly as written
    files: Mapping[str, Edit] = field(default_factory=dict)
    before: tuple[tuple[str, ...], ...] = ()  # commands run first (must succeed), e.g. evaluate
    json_stdout: bool = False  # stdout must parse as one JSON document
    writes: tuple[str, ...] = ()  # outputs that must exist afterwards (with the umask's mode)
    rewrites: tuple[str, ...] = ()  # inputs it changes in place on purpose (their mode is kept)


@dataclass(frozen=True)
class Warned:
    """Refused with one ``error:`` line naming ``names``, or accepted with a ``warning:`` line naming it
    (on stderr, or on stdout inside a terminal report such as calibrate's table)."""

    name: str
    args: tuple[str, ...]
    names: str
    files: Mapping[str, Edit] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------------
# Fixture facts (see conftest.py) and the valid command lines the cases start from

Q0_GOLD = "en-getting-started-001"  # gold passage of query q0
OTHER = "en-getting-started-006"  # a corpus passage that is not q0's gold

EVAL = ("evaluate", "--gold", "gold.jsonl", "--corpus", "corpus.jsonl", "--k", "1,5")
EVAL_RUN = ("evaluate", "--gold", "gold.jsonl", "--run", "run.trec", "--k", "1,5")
EVAL_RUN_JSONL = ("evaluate", "--gold", "gold.jsonl", "--run", "run.jsonl", "--k", "1,5")
CAL = ("calibrate", "results.json", "--n-resamples", "1000")
CAL_ONE = (
    "calibrate", "--synthetic", "synth.jsonl", "--real", "gold.jsonl", "--corpus", "corpus.jsonl",
    "--k", "1,5,10", "--n-resamples", "1000",
)  # fmt: skip
CMP = ("compare", "results.json", "results_b.json", "--n-resamples", "1000")
GEN = ("generate", "--backend", "extractive", "--corpus", "corpus.jsonl", "--output", "gen.jsonl")
GEN_DRY = ("generate", "--corpus", "corpus.jsonl", "--output", "gen.jsonl", "--dry-run")
GEN_LLM = (
    "generate", "--corpus", "corpus.jsonl", "--output", "gen.jsonl", "--sample", "2",
    "--concurrency", "1",
)  # fmt: skip
RUN = ("run", "pipeline.toml")
HIST = ("history", "history.jsonl")
IMPORT = (
    "gold", "import", "tickets.csv", "--question", "question", "--passage", "passage",
    "-o", "imported.jsonl", "--corpus", "corpus.jsonl",
)  # fmt: skip
REVIEW = ("gold", "review", "results.json", "--per-query", "per_query.jsonl", "--corpus", "corpus.jsonl")
ADD = ("gold", "add", "gold.jsonl", "q0", OTHER, "--corpus", "corpus.jsonl", "-o", "added.jsonl")
ADD_J = ("gold", "add", "gold.jsonl", "--judgements", "judgements.jsonl", "-o", "added.jsonl")
DUPES = ("gold", "dupes", "--corpus", "corpus.jsonl")
EXPORT_CHROMA = (
    "corpus",
    "export",
    "--from",
    "chroma",
    "--option",
    "path=store",
    "--option",
    "collection=docs",
)
EXPAND = ("gold", "expand", "gold.jsonl", "--corpus", "corpus.jsonl", "-o", "expanded.jsonl")

BASELINES: dict[str, tuple[str, ...]] = {
    "evaluate": EVAL,
    "evaluate-run": EVAL_RUN,
    "evaluate-run-jsonl": EVAL_RUN_JSONL,
    "calibrate": CAL,
    "calibrate-one-call": CAL_ONE,
    "compare": CMP,
    "generate-extractive": GEN,
    "generate-dry-run": GEN_DRY,
    "run": RUN,
    "history": HIST,
    "gold-import": IMPORT,
    "gold-review": REVIEW,
    "gold-add": ADD,
    "gold-add-judgements": ADD_J,
    "gold-dupes": DUPES,
    "gold-expand": EXPAND,
}
"""Each bad case starts from one of these; they must succeed on the untouched workspace."""


def with_(base: tuple[str, ...], *extra: str) -> tuple[str, ...]:
    return (*base, *extra)


def replace_arg(base: tuple[str, ...], old: str, new: str) -> tuple[str, ...]:
    return tuple(new if arg == old else arg for arg in base)


# ---------------------------------------------------------------------------------------------------
# The standard faults of a file option

BOM = b"\xef\xbb\xbf"
BINARY = bytes(range(256)) * 8  # NUL bytes, invalid UTF-8, no line structure


def _latin1(old: bytes) -> bytes:
    """The valid file with one character saved as Latin-1 instead of UTF-8 (a classic export)."""
    if b"e" in old:
        return old.replace(b"e", b"\xe9", 1)
    return b"\xe9" + old


FAULTS: dict[str, Edit] = {
    "missing": None,
    "folder": FOLDER,
    "empty": b"",
    "bom-only": BOM,
    "binary": BINARY,
    "latin1": _latin1,
}


def faults(prefix: str, args: tuple[str, ...], target: str, *kinds: str, **extra: object) -> list[Case]:
    """One case per fault kind (default: all of ``FAULTS``) of the file ``target`` named in ``args``."""
    return [
        Case(f"{prefix}-{kind}", args, (target,), {target: FAULTS[kind]}, **extra)  # type: ignore[arg-type]
        for kind in kinds or FAULTS
    ]


def add_line(line: str) -> Callable[[bytes], bytes]:
    """The valid file with ``line`` appended (the error must name its line number)."""
    return lambda old: old + line.encode("utf-8") + b"\n"


def gold_line(**fields: object) -> str:
    record: dict[str, object] = {"query_id": "qx", "query": "a question", "gold": {Q0_GOLD: 1}}
    record.update(fields)
    return json.dumps({key: value for key, value in record.items() if value is not _DROP})


_DROP: Final = object()
GOLD_LINE9 = ("gold.jsonl:9",)  # the template's gold set has 8 lines; an added line is line 9


def gold_grade(raw: str) -> Callable[[bytes], bytes]:
    """A gold line whose grade is written as raw JSON text (NaN, Infinity, 1e999 are not json.dumps)."""
    return add_line(f'{{"query_id": "qx", "query": "a question", "gold": {{"{Q0_GOLD}": {raw}}}}}')


def corpus_line(**fields: object) -> Callable[[bytes], bytes]:
    record: dict[str, object] = {"id": "x-1", "text": "some passage text", "title": "T"}
    record.update(fields)
    return add_line(json.dumps({key: value for key, value in record.items() if value is not _DROP}))


def results_edit(change: Callable[[dict[str, Any]], object]) -> Callable[[bytes], bytes]:
    """results.json changed by ``change`` (which edits the parsed document in place)."""

    def edit(old: bytes) -> bytes:
        document = json.loads(old)
        change(document)
        return json.dumps(document).encode("utf-8")

    return edit


def _rename_queries(document: dict[str, Any]) -> None:
    # compare pairs queries by id (gold set names may differ, as over two chunkings): other ids share none.
    for gold_set in document["gold_sets"]:
        table = gold_set["per_query"]
        table["query_id"] = ["other-" + str(query_id) for query_id in table["query_id"]]


def _first_set(document: dict[str, object]) -> dict[str, object]:
    return document["gold_sets"][0]  # type: ignore[index,no-any-return]


SEARCH_PY = "def search(query, k):\n    return []\n"  # a custom retriever's file
STORE: Mapping[str, Edit] = {
    "store": FOLDER,
    "store/chroma.sqlite3": b"SQLite format 3\x00",
}  # a store's folder


# ---------------------------------------------------------------------------------------------------
# The catalogue

FILE_FAULTS: list[Case] = [
    *faults("evaluate-gold", EVAL, "gold.jsonl"),
    *faults("evaluate-corpus", EVAL, "corpus.jsonl"),
    *faults("evaluate-run", EVAL_RUN, "run.trec"),
    *faults("calibrate-results", CAL, "results.json"),
    *faults("calibrate-answers", with_(CAL, "--answers", "answers.jsonl"), "answers.jsonl"),
    *faults("calibrate-on", with_(CAL, "--calibrate-on", "results_b.json"), "results_b.json",
            "missing", "folder", "binary"),
    *faults("calibrate-one-call-real", CAL_ONE, "gold.jsonl", "missing", "empty", "latin1"),
    *faults("compare-b", CMP, "results_b.json", "missing", "folder", "empty", "binary"),
    *faults("generate-corpus", GEN, "corpus.jsonl"),
    *faults("generate-prompt", with_(GEN_DRY, "--prompt", "prompt.md"), "prompt.md"),
    *faults("generate-style", with_(GEN_DRY, "--style-examples", "gold.jsonl"), "gold.jsonl"),
    *faults("generate-judge-prompt", with_(GEN_DRY, "--judge", "--judge-prompt", "judge_prompt.md"),
            "judge_prompt.md", "missing", "folder", "binary"),
    *faults("run-config", RUN, "pipeline.toml"),
    *faults("history", HIST, "history.jsonl", "folder", "binary", "latin1"),
    *faults("import-source", IMPORT, "tickets.csv"),
    *faults("import-type-rules", with_(IMPORT, "--type-rules", "type_rules.toml"), "type_rules.toml",
            "missing", "folder", "binary"),
    *faults("review-results", REVIEW, "results.json", "missing", "folder", "empty", "binary"),
    *faults("review-per-query", REVIEW, "per_query.jsonl", "missing", "folder", "empty", "latin1"),
    *faults("add-gold", ADD, "gold.jsonl", "missing", "folder", "empty", "binary"),
    *faults("add-judgements", ADD_J, "judgements.jsonl", "missing", "folder", "empty", "latin1"),
    *faults("dupes-corpus", DUPES, "corpus.jsonl", "missing", "folder", "empty", "binary"),
    *faults("expand-gold", EXPAND, "gold.jsonl", "missing", "folder", "empty", "latin1"),
    *faults("expand-corpus", EXPAND, "corpus.jsonl", "missing", "binary"),
    Case("evaluate-gold-unreadable", EVAL, ("gold.jsonl",), unreadable=("gold.jsonl",)),
    Case("evaluate-corpus-unreadable", EVAL, ("corpus.jsonl",), unreadable=("corpus.jsonl",)),
    Case("calibrate-results-unreadable", CAL, ("results.json",), unreadable=("results.json",)),
    Case("run-config-unreadable", RUN, ("pipeline.toml",), unreadable=("pipeline.toml",)),
    Case("import-source-unreadable", IMPORT, ("tickets.csv",), unreadable=("tickets.csv",)),
]  # fmt: skip

GOLD_CONTENT: list[Case] = [
    Case("gold-malformed-json", EVAL, GOLD_LINE9, {"gold.jsonl": add_line('{"query_id": "qx", ')}),
    Case("gold-line-is-array", EVAL, GOLD_LINE9, {"gold.jsonl": add_line("[1, 2]")}),
    Case("gold-no-query-id", EVAL, GOLD_LINE9, {"gold.jsonl": add_line(gold_line(query_id=_DROP))}),
    Case("gold-empty-query-id", EVAL, GOLD_LINE9, {"gold.jsonl": add_line(gold_line(query_id=""))}),
    Case("gold-query-id-list", EVAL, GOLD_LINE9, {"gold.jsonl": add_line(gold_line(query_id=["q"]))}),
    Case("gold-no-query-text", EVAL, GOLD_LINE9, {"gold.jsonl": add_line(gold_line(query=_DROP))}),
    Case("gold-query-number", EVAL, GOLD_LINE9, {"gold.jsonl": add_line(gold_line(query=7))}),
    Case("gold-no-gold", EVAL, GOLD_LINE9, {"gold.jsonl": add_line(gold_line(gold=_DROP))}),
    Case("gold-empty-gold", EVAL, GOLD_LINE9, {"gold.jsonl": add_line(gold_line(gold={}))}),
    Case("gold-gold-string", EVAL, GOLD_LINE9, {"gold.jsonl": add_line(gold_line(gold=Q0_GOLD))}),
    Case("gold-empty-passage-id", EVAL, GOLD_LINE9, {"gold.jsonl": add_line(gold_line(gold={"": 1}))}),
    Case("gold-duplicate-query-id", EVAL, (*GOLD_LINE9, "q0"), {"gold.jsonl": add_line(gold_line(query_id="q0"))}),
    Case("gold-passage-twice-in-one-query", EVAL, GOLD_LINE9, {"gold.jsonl": add_line(f'{{"query_id": "qx", "query": "a question", "gold": {{"{Q0_GOLD}": 1, "{Q0_GOLD}": 0}}}}')}),
    Case("gold-grade-nan", EVAL, GOLD_LINE9, {"gold.jsonl": gold_grade("NaN")}),
    Case("gold-grade-infinity", EVAL, GOLD_LINE9, {"gold.jsonl": gold_grade("Infinity")}),
    Case("gold-grade-minus-infinity", EVAL, GOLD_LINE9, {"gold.jsonl": gold_grade("-Infinity")}),
    Case("gold-grade-huge-float", EVAL, GOLD_LINE9, {"gold.jsonl": gold_grade("1e999")}),
    Case("gold-grade-fraction", EVAL, GOLD_LINE9, {"gold.jsonl": gold_grade("1.5")}),
    Case("gold-grade-bool", EVAL, GOLD_LINE9, {"gold.jsonl": gold_grade("true")}),
    Case("gold-grade-string", EVAL, GOLD_LINE9, {"gold.jsonl": gold_grade('"high"')}),
    Case("gold-grade-null", EVAL, GOLD_LINE9, {"gold.jsonl": gold_grade("null")}),
    Case("gold-unknown-origin", EVAL, GOLD_LINE9, {"gold.jsonl": add_line(gold_line(origin="made-up"))}),
    Case("gold-type-number", EVAL, GOLD_LINE9, {"gold.jsonl": add_line(gold_line(type=3))}),
    Case("gold-qrels-three-fields", replace_arg(EVAL, "gold.jsonl", "qrels.txt"), ("qrels.txt:9",),
         {"qrels.txt": add_line(f"q9 0 {Q0_GOLD}")}),
    Case("gold-qrels-bad-grade", replace_arg(EVAL, "gold.jsonl", "qrels.txt"), ("qrels.txt:9",),
         {"qrels.txt": add_line(f"q9 0 {Q0_GOLD} high")}),
    Case("evaluate-origin-unknown", with_(EVAL, "--origin", "made-up"), ("made-up",)),
]  # fmt: skip

CORPUS_CONTENT: list[Case] = [
    Case("corpus-malformed-json", EVAL, ("corpus.jsonl:25",), {"corpus.jsonl": add_line('{"id": "x", "text":')}),
    Case("corpus-no-id", EVAL, ("corpus.jsonl:25",), {"corpus.jsonl": corpus_line(id=_DROP)}),
    Case("corpus-id-list", EVAL, ("corpus.jsonl:25",), {"corpus.jsonl": corpus_line(id=["x"])}),
    Case("corpus-duplicate-id", EVAL, ("corpus.jsonl:25", Q0_GOLD), {"corpus.jsonl": corpus_line(id=Q0_GOLD)}),
    Case("corpus-text-number", EVAL, ("corpus.jsonl:25",), {"corpus.jsonl": corpus_line(text=5)}),
    Case("corpus-no-text", EVAL, ("corpus.jsonl:25",), {"corpus.jsonl": corpus_line(text=_DROP)}),
    Case("corpus-metadata-list", EVAL, ("corpus.jsonl:25",), {"corpus.jsonl": corpus_line(metadata=[1])}),
    Case("dupes-corpus-duplicate-id", DUPES, ("corpus.jsonl:25",), {"corpus.jsonl": corpus_line(id=Q0_GOLD)}),
    Case("generate-corpus-malformed", GEN, ("corpus.jsonl:25",), {"corpus.jsonl": add_line("{oops}")}),
]  # fmt: skip

RUN_CONTENT: list[Case] = [
    Case("run-trec-five-fields", EVAL_RUN, ("run.trec:81",), {"run.trec": add_line(f"q0 Q0 {OTHER} 9 0.5")}),
    Case("run-trec-one-field", EVAL_RUN, ("run.trec:81",), {"run.trec": add_line("q0")}),
    Case("run-trec-score-word", EVAL_RUN, ("run.trec:81",), {"run.trec": add_line(f"q0 Q0 {OTHER} 9 high t")}),
    Case("run-trec-score-nan", EVAL_RUN, ("run.trec:81",), {"run.trec": add_line(f"q0 Q0 {OTHER} 9 nan t")}),
    Case("run-trec-duplicate-passage", EVAL_RUN, ("run.trec:81",),
         {"run.trec": add_line(f"q0 Q0 {Q0_GOLD} 9 0.1 t")}),
    Case("run-jsonl-no-query-id", EVAL_RUN_JSONL, ("run.jsonl:9",),
         {"run.jsonl": add_line('{"ranked": ["a"]}')}),
    Case("run-jsonl-ranked-string", EVAL_RUN_JSONL, ("run.jsonl:9",),
         {"run.jsonl": add_line('{"query_id": "q9", "ranked": "a b"}')}),
    Case("run-jsonl-duplicate-query", EVAL_RUN_JSONL, ("run.jsonl:9",),
         {"run.jsonl": add_line('{"query_id": "q0", "ranked": ["a"]}')}),
    Case("run-jsonl-score-string", EVAL_RUN_JSONL, ("run.jsonl:9",),
         {"run.jsonl": add_line('{"query_id": "q9", "scores": {"a": "high"}}')}),
]  # fmt: skip

CALIBRATE_CONTENT: list[Case] = [
    Case("results-not-json", CAL, ("results.json",), {"results.json": b"{\"gold_sets\": ["}),
    Case("results-json-array", CAL, ("results.json",), {"results.json": b"[]"}),
    Case("results-no-gold-sets", CAL, ("results.json",),
         {"results.json": results_edit(lambda d: d.pop("gold_sets"))}),
    Case("results-gold-sets-string", CAL, ("results.json",),
         {"results.json": results_edit(lambda d: d.update(gold_sets="real"))}),
    Case("results-per-query-missing", CAL, ("results.json",),
         {"results.json": results_edit(lambda d: _first_set(d).pop("per_query"))}),
    Case("results-a-gold-jsonl", replace_arg(CAL, "results.json", "gold.jsonl"), ("gold.jsonl",)),
    Case("answers-correct-maybe", with_(CAL, "--answers", "answers.jsonl"), ("answers.jsonl:9",),
         {"answers.jsonl": add_line('{"query_id": "q1", "correct": "maybe"}')}),
    Case("answers-no-query-id", with_(CAL, "--answers", "answers.jsonl"), ("answers.jsonl:9",),
         {"answers.jsonl": add_line('{"correct": true}')}),
    Case("answers-csv-wrong-columns", with_(CAL, "--answers", "answers.csv"), ("answers.csv",),
         {"answers.csv": "id,ok\nq0,1\n"}),
    Case("calibrate-corpus-missing", with_(CAL, "--corpus", "nothere.jsonl"), ("nothere.jsonl",)),
    Case("calibrate-real-date-word", with_(CAL, "--real-date", "yesterday"), ("yesterday",)),
    Case("calibrate-max-age-negative", with_(CAL, "--max-age", "-3"), ("max-age",)),
    Case("calibrate-answer-k-zero", with_(CAL, "--answers", "answers.jsonl", "--answer-k", "0"), ("answer-k",)),
    Case("compare-no-query-in-common", CMP, ("results",),
         {"results_b.json": results_edit(_rename_queries)}),
]  # fmt: skip

CONFIG_TOML_BAD = "[corpus\npath = 'corpus.jsonl'\n"


def _config(old: bytes, find: str, new: str) -> bytes:
    text = old.decode("utf-8")
    assert find in text, find
    return text.replace(find, new, 1).encode("utf-8")


def config_edit(find: str, new: str) -> Callable[[bytes], bytes]:
    return lambda old: _config(old, find, new)


PIPELINE_CONTENT: list[Case] = [
    Case("config-bad-toml", RUN, ("pipeline.toml",), {"pipeline.toml": CONFIG_TOML_BAD}),
    Case("config-unknown-section", RUN, ("pipeline.toml", "[bogus]"),
         {"pipeline.toml": add_line("[bogus]\nx = 1")}),
    Case("config-unknown-key", RUN, ("pipeline.toml", "colour"),
         {"pipeline.toml": config_edit("[corpus]\n", "[corpus]\ncolour = 'red'\n")}),
    Case("config-generate-banana", RUN, ("pipeline.toml", "banana"),
         {"pipeline.toml": config_edit('backend = "extractive"', 'backend = "extractive"\nbanana = 1')}),
    Case("config-generate-bad-value", RUN, ("pipeline.toml", "per_chunk"),
         {"pipeline.toml": config_edit('backend = "extractive"', 'backend = "extractive"\nper_chunk = "many"')}),
    Case("config-generate-old-options-table", RUN, ("pipeline.toml", "options", "per_chunk"),
         {"pipeline.toml": config_edit('backend = "extractive"',
                                       'backend = "extractive"\noptions = { per_chunk = 2 }')}),
    Case("config-k-string", RUN, ("pipeline.toml",), {"pipeline.toml": config_edit("k = [1, 5, 10]", 'k = "10"')}),
    Case("config-k-zero", RUN, ("pipeline.toml",), {"pipeline.toml": config_edit("k = [1, 5, 10]", "k = [0]")}),
    Case("config-backend-unknown", RUN, ("pipeline.toml",),
         {"pipeline.toml": config_edit('backend = "extractive"', 'backend = "gpt"')}),
    Case("config-no-generate-output", RUN, ("pipeline.toml",),
         {"pipeline.toml": config_edit('output = "pipeline_synth.jsonl"\n', "")}),
    Case("config-corpus-missing-file", RUN, ("corpus.jsonl",), {"corpus.jsonl": None}),
    Case("config-real-missing-file", RUN, ("gold.jsonl",), {"gold.jsonl": None}),
    Case("config-real-bad-line", RUN, GOLD_LINE9, {"gold.jsonl": gold_grade("NaN")}),
    Case("config-retriever-unknown", RUN, ("nosuch",),
         {"pipeline.toml": config_edit("[evaluate]\n", '[evaluate]\nretriever = "nosuch"\n')}),
    Case("config-fail-under-string", RUN, ("pipeline.toml",),
         {"pipeline.toml": config_edit('metric = "recall@10"', 'fail_under = { "recall@10" = "high" }')}),
    Case("config-metric-unknown", RUN, ("recall@1O",),
         {"pipeline.toml": config_edit('metric = "recall@10"', 'metric = "recall@1O"')}),
    Case("history-malformed-line", HIST, ("history.jsonl:2",), {"history.jsonl": add_line('{"time": ')}),
    Case("history-of-config-bad-toml", ("history", "pipeline.toml"), ("pipeline.toml",),
         {"pipeline.toml": CONFIG_TOML_BAD}),
]  # fmt: skip

PROMPT_NO_HEADER = "## system\nYou write questions.\n## user\n{{passage}}\n"
PROMPT_UNDECLARED = (
    "---\nname: question_generation\npurpose: test\nvariables: passage\n---\n"
    "## system\nWrite a question.\n## user\n{{passage}} {{nonsense}}\n"
)

GENERATE_CONTENT: list[Case] = [
    Case("generate-prompt-no-header", with_(GEN_DRY, "--prompt", "prompt.md"), ("prompt.md",),
         {"prompt.md": PROMPT_NO_HEADER}),
    Case("generate-prompt-undeclared-placeholder", with_(GEN_DRY, "--prompt", "prompt.md"),
         ("prompt.md", "nonsense"), {"prompt.md": PROMPT_UNDECLARED}),
    Case("generate-style-bad-line", with_(GEN_DRY, "--style-examples", "gold.jsonl"), GOLD_LINE9,
         {"gold.jsonl": add_line("{")}),
    Case("generate-cache-binary", with_(GEN_LLM, "--cache", "cache.jsonl"), ("cache.jsonl",),
         {"cache.jsonl": BINARY}, server=True),
    Case("generate-resume-output-corrupt", GEN, ("gen.jsonl",), {"gen.jsonl": b"\x00\x01garbage\n"}),
]  # fmt: skip

GOLD_TOOLS_CONTENT: list[Case] = [
    Case("import-no-such-column", replace_arg(IMPORT, "question", "questions"), ("questions",)),
    Case("import-passage-by-unknown", with_(IMPORT, "--passage-by", "colour"), ("colour",)),
    Case("import-ambiguous-unknown", with_(IMPORT, "--ambiguous", "maybe"), ("maybe",)),
    Case("import-grade-column-word", with_(IMPORT, "--grade", "grade"), ("tickets.csv",),
         {"tickets.csv": f"question,passage,grade\nhow to?,{Q0_GOLD},high\n"}),
    Case("import-type-rules-bad-regex", with_(IMPORT, "--type-rules", "type_rules.toml"), ("type_rules.toml",),
         {"type_rules.toml": "default = 'x'\n[[rules]]\nname = 'r'\ntype = 't'\npattern = '(unclosed'\n"}),
    Case("import-type-rules-bad-toml", with_(IMPORT, "--type-rules", "type_rules.toml"), ("type_rules.toml",),
         {"type_rules.toml": "default = \n"}),
    Case("review-gold-missing", with_(REVIEW, "--gold", "nothere.jsonl"), ("nothere.jsonl",)),
    Case("import-corpus-missing", replace_arg(IMPORT, "corpus.jsonl", "nothere.jsonl"), ("nothere.jsonl",)),
    Case("review-per-query-malformed", REVIEW, ("per_query.jsonl:17",),
         {"per_query.jsonl": add_line('{"query_id": ')}),
    Case("add-unknown-query", replace_arg(ADD, "q0", "q-nope"), ("q-nope",)),
    Case("add-passage-not-in-corpus", replace_arg(ADD, OTHER, "nope-404"), ("nope-404",)),
    Case("add-nothing", ("gold", "add", "gold.jsonl"), ("QUERY_ID",)),
    Case("add-ids-and-judgements", with_(ADD, "--judgements", "judgements.jsonl"), ("--judgements",)),
    Case("add-judgements-grade-word", ADD_J, ("judgements.jsonl:2",),
         {"judgements.jsonl": add_line('{"query_id": "q1", "passage_id": "x", "grade": "high"}')}),
    Case("add-judgements-no-passage", ADD_J, ("judgements.jsonl:2",),
         {"judgements.jsonl": add_line('{"query_id": "q1", "grade": 1}')}),
    Case("expand-per-query-missing", with_(EXPAND, "--per-query", "nope.jsonl"), ("nope.jsonl",)),
]  # fmt: skip

OPTION_VALUES: list[Case] = [
    Case("evaluate-k-zero", replace_arg(EVAL, "1,5", "0"), ("--k",)),
    Case("evaluate-k-word", replace_arg(EVAL, "1,5", "abc"), ("--k",)),
    Case("evaluate-k-empty", replace_arg(EVAL, "1,5", ""), ("--k",)),
    Case("evaluate-k-negative", replace_arg(EVAL, "1,5", "5,-1"), ("--k",)),
    Case("evaluate-relevance-threshold-word", with_(EVAL, "--relevance-threshold", "abc"), ("--relevance-threshold",)),
    Case("evaluate-metric-unknown", with_(EVAL, "--metrics", "precison@10"), ("precison@10",)),
    Case("evaluate-retriever-unknown", with_(EVAL, "--retriever", "bm52"), ("bm52",)),
    Case("evaluate-retriever-no-module", with_(EVAL, "--retriever", "no_such_module_xyz:search"),
         ("no_such_module_xyz",)),
    Case("evaluate-retriever-module-not-on-path", with_(EVAL, "--retriever", "my_retriever:search"),
         ("my_retriever",), {"my_retriever.py": "def search(query, k):\n    return []\n"}),
    Case("evaluate-retriever-syntax-error", with_(EVAL, "--retriever", "broken_retriever.py:search"),
         ("broken_retriever",), {"broken_retriever.py": "def search(query, k):\n    return [\n"}),
    Case("evaluate-retriever-no-function", with_(EVAL, "--retriever", "empty_retriever.py:search"),
         ("search",), {"empty_retriever.py": "X = 1\n"}),
    Case("evaluate-retriever-raises", with_(EVAL, "--retriever", "raising_retriever.py:search"),
         ("raising_retriever",), {"raising_retriever.py": "def search(query, k):\n    raise RuntimeError('index offline')\n"}),
    Case("evaluate-local-dense-not-installed", with_(EVAL, "--retriever", "local-dense"), ("realrecall[local]",),
         hide_modules=("sentence_transformers",)),
    Case("evaluate-hybrid-dense-unknown", with_(EVAL, "--retriever", "hybrid", "--hybrid-dense", "sparse"),
         ("sparse",)),
    Case("evaluate-workers-zero", with_(EVAL, "--workers", "0"), ("workers",)),
    Case("evaluate-run-and-retriever", with_(EVAL_RUN, "--retriever", "bm25"), ("--run",)),
    Case("evaluate-no-corpus-no-run", ("evaluate", "--gold", "gold.jsonl"), ("--corpus",)),
    Case("calibrate-confidence-two", with_(CAL, "--confidence", "2"), ("confidence",)),
    Case("calibrate-confidence-word", with_(CAL, "--confidence", "high"), ("--confidence",)),
    Case("calibrate-metric-unknown", with_(CAL, "--metric", "recall@11"), ("recall@11",)),
    Case("calibrate-format-unknown", with_(CAL, "--format", "xml"), ("xml",)),
    Case("calibrate-output-suffix-unknown", with_(CAL, "-o", "report.txt"), ("report.txt",)),
    Case("calibrate-table-to-file", with_(CAL, "-f", "table", "-o", "report.md"), ("table",)),
    Case("calibrate-bootstrap-unknown", with_(CAL, "--bootstrap", "jackknife"), ("jackknife",)),
    Case("calibrate-n-resamples-zero", replace_arg(CAL, "1000", "0"), ("resamples",)),
    Case("calibrate-fail-under-no-value", with_(CAL, "--fail-under", "recall@10"), ("recall@10",)),
    Case("calibrate-fail-under-word", with_(CAL, "--fail-under", "recall@10=high"), ("high",)),
    Case("calibrate-origin-no-equals", with_(CAL, "--origin", "gold"), ("--origin",)),
    Case("calibrate-origin-unknown", with_(CAL, "--origin", "gold=imagined"), ("imagined",)),
    Case("calibrate-one-call-half", ("calibrate", "--real", "gold.jsonl", "--corpus", "corpus.jsonl"),
         ("--synthetic",)),
    Case("calibrate-results-and-one-call", with_(CAL, "--real", "gold.jsonl"), ("--real",)),
    Case("calibrate-nothing", ("calibrate",), ("results",)),
    Case("compare-test-unknown", with_(CMP, "--test", "wilcoxon"), ("wilcoxon",)),
    Case("compare-format-unknown", with_(CMP, "--format", "xml"), ("xml",)),
    Case("compare-alpha-two", with_(CMP, "--alpha", "2"), ("alpha",)),
    Case("compare-metric-unknown", with_(CMP, "--metric", "recall@11"), ("recall@11",)),
    Case("compare-one-argument", ("compare", "results.json"), ("results_b",)),
    Case("generate-shard-beyond", with_(GEN, "--shard", "4/3"), ("4/3",)),
    Case("generate-shard-word", with_(GEN, "--shard", "half"), ("half",)),
    Case("generate-types-unknown", with_(GEN, "--types", "riddle=1"), ("riddle",)),
    Case("generate-types-negative", with_(GEN, "--types", "lookup=-1"), ("lookup",)),
    Case("generate-languages-empty", with_(GEN, "--languages", ""), ("language",)),
    Case("generate-per-chunk-zero", with_(GEN, "--per-chunk", "0"), ("chunk",)),
    Case("generate-sample-zero", with_(GEN, "--sample", "0"), ("sample",)),
    Case("generate-concurrency-zero", with_(GEN_DRY, "--concurrency", "0"), ("concurrency",)),
    Case("generate-max-attempts-zero", with_(GEN_DRY, "--max-attempts", "0"), ("attempts",)),
    Case("generate-temperature-word", with_(GEN_DRY, "--temperature", "warm"), ("--temperature",)),
    Case("generate-backend-unknown", replace_arg(GEN, "extractive", "gpt"), ("gpt",)),
    Case("generate-max-overlap-two", with_(GEN, "--max-overlap", "2"), ("overlap",)),
    Case("generate-near-duplicate-two", with_(GEN, "--near-duplicate", "2"), ("duplicate",)),
    Case("generate-llm-no-endpoint", GEN_LLM, ("OPENAI_API_KEY",)),
    Case("generate-llm-base-url-not-url", with_(GEN_LLM, "--base-url", "localhost:8000"), ("localhost:8000",),
         server=True),
    Case("generate-llm-price-negative", with_(GEN_LLM, "--price-in", "-1"), ("price",), server=True),
    Case("generate-llm-max-tokens-zero", with_(GEN_LLM, "--max-tokens", "0"), ("--max-tokens",), server=True),
    Case("generate-llm-temperature-five", with_(GEN_LLM, "--temperature", "5"), ("temperature",), server=True),
    Case("generate-llm-poll-interval-zero", with_(GEN_LLM, "--batch", "--poll-interval", "0"), ("poll",),
         server=True),
    Case("generate-llm-batch-timeout-negative", with_(GEN_LLM, "--batch", "--batch-timeout", "-5"),
         ("timeout",), server=True),
    Case("generate-llm-persona-empty", with_(GEN_LLM, "--persona", ""), ("persona",), server=True),
    Case("generate-llm-model-empty", with_(GEN_LLM, "--model", ""), ("model",), server=True),
    Case("generate-n-style-examples-negative", with_(GEN_DRY, "--style-examples", "gold.jsonl",
                                                     "--n-style-examples", "-1"), ("style",)),
    Case("review-k-zero", with_(REVIEW, "--k", "0"), ("k", "0")),
    Case("review-interactive-no-terminal", with_(REVIEW, "-i"), ("--interactive",)),
    Case("review-gold-set-unknown", with_(REVIEW, "--gold-set", "nosuch"), ("nosuch",)),
    Case("add-grade-word", with_(ADD, "--grade", "high"), ("--grade",)),
    Case("dupes-threshold-two", with_(DUPES, "--threshold", "2"), ("threshold",)),
    Case("dupes-shingle-zero", with_(DUPES, "--shingle", "0"), ("shingle",)),
    Case("expand-threshold-word", with_(EXPAND, "--threshold", "close"), ("--threshold",)),
]  # fmt: skip

USAGE: list[Case] = [
    Case("usage-unknown-command", ("evalute", "--gold", "gold.jsonl"), ("evalute",)),
    Case("usage-unknown-root-option", ("--verbose", "evaluate"), ("--verbose",)),
    Case("usage-unknown-option", with_(EVAL, "--colour"), ("--colour",)),
    Case("usage-missing-required-option", ("evaluate", "--corpus", "corpus.jsonl"), ("--gold",)),
    Case("usage-option-without-value", ("evaluate", "--corpus", "corpus.jsonl", "--gold"), ("--gold",)),
    Case("usage-missing-argument", ("gold", "expand", "--corpus", "corpus.jsonl", "-o", "x.jsonl"),
         ("gold_file",)),
    Case("usage-extra-argument", with_(HIST, "extra.jsonl"), ("extra.jsonl",)),
    Case("usage-unknown-gold-command", ("gold", "merge", "gold.jsonl"), ("merge",)),
    Case("usage-int-option-float", with_(REVIEW, "--limit", "2.5"), ("--limit",)),
]  # fmt: skip

OUTPUTS: list[Case] = [
    Case("output-evaluate-over-gold", with_(EVAL, "--output", "gold.jsonl"), ("gold.jsonl", "--gold")),
    Case("output-evaluate-per-query-over-corpus", with_(EVAL, "--per-query", "corpus.jsonl"), ("corpus.jsonl",)),
    Case("output-evaluate-over-run", with_(EVAL_RUN, "--output", "run.trec"), ("run.trec",)),
    Case("output-evaluate-two-outputs-one-file", with_(EVAL, "-o", "out.json", "--per-query", "out.json"),
         ("out.json",)),
    Case("output-evaluate-symlink-to-gold", with_(EVAL, "--output", "link.json"), ("link.json", "gold.jsonl"),
         {"link.json": SYMLINK_TO("gold.jsonl")}),
    Case("output-evaluate-hardlink-to-corpus", with_(EVAL, "--per-query", "hard.jsonl"), ("hard.jsonl",),
         {"hard.jsonl": HARDLINK_TO("corpus.jsonl")}),
    Case("output-evaluate-dotted-path-to-gold", with_(EVAL, "--output", "runs/../gold.jsonl"), ("gold.jsonl",)),
    Case("output-evaluate-existing-folder", with_(EVAL, "--output", "runs"), ("runs",)),
    Case("output-evaluate-parent-is-file", with_(EVAL, "--output", "corpus.jsonl/results.json"),
         ("corpus.jsonl",)),
    Case("output-calibrate-over-results", with_(CAL, "-f", "json", "-o", "results.json"), ("results.json",)),
    Case("output-calibrate-existing-folder", with_(CAL, "-f", "json", "-o", "runs"), ("runs",)),
    Case("output-calibrate-over-answers", with_(CAL, "--answers", "answers.jsonl", "-f", "json", "-o",
                                                "answers.jsonl"), ("answers.jsonl",)),
    Case("output-calibrate-one-call-over-real", with_(CAL_ONE, "-f", "json", "-o", "gold.jsonl"), ("gold.jsonl",)),
    Case("output-compare-over-b", with_(CMP, "-f", "json", "-o", "results_b.json"), ("results_b.json",)),
    Case("output-generate-over-corpus", replace_arg(GEN, "gen.jsonl", "corpus.jsonl"), ("corpus.jsonl",)),
    Case("output-generate-symlink-to-corpus", replace_arg(GEN, "gen.jsonl", "link.jsonl"), ("link.jsonl",),
         {"link.jsonl": SYMLINK_TO("corpus.jsonl")}),
    Case("output-generate-dry-run-over-corpus", replace_arg(GEN_DRY, "gen.jsonl", "corpus.jsonl"),
         ("corpus.jsonl",)),
    Case("output-generate-cache-over-corpus", with_(GEN, "--cache", "corpus.jsonl"), ("corpus.jsonl",)),
    Case("output-generate-existing-folder", replace_arg(GEN, "gen.jsonl", "runs"), ("runs",)),
    Case("output-generate-over-style-examples", with_(replace_arg(GEN_DRY, "gen.jsonl", "gold.jsonl"),
                                                      "--style-examples", "gold.jsonl"), ("gold.jsonl",)),
    Case("output-import-over-source", replace_arg(IMPORT, "imported.jsonl", "tickets.csv"), ("tickets.csv",)),
    Case("output-import-unmatched-over-corpus", with_(IMPORT, "--unmatched", "corpus.jsonl"), ("corpus.jsonl",)),
    Case("output-review-template-over-results", with_(REVIEW, "--judgements", "results.json"), ("results.json",)),
    Case("output-add-over-corpus", replace_arg(ADD, "added.jsonl", "corpus.jsonl"), ("corpus.jsonl",)),
    Case("output-add-over-judgements", replace_arg(ADD_J, "added.jsonl", "judgements.jsonl"),
         ("judgements.jsonl",)),
    Case("output-dupes-over-corpus", with_(DUPES, "-o", "corpus.jsonl"), ("corpus.jsonl",)),
    Case("output-expand-over-corpus", replace_arg(EXPAND, "expanded.jsonl", "corpus.jsonl"), ("corpus.jsonl",)),
    Case("output-expand-existing-folder", replace_arg(EXPAND, "expanded.jsonl", "runs"), ("runs",)),
    Case("output-demo-dir-is-file", ("demo", "--dir", "gold.jsonl"), ("gold.jsonl",)),
    Case("output-demo-dir-holds-a-project", ("demo", "--dir", "."), ("pipeline.toml",)),
    Case("output-generate-over-a-real-gold-set", replace_arg(GEN, "gen.jsonl", "gold.jsonl"), ("gold.jsonl",)),
    Case("output-review-template-over-judgements", with_(REVIEW, "--judgements", "judgements.jsonl"), ("judgements.jsonl",)),
    Case("output-pipeline-synthetic-over-corpus", RUN, ("corpus.jsonl",),
         {"pipeline.toml": config_edit('output = "pipeline_synth.jsonl"', 'output = "corpus.jsonl"')}),
    Case("output-pipeline-synthetic-over-real", RUN, ("gold.jsonl",),
         {"pipeline.toml": config_edit('output = "pipeline_synth.jsonl"', 'output = "gold.jsonl"')}),
    Case("output-pipeline-history-over-real", RUN, ("gold.jsonl",),
         {"pipeline.toml": config_edit('history = "history.jsonl"', 'history = "gold.jsonl"')}),
    Case("output-pipeline-dir-is-file", RUN, ("corpus.jsonl",),
         {"pipeline.toml": config_edit('dir = "runs"', 'dir = "corpus.jsonl"')}),
    # A custom retriever's own code is an input (issue 28): evaluate, one-call calibrate, run.
    Case("output-evaluate-over-retriever-file", with_(EVAL, "--retriever", "my_search.py:search", "-o", "my_search.py"),
         ("my_search.py", "--retriever"), {"my_search.py": SEARCH_PY}),
    Case("output-evaluate-per-query-over-retriever-file",
         with_(EVAL, "--retriever", "my_search.py:search", "--per-query", "my_search.py"), ("my_search.py",),
         {"my_search.py": SEARCH_PY}),
    Case("output-evaluate-symlink-to-retriever-file", with_(EVAL, "--retriever", "my_search.py:search", "-o", "out.json"),
         ("out.json", "my_search.py"), {"my_search.py": SEARCH_PY, "out.json": SYMLINK_TO("my_search.py")}),
    Case("output-calibrate-one-call-over-retriever-file",
         with_(CAL_ONE, "--retriever", "my_search.py:search", "-f", "json", "-o", "my_search.py"),
         ("my_search.py", "--retriever"), {"my_search.py": SEARCH_PY}),
    Case("output-pipeline-history-over-retriever-file", RUN, ("my_search.py", "[evaluate] retriever"),
         {"my_search.py": SEARCH_PY,
          "pipeline.toml": lambda old: _config(_config(old, "[evaluate]\n", '[evaluate]\nretriever = "my_search.py:search"\n'),
                                               'history = "history.jsonl"', 'history = "my_search.py"')}),
    Case("output-pipeline-report-dir-holds-retriever-file", RUN, ("results.json", "[evaluate] retriever"),
         {"runs/results.json": SEARCH_PY,
          "pipeline.toml": config_edit("[evaluate]\n", '[evaluate]\nretriever = "runs/results.json:search"\n')}),
    # Every input of run is checked against every output before any work (issue 28).
    Case("output-pipeline-history-over-config", RUN, ("pipeline.toml", "the config file"),
         {"pipeline.toml": config_edit('history = "history.jsonl"', 'history = "pipeline.toml"')}),
    Case("output-pipeline-synthetic-over-style-examples", RUN, ("style.jsonl", "style_examples"),
         {"style.jsonl": COPY_OF("gold.jsonl"),
          "pipeline.toml": lambda old: _config(_config(old, 'output = "pipeline_synth.jsonl"', 'output = "style.jsonl"'),
                                               'backend = "extractive"', 'backend = "extractive"\nstyle_examples = "style.jsonl"')}),
    Case("output-pipeline-cache-over-corpus", RUN, ("corpus.jsonl", "cache"),
         {"pipeline.toml": config_edit('backend = "extractive"', 'backend = "extractive"\ncache_path = "corpus.jsonl"')}),
    Case("output-pipeline-history-inside-store-folder", RUN, ("store/history.jsonl", "[evaluate.retriever] path"),
         {"store": FOLDER, "store/chroma.sqlite3": b"SQLite format 3\x00",
          "pipeline.toml": lambda old: _config(_config(old, "[evaluate]\n", '[evaluate.retriever]\nname = "chroma"\npath = "store"\ncollection = "docs"\n\n[evaluate]\n'),
                                               'history = "history.jsonl"', 'history = "store/history.jsonl"')}),
    # An output inside a vector store's folder (issue 28): by path, through a symlink, as a hard link.
    Case("output-evaluate-inside-chroma-folder",
         with_(EVAL, "--retriever", "chroma", "--retriever-option", "path=store", "--retriever-option", "collection=docs",
               "-o", "store/chroma.sqlite3"), ("store/chroma.sqlite3", "--retriever-option path"), STORE),
    Case("output-export-over-chroma-database", (*EXPORT_CHROMA, "-o", "store/chroma.sqlite3"),
         ("store/chroma.sqlite3", "--option path"), STORE),
    Case("output-export-new-file-in-chroma-folder", (*EXPORT_CHROMA, "-o", "store/chunks.jsonl"),
         ("store/chunks.jsonl", "--option path"), STORE),
    Case("output-export-symlink-into-chroma-folder", (*EXPORT_CHROMA, "-o", "chunks.jsonl"), ("chunks.jsonl", "--option path"),
         {**STORE, "chunks.jsonl": SYMLINK_TO("store/chroma.sqlite3")}),
    Case("output-export-hard-link-into-chroma-folder", (*EXPORT_CHROMA, "-o", "chunks.jsonl"),
         ("chunks.jsonl", "hard link", "store/chroma.sqlite3"), {**STORE, "chunks.jsonl": HARDLINK_TO("store/chroma.sqlite3")}),
    Case("output-export-over-qdrant-meta",
         ("corpus", "export", "--from", "qdrant", "--option", "path=store", "--option", "collection=docs", "-o", "store/meta.json"),
         ("store/meta.json", "--option path"), {"store": FOLDER, "store/meta.json": '{"collections": {}}'}),
    Case("output-export-inside-lancedb-folder",
         ("corpus", "export", "--from", "lancedb", "--option", "uri=store", "--option", "table=docs", "-o", "store/docs.lance"),
         ("store/docs.lance", "--option uri"), {"store": FOLDER}),
    Case("output-generate-to-a-null-device", replace_arg(GEN, "gen.jsonl", "NODE"), ("NODE", "not a regular file"),
         {"NODE": NULL_DEVICE}),
    Case("output-generate-to-dash", replace_arg(GEN, "gen.jsonl", "-"), ("not a regular file",)),
    Case("output-evaluate-two-outputs-on-stdout", with_(EVAL, "-o", "-", "--per-query", "/dev/stdout"), ("/dev/stdout",)),
]  # fmt: skip


def _sqlite_of_another_program() -> bytes:
    """A valid SQLite database that is not Chroma's (one table ``notes``): Chroma would migrate it."""
    import sqlite3
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "other.sqlite3"
        connection = sqlite3.connect(path)
        connection.execute("CREATE TABLE notes (body TEXT)")
        connection.commit()
        connection.close()
        return path.read_bytes()


DEEP_JSON = "[" * 200_000 + "]" * 200_000  # deeper than Python's decoder recurses
EVAL_CHROMA = with_(
    EVAL,
    "--retriever",
    "chroma",
    "--retriever-option",
    "path=store",
    "--retriever-option",
    "collection=docs",
    "--retriever-option",
    "embed_model=m",
)
EXPORT_QDRANT = (
    "corpus",
    "export",
    "--from",
    "qdrant",
    "--option",
    "path=store",
    "--option",
    "collection=docs",
)

# The second catalogue of issue 28: stores left as they were, input too deep to read.
SWEEP: list[Case] = [
    # A store's client writes into the folder it opens: a folder that is not a store is refused first.
    Case("evaluate-chroma-empty-folder-stays-empty", EVAL_CHROMA, ("store", "no Chroma database"), {"store": FOLDER},
         needs=("chromadb",)),
    Case("export-chroma-empty-folder-stays-empty", (*EXPORT_CHROMA, "-o", "c.jsonl"), ("store", "no Chroma database"),
         {"store": FOLDER}, needs=("chromadb",)),
    Case("export-chroma-another-programs-sqlite-is-not-migrated", (*EXPORT_CHROMA, "-o", "c.jsonl"),
         ("store", "cannot read the Chroma store", "no Chroma tables"),
         {"store": FOLDER, "store/chroma.sqlite3": _sqlite_of_another_program()}, needs=("chromadb",)),
    Case("export-qdrant-empty-folder-stays-empty", (*EXPORT_QDRANT, "-o", "c.jsonl"), ("store", "no Qdrant local store"),
         {"store": FOLDER}, needs=("qdrant_client",)),
    Case("evaluate-qdrant-empty-folder-stays-empty",
         with_(EVAL, "--retriever", "qdrant", "--retriever-option", "path=store", "--retriever-option", "collection=docs",
               "--retriever-option", "embed_model=m"), ("store", "no Qdrant local store"), {"store": FOLDER},
         needs=("qdrant_client",)),
    # run reads every input before any work: the history it appends to, the set it generates by its name.
    Case("run-history-with-a-broken-line-is-read-before-any-work", RUN, ("history.jsonl:1", "malformed JSON"),
         {"history.jsonl": lambda old: old[:-30]}),
    Case("run-synthetic-output-over-its-config", RUN, ("pipeline.toml", "[generate] output", ".jsonl"),
         {"pipeline.toml": config_edit('output = "pipeline_synth.jsonl"', 'output = "pipeline.toml"')}),
    Case("run-synthetic-output-linked-to-the-retrievers-code", RUN, ("link.jsonl", "[evaluate] retriever"),
         {"search.py": SEARCH_PY, "link.jsonl": SYMLINK_TO("search.py"),
          "pipeline.toml": lambda old: _config(_config(old, "[evaluate]\n", '[evaluate]\nretriever = "search.py:search"\n'),
                                               'output = "pipeline_synth.jsonl"', 'output = "link.jsonl"')}),
    Case("run-output-dir-is-the-stores-folder", RUN, ("store", "[evaluate.retriever] uri"),
         {"store": FOLDER,
          "pipeline.toml": lambda old: _config(_config(old, "[evaluate]\n", '[evaluate.retriever]\nname = "lancedb"\nuri = "store"\ntable = "docs"\n\n[evaluate]\n'),
                                               'dir = "runs"', 'dir = "store"')}),
    Case("run-history-over-the-drift-traffic", RUN, ("traffic.txt", "[drift] traffic"),
         {"traffic.txt": COPY_OF("gold.jsonl"),
          "pipeline.toml": lambda old: _config(old, 'history = "history.jsonl"', 'history = "traffic.txt"') + b'\n[drift]\ntraffic = "traffic.txt"\n'}),
    Case("run-synthetic-output-not-jsonl", RUN, ("pipeline.toml", "[generate] output", ".jsonl"),
         {"pipeline.toml": config_edit('output = "pipeline_synth.jsonl"', 'output = "pipeline_synth.out"')}),
    # Two inputs that must differ, given as one file: it would agree with itself (a silent accept).
    Case("compare-a-file-with-itself", ("compare", "results.json", "results.json", "--n-resamples", "1000"),
         ("results.json", "same file")),
    Case("compare-a-file-with-a-hard-link-to-it", ("compare", "results.json", "copy.json", "--n-resamples", "1000"),
         ("copy.json", "same file"), {"copy.json": HARDLINK_TO("results.json")}),
    Case("judge-agreement-labels-and-a-symlink-to-them", ("judge", "agreement", "qrels.txt", "judge.txt"),
         ("judge.txt", "same file"), {"judge.txt": SYMLINK_TO("qrels.txt")}),
    Case("judge-ppi-one-score-file-twice", ("judge", "ppi", "scores.tsv", "scores.tsv", "--measure", "ndcg@10"),
         ("scores.tsv", "same file")),
    Case("plan-by-a-field-no-real-question-has", ("plan", "results.json", "--target-width", "0.1", "--by", "colour"),
         ("results.json", "--by 'colour'", "choose from type")),
    Case("review-width-zero", with_(REVIEW, "--width", "0"), ("--width",)),
    Case("review-width-negative", with_(REVIEW, "--width", "-5"), ("--width",)),
    # JSON nested deeper than Python's decoder recurses: one line, no RecursionError traceback.
    Case("gold-nested-too-deeply", EVAL, (*GOLD_LINE9, "nested too deeply"),
         {"gold.jsonl": add_line(f'{{"query_id": "qx", "query": "a", "gold": {{"{Q0_GOLD}": 1}}, "x": {DEEP_JSON}}}')}),
    Case("results-nested-too-deeply", CAL, ("results.json", "nested too deeply"), {"results.json": DEEP_JSON}),
    Case("corpus-json-nested-too-deeply", replace_arg(EVAL, "corpus.jsonl", "corpus.json"),
         ("corpus.json", "nested too deeply"), {"corpus.json": f'{{"a": {DEEP_JSON}}}'}),
    Case("realism-line-nested-too-deeply", ("realism", "gold.jsonl", "deep.jsonl"), ("deep.jsonl:1", "nested too deeply"),
         {"deep.jsonl": f'{{"query": {DEEP_JSON}}}\n'}),
    Case("type-rules-nested-too-deeply", with_(IMPORT, "--type-rules", "rules.json"), ("rules.json", "nested too deeply"),
         {"rules.json": f'{{"default": {DEEP_JSON}}}'}),
]  # fmt: skip

MARKUP: list[Case] = [
    Case("markup-gold-file-name-missing", replace_arg(EVAL, "gold.jsonl", "gold [final].jsonl"),
         ("gold [final].jsonl",)),
    Case("markup-corpus-file-name-missing", replace_arg(EVAL, "corpus.jsonl", "[bold]corpus.jsonl"),
         ("[bold]corpus.jsonl",)),
    Case("markup-duplicate-id-bold", EVAL, ("[bold]q",),
         {"gold.jsonl": add_line(gold_line(query_id="[bold]q") + "\n" + gold_line(query_id="[bold]q"))}),
    Case("markup-closing-tag-in-grade", EVAL, ("[/]",), {"gold.jsonl": add_line(gold_line(gold={"[/]": "x"}))}),
    Case("markup-config-section", RUN, ("[red]",), {"pipeline.toml": add_line('["red"]\nx = 1')}),
    Case("markup-run-file-name", replace_arg(EVAL_RUN, "run.trec", "run [v2].trec"), ("run [v2].trec",)),
]  # fmt: skip

CASES: list[Case] = [
    *FILE_FAULTS, *GOLD_CONTENT, *CORPUS_CONTENT, *RUN_CONTENT, *CALIBRATE_CONTENT, *PIPELINE_CONTENT,
    *GENERATE_CONTENT, *GOLD_TOOLS_CONTENT, *OPTION_VALUES, *USAGE, *OUTPUTS, *MARKUP, *SWEEP,
]  # fmt: skip


def _type_of_first_query(new_type: str) -> Callable[[bytes], bytes]:
    def edit(old: bytes) -> bytes:
        lines = old.decode("utf-8").splitlines()
        first = json.loads(lines[0])
        first["type"] = new_type
        return ("\n".join([json.dumps(first), *lines[1:]]) + "\n").encode("utf-8")

    return edit


ACCEPTED: list[Accepted] = [
    Accepted("gold-file-name-with-brackets", replace_arg(EVAL, "gold.jsonl", "gold [final].jsonl"),
             ("gold [final]",), {"gold [final].jsonl": COPY_OF("gold.jsonl")}),
    Accepted("gold-type-closing-tag", with_(EVAL, "--by", "type", "-o", "out.json"), ("howto [/] old",),
             {"gold.jsonl": _type_of_first_query("howto [/] old")}, writes=("out.json",)),
    Accepted("calibrate-slice-with-brackets", CAL, ("howto [/] old",),
             {"gold.jsonl": _type_of_first_query("howto [/] old")},
             before=(("evaluate", "--gold", "gold.jsonl", "--gold", "synth.jsonl", "--corpus", "corpus.jsonl",
                      "-o", "results.json"),)),
    Accepted("dupes-id-bold", DUPES, ("[bold]dup",),
             {"corpus.jsonl": lambda old: old + old.splitlines(keepends=True)[0].replace(
                 Q0_GOLD.encode(), b"[bold]dup")}),
    Accepted("review-query-id-bold", ("gold", "review", "r.json", "--per-query", "pq.jsonl", "--corpus",
                                      "corpus.jsonl"), ("[bold]q1",),
             {"gold.jsonl": lambda old: old.replace(b'"q1"', b'"[bold]q1"').replace(
                 b'"en-getting-started-004": 1', b'"en-install-010": 1')},
             before=(("evaluate", "--gold", "gold.jsonl", "--corpus", "corpus.jsonl", "-o", "r.json",
                      "--per-query", "pq.jsonl"),)),
    Accepted("history-file-name-with-brackets", ("history", "hist [v2].jsonl"), ("hist [v2].jsonl",),
             {"hist [v2].jsonl": COPY_OF("history.jsonl")}),
    Accepted("calibrate-json-to-stdout", with_(CAL, "-f", "json"), json_stdout=True),
    Accepted("compare-json-to-stdout", with_(CMP, "-f", "json"), json_stdout=True),
    Accepted("run-trec-rank-word-is-ignored", with_(EVAL_RUN, "-o", "out.json"), writes=("out.json",),
             files={"run.trec": add_line(f"q0 Q0 {OTHER} first 0.5 t")}),  # documented: as trec_eval does
    Accepted("gold-with-bom-crlf-and-blank-lines", with_(EVAL, "-o", "out.json"), writes=("out.json",),
             files={"gold.jsonl": lambda old: BOM + old.replace(b"\n", b"\r\n\r\n")}),
    Accepted("expand-in-place", replace_arg(EXPAND, "expanded.jsonl", "gold.jsonl"), rewrites=("gold.jsonl",)),
    Accepted("add-in-place", ("gold", "add", "gold.jsonl", "q0", OTHER, "--corpus", "corpus.jsonl"), rewrites=("gold.jsonl",)),
    # A device is written in place, never renamed over (the snapshot sees a file replacing it).
    Accepted("evaluate-outputs-to-a-null-device", with_(EVAL, "-o", "NODE", "--per-query", "NODE"),
             files={"NODE": NULL_DEVICE}),
    Accepted("calibrate-output-to-a-null-device", with_(CAL, "-f", "json", "-o", "NODE"), files={"NODE": NULL_DEVICE}),
    Accepted("expand-output-to-a-null-device", replace_arg(EXPAND, "expanded.jsonl", "NODE"), files={"NODE": NULL_DEVICE}),
    Accepted("calibrate-json-to-dash", with_(CAL, "-f", "json", "-o", "-"), json_stdout=True),
    Accepted("evaluate-results-to-dash", with_(EVAL, "-o", "-"), json_stdout=True),
]  # fmt: skip

WARNED: list[Warned] = [
    Warned("evaluate-by-unknown-field", with_(EVAL, "--by", "colour"), "colour"),
    Warned("evaluate-by-field-with-brackets", with_(EVAL, "--by", "[bold]x"), "[bold]x"),
    Warned("calibrate-by-unknown-field", with_(CAL, "--calibrate-by", "colour"), "colour"),
    Warned("corpus-empty-chunk-id", EVAL, "id", {"corpus.jsonl": corpus_line(id="")}),
    Warned("gold-passages-not-in-corpus", EVAL, "corpus",
           {"gold.jsonl": add_line(gold_line(gold={"not-in-corpus-1": 1}))}),
    Warned("retriever-ids-not-in-corpus", with_(EVAL, "--retriever", "ghost_retriever.py:search"), "corpus",
           {"ghost_retriever.py": "def search(query, k):\n    return ['ghost-1', 'ghost-2']\n"}),
    Warned("results-metric-value-string", CAL, "q0",
           {"results.json": results_edit(
               lambda d: _first_set(d)["per_query"]["metrics"]["recall@10"].__setitem__(0, "high"))}),  # type: ignore[index]
    Warned("generate-stratify-by-unknown-field", with_(GEN, "--sample", "2", "--stratify-by", "colour"), "colour"),
    Warned("history-missing-file", ("history", "nothere.jsonl"), "nothere.jsonl"),
    Warned("gold-grade-negative", EVAL, "relevant", {"gold.jsonl": gold_grade("-1")}),
    Warned("gold-grade-huge-int", EVAL, "10000000000000000000000",
           {"gold.jsonl": gold_grade("10000000000000000000000")}),
]  # fmt: skip

REAL_PROCESS = "gold-malformed-json"
"""The one case also run as a real process (``python -m realrecall``): the process fails as the in-process
harness shows (exit 2, one line, nothing written). Every command's own real process is its success in
test_smoke.py (one process per command); its bad inputs run in-process here."""

KNOWN_FAILURES: dict[str, str] = {}
"""Cases that fail today (marked xfail strict): what the command does instead."""
