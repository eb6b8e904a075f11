"""Every report format starts with the headline and holds the figures; the HTML is self-contained."""

from __future__ import annotations

import io
import json
import re

import pytest
from rich.console import Console

from calibrate.results_builder import ranks_set, results_document
from realrecall.calibrate import CalibrationReport, calibrate
from realrecall.calibrate.report import render, report_table
from realrecall.tracking import figures_as_metrics


@pytest.fixture(scope="module")
def report() -> CalibrationReport:
    real = ranks_set("real", 30, 10, prefix="rl", type="lookup") + ranks_set(
        "real", 1, 0, prefix="rh", type="howto"
    )
    synthetic = ranks_set("synthetic", 50, 2, prefix="sl", type="lookup") + ranks_set(
        "synthetic", 8, 2, prefix="sc", type="compare"
    )
    return calibrate(results_document([("s", synthetic), ("r", real)]), answers={"rl0": True, "rl35": True})


def test_json_first_line_holds_the_headline_and_names_the_agreed_fields(report: CalibrationReport) -> None:
    text = render(report, "json")
    first = text.splitlines()[0]
    assert first.startswith('{"headline": {"text": "Quote real recall@10')
    data = json.loads(text)
    head = data["headline"]
    for name in ("metric", "real", "real_ci", "synthetic", "gap", "n_real", "n_synthetic"):
        assert name in head
    assert head["n_real"] == 41
    assert head["real"] == pytest.approx(31 / 41)
    assert len(head["real_ci"]) == 2
    compare = next(s for s in data["slices"] if s["metric"] == "recall@10" and s["value"] == "compare")
    assert compare["field"] == "type"
    assert compare["real"] is None  # an empty slice is null, not NaN
    assert compare["n_synthetic"] == 10
    assert data["answers"]["counts"]["Lucky"] == 1


def test_markdown_first_line_is_the_headline(report: CalibrationReport) -> None:
    text = render(report, "markdown")
    assert text.splitlines()[0] == report.headline.text
    assert "| type=compare | n/a | n/a | 0 |" in text
    assert "## Calibrated estimate" in text


def test_table_prints_the_headline_first(report: CalibrationReport) -> None:
    console = Console(record=True, width=140, soft_wrap=True)
    console.print(report_table(report))
    assert console.export_text().splitlines()[0] == report.headline.text


def test_html_is_one_self_contained_file_with_the_charts(report: CalibrationReport) -> None:
    page = render(report, "html")
    assert "<script" not in page
    assert "<link" not in page
    assert "url(" not in page
    assert not re.search(r"\bsrc=", page)
    # The only URL is the SVG namespace, which is a name, not a fetch.
    assert set(re.findall(r"https?://[^\"' )]+", page)) == {"http://www.w3.org/2000/svg"}
    assert page.count("<svg") >= 3
    assert 'class="band"' in page  # interval bands on the recall@k curve
    assert page.count('class="gap-bar"') >= 2
    assert f'<p class="headline" id="headline">{report.headline.text}</p>' in page


def test_unknown_format_names_the_choices(report: CalibrationReport) -> None:
    from realrecall.errors import InputError

    with pytest.raises(InputError, match="choose from table, markdown, json, html"):
        render(report, "pdf")


@pytest.mark.parametrize(
    "sets",
    [
        [("s", ranks_set("synthetic", 3, 1, prefix="s"))],  # no real query at all
        [("r", ranks_set("real", 0, 1, prefix="r"))],  # one real query, no synthetic
        [("s", []), ("r", ranks_set("real", 1, 0, prefix="r", type="x"))],  # an empty gold set
    ],
    ids=["synthetic-only", "single-real-query", "empty-gold-set"],
)
def test_every_format_renders_one_sided_and_tiny_sets(sets: list) -> None:
    report = calibrate(results_document(sets))
    for name in ("markdown", "json", "html"):
        text = render(report, name)
        assert report.headline.text.split(":")[0] in text
    json.loads(render(report, "json"))  # strict JSON: no NaN slipped through
    console = Console(record=True, width=120, soft_wrap=True)
    console.print(report_table(report))
    assert console.export_text().startswith(report.headline.text)


def test_html_with_history_draws_the_trend_of_the_scheduled_runs(report: CalibrationReport) -> None:
    history = [
        {"time": f"2026-11-{day:02d}T06:00:00+00:00",
         "figures": {"metric": "recall@10", "real": real, "real_ci": [real - 0.07, real + 0.07],
                     "synthetic": 0.94, "calibrated": None if day < 3 else real + 0.01}}
        for day, real in ((1, 0.70), (2, 0.71), (3, 0.66), (4, 0.69))
    ]  # fmt: skip
    page = render(report, "html", history=history)
    assert "recall@10 over scheduled runs" in page
    assert "2026-11-01" in page
    assert "2026-11-04" in page
    trend = page[page.index("over scheduled runs") :]
    trend = trend[: trend.index("</svg>")]
    assert trend.count("<polyline") == 3  # synthetic, real and calibrated
    assert "<polygon" in trend  # the real interval band
    assert "over scheduled runs" not in render(report, "html")


def test_the_report_is_titled_by_the_retrievers_name_not_its_parameter_string() -> None:
    document = results_document(
        [("s", ranks_set("synthetic", 9, 1, prefix="s")), ("r", ranks_set("real", 6, 4, prefix="r"))]
    )
    document["retriever"] = {"name": "bm25", "description": "bm25s 0.3.16 k1=0.9 b=0.4 method=lucene"}
    report = calibrate(document, n_resamples=200)
    html = render(report, "html")
    assert "<h1>Calibration of bm25</h1>" in html
    assert "bm25s 0.3.16 k1=0.9 b=0.4 method=lucene" in html  # beneath the title, not in it
    assert render(report, "markdown").splitlines()[2] == "# Calibration of bm25"
    assert json.loads(render(report, "json"))["retriever_name"] == "bm25"


def test_the_calibrated_table_says_where_each_estimate_comes_from_in_every_format() -> None:
    # lookup: measured on 10 real queries; howto: one real query; compare: no real query (predicted).
    real = ranks_set("real", 7, 3, prefix="rl", type="lookup") + ranks_set(
        "real", 1, 0, prefix="rh", type="howto"
    )
    synthetic = (
        ranks_set("synthetic", 18, 2, prefix="sl", type="lookup")
        + ranks_set("synthetic", 10, 0, prefix="sh", type="howto")
        + ranks_set("synthetic", 9, 1, prefix="sc", type="compare")
    )
    report = calibrate(results_document([("s", synthetic), ("r", real)]), n_resamples=200)
    assert report.calibrated is not None
    assert report.calibrated.model is not None
    predicted = f"predicted: {report.calibrated.model.model}"
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(report_table(report))
    for text in (render(report, "markdown"), render(report, "html"), console.export_text()):
        lines = text.replace("<tr", "\n<tr").splitlines()  # an HTML table is one line
        assert any("howto" in line and "1 real query" in line for line in lines), text
        # The table's row (the line names the stratum as type=howto, beside the share it measures).
        assert not any("howto" in line and "measured" in line and "type=howto" not in line for line in lines)
        assert any("compare" in line and predicted in line for line in lines), text
        assert any("lookup" in line and "measured" in line for line in lines), text
    # The same word in JSON, in the line and in MLflow's figures: one definition, Stratum.figure.
    strata = json.loads(render(report, "json"))["calibrated"]["strata"]
    assert {s["value"]: s["figure"] for s in strata} == {
        "lookup": "measured", "howto": "1 real query", "compare": "predicted"
    }  # fmt: skip
    howto = next(s for s in report.calibrated.strata if s.value == "howto")
    assert f"({howto.weight:.0%} of traffic, type=howto, on 1 real query each" in report.calibrated.text
    figures = figures_as_metrics(report)
    assert figures["calibrated/single_query_share"] == howto.weight
    assert figures["calibrated/measured_share"] == report.calibrated.measured_share


@pytest.mark.parametrize(
    ("low", "high", "ticks"),
    [(0.0, 1.0, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]), (0.0, 35.0, [0.0, 10.0, 20.0, 30.0]),
     (0.0, 45.0, [0.0, 10.0, 20.0, 30.0, 40.0]), (0.0, 12.0, [0.0, 5.0, 10.0]),
     (0.0, 0.3, [0.0, 0.1, 0.2, 0.3])],
)  # fmt: skip
def test_histogram_ticks_stand_at_round_values(low: float, high: float, ticks: list[float]) -> None:
    from realrecall.calibrate.report.svg import Series, histograms, nice_ticks

    assert nice_ticks(low, high) == ticks
    svg = histograms([Series("real", "#000", [low, high])], title="t", low=low, high=high, bins=7)
    labels = [float(x) for x in re.findall(r'text-anchor="middle" [^>]*>(-?[0-9.e+-]+)</text>', svg)]
    assert labels == ticks  # never a bin edge such as 0.428571 or 3.5


def test_gap_chart_ticks_stand_at_round_values() -> None:
    # The gap chart's axis was labelled at its widest whisker: -0.62, +0.00, +0.62 (issue 28).
    from realrecall.calibrate.report.svg import Bar, gap_bars

    svg = gap_bars([Bar("type=a", 0.04, -0.62, 0.19), Bar("type=b", 0.22, 0.13, 0.34)], title="gap")
    labels = [float(x) for x in re.findall(r'text-anchor="middle" [^>]*>([-+]?[0-9.]+)</text>', svg)]
    assert labels == [-1.0, -0.5, 0.0, 0.5, 1.0]
