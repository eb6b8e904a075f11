"""The HTML report renders in a real browser (headless Chromium) and shows the headline."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from calibrate.results_builder import ranks_set, results_document
from realrecall.calibrate import calibrate
from realrecall.calibrate.report import render, write_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.skipif(
        CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)"
    ),
    pytest.mark.slow,  # a browser start per test
]


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    command = [
        str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}", *args,
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def html_report(tmp_path: Path) -> tuple[Path, str]:
    real = ranks_set("real", 30, 12, prefix="r", type="lookup") + ranks_set(
        "real", 5, 5, prefix="h", type="howto"
    )
    synthetic = ranks_set("synthetic", 90, 6, prefix="s", type="lookup") + ranks_set(
        "synthetic", 20, 4, prefix="c", type="compare"
    )
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "p1", "text": "question r1 answered here in a passage"}\n', encoding="utf-8")
    report = calibrate(results_document([("s", synthetic), ("r", real)], corpus_path=str(corpus)))
    path = tmp_path / "report.html"
    write_report(render(report, "html"), path)
    return path, report.headline.text


def test_chromium_renders_the_report_with_its_headline_and_charts(tmp_path: Path, html_report) -> None:
    path, headline = html_report
    result = chromium(tmp_path, "--dump-dom", path.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    assert f'<p class="headline" id="headline">{headline}</p>' in dom
    assert dom.count("<svg") >= 3
    assert "recall@10 by slice" in dom
    assert "lexical overlap with the gold passage" in dom


def test_chromium_screenshot_of_the_report_is_a_picture(tmp_path: Path, html_report) -> None:
    path, _ = html_report
    shot = tmp_path / "report.png"
    result = chromium(tmp_path, "--window-size=1280,1600", f"--screenshot={shot}", path.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000  # a blank page compresses to a few kilobytes
