"""ranx as a third oracle, with its own numba kernels, for every metric of the registry (relevance level 1).

ranx names measures in its own words: ``_RANX`` translates the trec_eval measures the registry names
(``Metric.trec_eval_measure``) into them, so a metric added to the registry is checked here with no
edit, as long as it equals a trec_eval measure ranx has. ranx compiles its kernels on first use
(about 40 s of CPU with a cold numba cache, 7 s warm), hence the slow mark.
"""

from __future__ import annotations

import re

import pytest

from realrecall.evaluate.metrics import parse_metric
from realrecall.evaluate.scoring import score_queries

pytestmark = pytest.mark.slow
ranx = pytest.importorskip("ranx")

# trec_eval's measure (the part before a cut-off) -> ranx's name for the same measure.
_RANX = {
    "success": "hit_rate",
    "recall": "recall",
    "P": "precision",
    "recip_rank": "mrr",
    "ndcg_cut": "ndcg",
    "ndcg": "ndcg",
}


def _ranx_name(name: str) -> str:
    measure, depth, _ = parse_metric(name).trec_eval_oracle()  # type: ignore[misc]
    cut = re.fullmatch(r"(.+)_(\d+)", measure)
    base, k = (cut.group(1), int(cut.group(2))) if cut else (measure, depth)
    assert base in _RANX, f"{name} equals trec_eval's {measure}: add ranx's name for {base} to _RANX"
    return _RANX[base] if k is None else f"{_RANX[base]}@{k}"


@pytest.mark.parametrize("seed", range(3))
def test_every_registry_metric_equals_ranx_per_query(
    random_case, registry_names: list[str], seed: int
) -> None:
    qrels, run = random_case(seed)
    names = {name: _ranx_name(name) for name in registry_names}
    # Level 1: a passage is relevant from grade 1 up; ranx reads the positive grades alone, as gains too.
    relevant = {qid: {pid: g for pid, g in judged.items() if g > 0} for qid, judged in qrels.items()}
    relevant = {qid: judged for qid, judged in relevant.items() if judged}
    expected = ranx.evaluate(
        ranx.Qrels(relevant),
        ranx.Run({qid: ranked for qid, ranked in run.items() if qid in relevant}),
        list(dict.fromkeys(names.values())),
        return_mean=False,
        make_comparable=True,
    )
    order = sorted(relevant)  # ranx's per-query values follow its sorted query ids

    scores = score_queries(qrels, run, list(names))

    for ours, theirs in names.items():
        per_query = dict(zip(order, map(float, expected[theirs]), strict=True))
        if parse_metric(ours).trec_eval_oracle()[2]:  # type: ignore[index]
            # complete@k: 1 exactly where the measure is 1 (ranx's recall may round: compare near 1).
            per_query = {qid: float(abs(value - 1.0) < 1e-12) for qid, value in per_query.items()}
        for i, qid in enumerate(scores.query_ids):
            if qid in per_query:
                assert float(scores.values[ours][i]) == pytest.approx(per_query[qid], abs=1e-12), (
                    f"{ours} {qid}"
                )
