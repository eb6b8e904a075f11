"""calibrate's and compare's settings (``calibrate.settings``): each rule once, whoever gives the value."""

from __future__ import annotations

import typing

import pytest

from calibrate.results_builder import ranks_set, results_document
from realrecall.calibrate import calibrate, compare
from realrecall.calibrate.comparison import TESTS
from realrecall.calibrate.settings import TEST_NAMES, CalibrateSettings, CompareSettings, TestName
from realrecall.errors import InputError, SettingError
from support import cli


def results() -> dict[str, typing.Any]:
    real, synthetic = ranks_set("real", 4, 1, prefix="r"), ranks_set("synthetic", 4, 1, prefix="s")
    return results_document([("r", real), ("s", synthetic)])


def test_the_resampling_rules_are_one_message_in_calibrate_compare_and_their_commands(tmp_path):
    expected = "n_resamples must be at least 100 for an interval, got 10"
    for attempt in (
        lambda: CalibrateSettings(n_resamples=10),
        lambda: CompareSettings(n_resamples=10),
        lambda: calibrate(results(), n_resamples=10),
        lambda: compare(results(), results(), n_resamples=10),
    ):
        with pytest.raises(SettingError) as caught:
            attempt()
        assert str(caught.value).startswith(expected)
    for command in (["calibrate", "results.json"], ["compare", "a.json", "b.json"]):
        done = cli.run(*command, "--n-resamples", "10", cwd=tmp_path)
        assert done.err_lines == [f"error: --{expected.replace('_', '-')}; use 1000 or more"]


def test_a_stale_bound_is_named_by_its_own_option_on_the_command_line(tmp_path):
    done = cli.run("calibrate", "results.json", "--max-age", "-3", cwd=tmp_path)
    assert done.err_lines == [
        "error: --max-age must be a number of 0 or more, got -3.0; see 'realrecall calibrate --help'"
    ]


def test_an_input_given_as_an_object_and_as_a_path_is_refused(tmp_path):
    with pytest.raises(SettingError, match="calibrate_on is given twice"):
        calibrate(results(), calibrate_on=results(), settings=CalibrateSettings(calibrate_on=tmp_path / "x"))


def test_results_mode_refuses_the_options_only_one_call_mode_reads_and_names_them(tmp_path):
    done = cli.run(
        "calibrate", "results.json", "--run", "run.trec", "--k", "5", "--workers", "2", cwd=tmp_path
    )
    assert done.err_lines == [
        "error: --run, --workers, --k apply to one-call mode (--synthetic/--real); "
        "results files are scored already: pass them to evaluate"
    ]


def test_compares_test_names_are_its_registry_of_tests():
    assert set(TEST_NAMES) == set(TESTS) == set(typing.get_args(TestName))


def test_calibrate_takes_its_settings_as_an_object_or_as_keywords_over_one():
    given = CalibrateSettings(metric="recall@1", confidence=0.9)
    by_object = calibrate(results(), settings=given)
    by_keywords = calibrate(results(), metric="recall@1", confidence=0.9)
    over = calibrate(results(), settings=given, confidence=0.8)
    assert by_object.headline == by_keywords.headline
    assert (by_object.confidence, over.confidence, over.metric) == (0.9, 0.8, "recall@1")
    with pytest.raises(
        InputError, match="'confidance' is not a setting of calibrate; did you mean 'confidence'"
    ):
        calibrate(results(), confidance=0.9)
