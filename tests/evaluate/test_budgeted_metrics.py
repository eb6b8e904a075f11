"""Budgeted metrics (recall@Ntok, ndcg@Ntok): the prefix rule on known inputs, properties against
recall@k and nDCG@k, the corpus they need, and what results.json records (token_method, context_tokens)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError
from realrecall.evaluate import evaluate, load_results, write_results
from realrecall.evaluate.budget import ContextTokens, budget_depth, prefix_lengths
from realrecall.evaluate.metrics import parse_metric
from realrecall.evaluate.scoring import score, score_queries
from realrecall.gold import GoldQuery, GoldSet
from realrecall.runs import Run
from realrecall.tokens import ESTIMATE_METHOD, TokenCounter, metric_token_counter
from support import cli


@pytest.fixture(autouse=True)
def _estimated_tokens(monkeypatch, tmp_path_factory):
    # An empty tiktoken cache: every count is the documented estimate (4 characters a token), whatever
    # the machine has cached, so the figures below are exact.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path_factory.mktemp("no-tiktoken")))


def chunk(chunk_id: str, tokens: int) -> Chunk:
    return Chunk(chunk_id, "x" * (4 * tokens))  # exactly `tokens` tokens by the estimate


# a: 10 tokens, b: 100, c: 10, d: 50
CORPUS = Corpus((chunk("a", 10), chunk("b", 100), chunk("c", 10), chunk("d", 50)))
RUN = {"q1": ["a", "b", "c"], "q2": ["d", "c"], "q3": ["b", "a"]}
GOLD = {"q1": {"c": 1}, "q2": {"c": 2}, "q3": {"a": 1}}


def test_names_parse_and_bad_budgets_are_refused():
    assert parse_metric("recall@2000tok").budget == 2000
    assert parse_metric("ndcg@500tok").name == "ndcg@500tok"
    assert parse_metric("recall@10").budget is None
    with pytest.raises(InputError, match="takes no token budget"):
        parse_metric("mrr@100tok")
    with pytest.raises(InputError, match="bad token budget"):
        parse_metric("recall@0tok")
    with pytest.raises(InputError, match="bad token budget"):
        parse_metric("recall@tok")
    with pytest.raises(InputError, match="recall@Ntok"):
        parse_metric("nope@10")


def test_the_prefix_counts_whole_chunks_in_rank_order():
    tokens = ContextTokens(CORPUS)
    assert tokens.method == ESTIMATE_METHOD
    # q1 cumulates 10, 110, 120: a budget of 109 admits only "a" (b would cross it, and ends the prefix
    # even though c alone would still fit).
    assert prefix_lengths([RUN["q1"]], tokens, 109).tolist() == [1]
    assert prefix_lengths([RUN["q1"]], tokens, 110).tolist() == [2]
    assert prefix_lengths([RUN["q1"]], tokens, 9).tolist() == [0]
    assert prefix_lengths([RUN["q1"], (), ["nowhere"]], tokens, 10_000).tolist() == [3, 0, 1]


def test_known_values():
    values = score(
        GOLD, RUN, ["recall@3", "recall@120tok", "recall@60tok", "ndcg@120tok", "ndcg@60tok"], corpus=CORPUS
    )
    # 60 tokens: q1 keeps [a] (miss), q2 [d, c] (50 + 10: hit), q3 nothing (b alone is 100).
    assert values["recall@60tok"] == pytest.approx(1 / 3)
    # 120 tokens: q1 [a, b, c], q2 [d, c], q3 [b, a]: all hit.
    assert values["recall@120tok"] == 1.0
    assert values["recall@3"] == 1.0
    per_query = score_queries(GOLD, RUN, ["ndcg@60tok", "ndcg@120tok"], corpus=CORPUS)
    ndcg60 = dict(zip(per_query.query_ids, per_query.values["ndcg@60tok"].tolist(), strict=True))
    assert ndcg60 == {"q1": 0.0, "q2": pytest.approx(1 / 1.584962500721156), "q3": 0.0}


def test_ndcg_at_a_budget_is_ndcg_at_the_prefix_length():
    budgeted = score_queries(GOLD, RUN, ["ndcg@110tok"], corpus=CORPUS).values["ndcg@110tok"]
    # Prefixes at 110 tokens: q1 2 chunks, q2 2, q3 2 (100 + 10).
    at_two = score_queries(GOLD, RUN, ["ndcg@2"]).values["ndcg@2"]
    assert budgeted.tolist() == at_two.tolist()


def test_budgeted_metrics_need_the_corpus():
    with pytest.raises(InputError, match="recall@100tok counts the tokens of the retrieved chunks") as error:
        score(GOLD, RUN, ["recall@100tok"])
    assert "--corpus" in str(error.value)
    with pytest.raises(InputError, match="ndcg@5tok counts the tokens"):
        evaluate(gold_set(), run=run(), metrics=["ndcg@5tok"])


def gold_set() -> GoldSet:
    return GoldSet(tuple(GoldQuery(qid, f"question {qid}", judged) for qid, judged in GOLD.items()), name="g")


def run() -> Run:
    return Run.from_lists(RUN, name="r")


rankings = st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True, max_size=4)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), rankings, min_size=1))
def test_a_budget_holding_the_whole_run_equals_recall_at_its_depth(ranked):
    gold = {qid: GOLD[qid] for qid in ranked}
    whole = sum(chunk.text.__len__() // 4 for chunk in CORPUS.chunks)
    values = score(
        gold, ranked, ["recall@4", f"recall@{whole}tok", "ndcg@4", f"ndcg@{whole}tok"], corpus=CORPUS
    )
    assert values[f"recall@{whole}tok"] == values["recall@4"]
    assert values[f"ndcg@{whole}tok"] == values["ndcg@4"]


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), rankings.filter(bool), min_size=1))
def test_a_budget_smaller_than_the_first_chunk_scores_zero(ranked):
    gold = {qid: GOLD[qid] for qid in ranked}
    values = score(gold, ranked, ["recall@9tok", "ndcg@9tok"], corpus=CORPUS)  # the smallest chunk is 10
    assert values == {"recall@9tok": 0.0, "ndcg@9tok": 0.0}


def test_results_record_the_token_method_and_context_tokens(tmp_path):
    result = evaluate(gold_set(), corpus=CORPUS, run=run(), metrics=["recall@1", "recall@2", "recall@120tok"])
    assert result.token_method == ESTIMATE_METHOD
    (scored,) = result.gold_sets
    # top 1: a, d, b = 10 + 50 + 100; top 2: 110 + 60 + 110.
    assert scored.context_tokens == {1: pytest.approx(160 / 3), 2: pytest.approx(280 / 3)}
    path = tmp_path / "results.json"
    write_results(result, path)
    data = json.loads(path.read_text())
    assert data["token_method"] == ESTIMATE_METHOD
    assert data["gold_sets"][0]["context_tokens"] == {"1": 160 / 3, "2": 280 / 3}
    loaded = load_results(path)
    assert loaded.token_method == ESTIMATE_METHOD
    assert loaded.gold_sets[0].context_tokens == scored.context_tokens
    data["gold_sets"][0]["context_tokens"] = {"ten": 1}
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="context_tokens of gold set 'g' maps cut-offs"):
        load_results(path)


def test_without_a_corpus_nothing_is_counted():
    result = evaluate(gold_set(), run=run(), metrics=["recall@1"])
    assert result.token_method is None
    assert result.gold_sets[0].context_tokens is None
    assert "token_method" not in result.to_dict()


def test_a_retriever_is_asked_deep_enough_to_fill_the_budget():
    tokens = ContextTokens(CORPUS)
    # The smallest chunks (10, 10, 50) fit in 70 tokens: a prefix holds at most 3, and one more ends it.
    assert budget_depth(tokens, [70], at_least=1) == 4
    assert budget_depth(tokens, [15], at_least=10) == 10
    assert budget_depth(tokens, [10_000], at_least=1) == len(CORPUS)


def test_the_metric_counter_is_the_estimate_without_a_cached_encoding():
    counter = metric_token_counter()
    assert isinstance(counter, TokenCounter)
    assert (counter.method, counter.count("x" * 41)) == (ESTIMATE_METHOD, 11)


def test_cli_run_without_a_corpus_is_one_line(tmp_path):
    gold_file = tmp_path / "gold.jsonl"
    gold_file.write_text("".join(json.dumps(q.to_record()) + "\n" for q in gold_set()))
    run_file = tmp_path / "run.tsv"
    run_file.write_text(
        "".join(
            f"{qid} Q0 {pid} {rank} {10 - rank} r\n"
            for qid, ids in RUN.items()
            for rank, pid in enumerate(ids, 1)
        )
    )
    done = cli.run(
        "evaluate", "--gold", str(gold_file), "--run", str(run_file), "--metrics", "recall@2000tok"
    )
    assert done.returncode == 2
    assert done.err_lines == [
        "error: recall@2000tok counts the tokens of the retrieved chunks, which needs the corpus; "
        "give the corpus (--corpus CHUNKS) the run ranks"
    ]
    corpus_file = tmp_path / "corpus.jsonl"
    corpus_file.write_text("".join(json.dumps({"id": c.id, "text": c.text}) + "\n" for c in CORPUS.chunks))
    results = tmp_path / "results.json"
    done = cli.run(
        "evaluate", "--gold", str(gold_file), "--run", str(run_file), "--corpus", str(corpus_file),
        "--metrics", "recall@120tok,recall@10", "--output", str(results),
        env={"TIKTOKEN_CACHE_DIR": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(Path(results).read_text())
    assert data["metrics"] == ["recall@120tok", "recall@10"]
    assert data["gold_sets"][0]["overall"]["metrics"]["recall@120tok"] == 1.0
