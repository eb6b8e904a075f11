"""Judge marks (``realrecall.formats.judge_marks``): read from qrels and JSON Lines gold sets, kept
through copying and merging, and invisible to the TREC tools."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from realrecall.errors import InputError
from realrecall.formats.judge_marks import judge_mark, mark_model, read_qrels_marks
from realrecall.gold import GoldQuery, GoldSet, load_gold, write_gold
from support.trec_readers import READERS, choose

HUMAN = "q1 0 p1 2\nq2 0 p2 1\nq3 0 p3 2\n"
JUDGE = "q1 judge:gpt-4o-mini p5 2\nq2 judge:gpt-4o-mini p6 0\nq3 judge:llama_3 p7 3\n"


@pytest.mark.parametrize("model", ["gpt-4o-mini", "meta-llama/Llama 3 8B", "", None, "  "])
def test_a_judge_mark_is_one_field_that_names_its_model(model: str | None) -> None:
    mark = judge_mark(model)
    assert mark.split() == [mark]
    expected = "_".join((model or "").split()) or "unknown"
    assert mark_model(mark) == expected
    assert mark_model("0") is None
    assert mark_model("Q0") is None


@pytest.mark.parametrize("reader", READERS)
def test_a_merged_qrels_file_gives_every_grade_and_marks_the_judges_pairs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str
) -> None:
    exact = choose(reader, monkeypatch)
    merged = tmp_path / "merged.qrels"
    merged.write_text(HUMAN + JUDGE)  # people's qrels and the judge's, concatenated

    gold = load_gold(merged, exact=exact)

    assert gold.qrels() == {"q1": {"p1": 2, "p5": 2}, "q2": {"p2": 1, "p6": 0}, "q3": {"p3": 2, "p7": 3}}
    assert gold.judged_by_judge() == {
        "q1": {"p5": "gpt-4o-mini"},
        "q2": {"p6": "gpt-4o-mini"},
        "q3": {"p7": "llama_3"},
    }


def test_a_plain_qrels_file_has_no_judge_pair_and_is_not_read_line_by_line_for_marks(tmp_path: Path) -> None:
    plain = tmp_path / "plain.qrels"
    plain.write_text(HUMAN + "# a comment naming judge, no mark\n")
    assert load_gold(plain).judged_by_judge() == {}
    # A byte no UTF-8 line reader takes: the mark scan finds no mark and reads no line.
    broken = tmp_path / "broken.qrels"
    broken.write_bytes(b"q1 0 p1 1\nq2 0 \xff 1\n")
    assert read_qrels_marks(broken) == {}


def test_a_qrels_gold_set_written_as_json_lines_keeps_its_judge_marks(tmp_path: Path) -> None:
    merged = tmp_path / "merged.qrels"
    merged.write_text(HUMAN + JUDGE)
    read = load_gold(merged)
    # TREC qrels carry no query text, which a JSON Lines gold set needs: given here.
    texts = GoldSet(
        tuple(replace(q, query=f"text of {q.query_id}") for q in read), judge_marks=read.judge_marks
    )
    copy = tmp_path / "copy.jsonl"
    write_gold(copy, texts)
    assert load_gold(copy).judged_by_judge() == read.judged_by_judge()
    assert load_gold(copy).qrels() == read.qrels()


def test_a_pair_graded_alike_by_people_and_the_judge_is_peoples(tmp_path: Path) -> None:
    both = tmp_path / "both.qrels"
    both.write_text("q1 judge:m p1 2\n" + HUMAN + "# q9 judge:m p9 1\n")
    gold = load_gold(both)
    assert gold.qrels()["q1"] == {"p1": 2}
    assert gold.judged_by_judge() == {}


def test_two_different_grades_of_one_pair_are_refused_whoever_gave_them(tmp_path: Path) -> None:
    clash = tmp_path / "clash.qrels"
    clash.write_text(HUMAN + "q1 judge:m p1 0\n")
    with pytest.raises(InputError, match="graded 0 here and 2 on line 1"):
        load_gold(clash)


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_jsonl_gold_set_marks_the_judges_passages_in_judged_by_and_keeps_them_when_written(
    tmp_path: Path,
) -> None:
    records = [
        {"query_id": "q1", "query": "a b", "gold": {"p1": 2, "p5": 1}, "judged_by": {"p5": "judge:gpt-4o"}},
        {"query_id": "q2", "query": "c d", "gold": {"p2": 1}},
    ]
    gold = load_gold(_jsonl(tmp_path / "gold.jsonl", records))
    assert gold.judged_by_judge() == {"q1": {"p5": "gpt-4o"}}

    copy = tmp_path / "copy.jsonl"
    write_gold(copy, gold)
    assert load_gold(copy).judged_by_judge() == {"q1": {"p5": "gpt-4o"}}
    # A gold set made in Python reads the same field.
    built = GoldSet((GoldQuery("q1", "a b", {"p1": 2, "p5": 1}, metadata={"judged_by": {"p5": "judge:x"}}),))
    assert built.judged_by_judge() == {"q1": {"p5": "x"}}


@pytest.mark.parametrize(
    ("judged_by", "message"),
    [
        (["p5"], '"judged_by" must be an object'),
        ({"p5": "gpt-4o"}, "not a judge mark"),
        ({"p5": 3}, "not a judge mark"),
        ({"p9": "judge:gpt-4o"}, 'which "gold" does not grade'),
    ],
)
def test_a_bad_judged_by_is_one_line_naming_the_file_and_line(
    tmp_path: Path, judged_by: object, message: str
) -> None:
    records = [
        {"query_id": "q0", "query": "x", "gold": {"p0": 1}},
        {"query_id": "q1", "query": "a b", "gold": {"p1": 2, "p5": 1}, "judged_by": judged_by},
    ]
    path = _jsonl(tmp_path / "gold.jsonl", records)
    with pytest.raises(InputError, match=message) as caught:
        load_gold(path)
    assert caught.value.line == 2
    assert str(path) in str(caught.value)


def _per_query(qrels: dict, run: dict, measures: set[str]) -> dict:
    import pytrec_eval

    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


def test_pytrec_eval_ir_measures_and_ranx_read_a_marked_qrels_file_as_the_unmarked_one(
    tmp_path: Path,
) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    ir_measures = pytest.importorskip("ir_measures")
    ranx = pytest.importorskip("ranx")
    plain, marked = tmp_path / "plain.qrels", tmp_path / "marked.qrels"
    plain.write_text(HUMAN + JUDGE.replace("judge:gpt-4o-mini", "0").replace("judge:llama_3", "0"))
    marked.write_text(HUMAN + JUDGE)
    run = {"q1": {"p5": 3.0, "p1": 2.0}, "q2": {"p6": 3.0, "p2": 1.0}, "q3": {"p9": 2.0, "p7": 1.0}}

    with plain.open() as a, marked.open() as b:
        assert pytrec_eval.parse_qrel(a) == pytrec_eval.parse_qrel(b)
    with plain.open() as a, marked.open() as b:
        scores = [_per_query(pytrec_eval.parse_qrel(f), run, {"ndcg_cut.10", "recip_rank"}) for f in (a, b)]
    assert scores[0] == scores[1]

    def measured(path: Path) -> list[tuple[str, str, float]]:
        qrels = list(ir_measures.read_trec_qrels(str(path)))
        return sorted((str(m.measure), m.query_id, m.value) for m in ir_measures.iter_calc(
            [ir_measures.nDCG @ 10, ir_measures.RR], qrels, run
        ))  # fmt: skip

    assert measured(plain) == measured(marked)
    assert ranx.Qrels.from_file(str(plain), kind="trec").to_dict() == (
        ranx.Qrels.from_file(str(marked), kind="trec").to_dict()
    )
