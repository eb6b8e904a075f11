"""The labeller: the rules' labels of texts, each distinct text classified once, columns kept by content."""

from __future__ import annotations

import pytest

from realrecall.labels import Labeller, TypeRules, default_labeller, default_type_rules, labelling

TEXTS = ["why does sync fail?", "ERR_SYNC_042", "sync settings", "why does sync fail?", "", "é \u2028 \ud800"]


class CountingRules(TypeRules):
    """The built-in rules, counting the texts they classify."""

    def __init__(self) -> None:
        built_in = default_type_rules()
        super().__init__(rules=built_in.rules, default=built_in.default, forms=built_in.forms)
        object.__setattr__(self, "asked", [])

    def classify(self, question: str) -> tuple[str, str | None]:
        self.asked.append(question)  # type: ignore[attr-defined]
        return super().classify(question)


def test_labels_are_the_rules_and_each_distinct_text_is_classified_once() -> None:
    rules = CountingRules()
    labeller = Labeller(rules)
    assert labeller.types(TEXTS) == tuple(default_type_rules().classify(text)[0] for text in TEXTS)
    assert labeller.forms(TEXTS) == tuple(default_type_rules().classify_form(text)[0] for text in TEXTS)
    assert [labeller.type_of(text) for text in TEXTS] == list(labeller.types(TEXTS))
    assert sorted(rules.asked) == sorted(set(TEXTS))  # type: ignore[attr-defined]


def test_a_column_is_kept_by_its_content_past_the_bound_of_texts_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A million different questions are more than the labeller keeps one by one: the column itself
    # (a gold file's questions) is kept, by its content, so asking again labels nothing.
    monkeypatch.setattr(labelling, "_TEXTS", 0)
    rules = CountingRules()
    labeller = Labeller(rules)
    first = labeller.types(TEXTS)
    assert len(rules.asked) == len(TEXTS)  # type: ignore[attr-defined]
    assert labeller.types(list(TEXTS)) is first  # another list of the same texts
    assert len(rules.asked) == len(TEXTS)  # type: ignore[attr-defined]
    # Other content is another column: one text more, or the same characters parted otherwise.
    longer, joined = [*TEXTS, "x"], ["why does sync fail?ERR_SYNC_042", *TEXTS[2:]]
    labeller.types(longer)
    labeller.types(joined)
    assert len(rules.asked) == len(TEXTS) + len(longer) + len(joined)  # type: ignore[attr-defined]


def test_only_the_last_few_columns_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(labelling, "_TEXTS", 0)
    rules = CountingRules()
    labeller = Labeller(rules)
    columns = [[f"question {n}"] for n in range(labelling._COLUMNS + 1)]
    for column in columns:
        labeller.types(column)
    labeller.types(columns[-1])  # kept
    assert len(rules.asked) == len(columns)  # type: ignore[attr-defined]
    labeller.types(columns[0])  # the oldest went
    assert len(rules.asked) == len(columns) + 1  # type: ignore[attr-defined]


def test_the_default_labeller_is_shared_and_uses_the_built_in_rules() -> None:
    assert default_labeller() is default_labeller()
    assert default_labeller().rules is default_type_rules()
