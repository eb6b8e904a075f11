"""Labels filled into gold queries: a query's missing ``type`` and ``form`` from the rules.

The rules themselves (``TypeRules``, the shipped ``type_rules.toml``) live in ``realrecall.labels``,
which generate and evaluate use as well; their names are re-exported here, where they used to live.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass

from realrecall.bulk import bulk_step
from realrecall.gold import GoldQuery, GoldSet
from realrecall.labels import FormRule, FormRules, TypeRule, TypeRules, default_type_rules, load_type_rules

__all__ = [
    "FormRule",
    "FormRules",
    "TypeRule",
    "TypeRules",
    "default_type_rules",
    "label_gold_set",
    "label_query",
    "load_type_rules",
]


def label_query(query: GoldQuery, rules: TypeRules | None = None, *, record_rule: bool = True) -> GoldQuery:
    """``query`` with a missing ``type`` and ``form`` filled in by the rules (its own always win).

    With ``record_rule``, a derived type names the rule that gave it (``type_rule``; ``default`` when
    none matched), as ``gold import`` records it, so that a reader can tell it from a written one.
    """
    has_form = query.metadata.get("form") is not None
    if query.type is not None and has_form:
        return query
    rules = rules or default_type_rules()
    metadata = dict(query.metadata)
    query_type = query.type
    if query_type is None:
        query_type, rule = rules.classify(query.query)
        if record_rule:
            metadata["type_rule"] = rule or "default"
    if not has_form:
        metadata["form"] = rules.classify_form(query.query)[0]
    return dataclasses.replace(query, type=query_type, metadata=metadata)


@bulk_step
def label_gold_set(gold: GoldSet, rules: TypeRules | None = None) -> GoldSet:
    """``gold`` with a missing type and form filled in, as evaluate does before slicing and scoring.

    No rule name is recorded: every field of a query becomes a slice of the report, and the rule
    names would add one of about ten values that says nothing about the retriever. ``gold`` itself
    is returned when no query lacks a label.
    """
    rules = rules or default_type_rules()
    if all(query.type is not None and query.metadata.get("form") is not None for query in gold):
        return gold
    # Many queries share a text (TREC and BEIR qrels have none, synthetic sets repeat templates): each
    # distinct text is classified once, which is most of the cost of 100k queries.
    types: dict[str, tuple[str, str | None]] = {}
    forms: dict[str, tuple[str, str | None]] = {}
    cached = _CachedRules(rules, types, forms)
    labelled = tuple(_label(query, cached) for query in gold)
    return GoldSet(labelled, name=gold.name, path=gold.path)


@dataclass(frozen=True)
class _CachedRules:
    """The classify calls label_query makes, remembered per text for one gold set."""

    rules: TypeRules
    types: dict[str, tuple[str, str | None]]
    forms: dict[str, tuple[str, str | None]]

    def classify(self, question: str) -> tuple[str, str | None]:
        found = self.types.get(question)
        if found is None:
            found = self.types[question] = self.rules.classify(question)
        return found

    def classify_form(self, question: str) -> tuple[str, str | None]:
        found = self.forms.get(question)
        if found is None:
            found = self.forms[question] = self.rules.classify_form(question)
        return found


def _label(query: GoldQuery, rules: _CachedRules) -> GoldQuery:
    """``label_query(query, record_rule=False)`` without re-checking what the query already checked."""
    has_form = query.metadata.get("form") is not None
    if query.type is not None and has_form:
        return query
    metadata = dict(query.metadata)
    query_type = query.type if query.type is not None else rules.classify(query.query)[0]
    if not has_form:
        metadata["form"] = rules.classify_form(query.query)[0]
    # dataclasses.replace would run __init__ and __post_init__, re-checking every grade (most of the
    # cost): the copy changes only the two labels of a query that was checked when it was made.
    labelled = copy.copy(query)  # GoldQuery has slots, no __dict__
    object.__setattr__(labelled, "type", query_type)
    object.__setattr__(labelled, "metadata", metadata)
    return labelled
