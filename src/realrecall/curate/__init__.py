"""The gold-set lifecycle: import a real set from existing data, review misses, add judged passages
(with who, when and why), and expand gold ids with near-duplicate passages.

Each CLI command under ``realrecall gold`` is a thin layer over one function here.
"""

from __future__ import annotations

import typing as _typing

from realrecall._lazy import lazy_exports as _lazy_exports

# Exported lazily: a command that needs one name would otherwise load the whole lifecycle (import,
# review, expand, duplicates) at start-up.
if _typing.TYPE_CHECKING:
    from realrecall.curate.duplicates import DuplicatePair as DuplicatePair
    from realrecall.curate.duplicates import NearDuplicates as NearDuplicates
    from realrecall.curate.duplicates import find_near_duplicates as find_near_duplicates
    from realrecall.curate.expand import ExpandResult as ExpandResult
    from realrecall.curate.expand import expand_gold as expand_gold
    from realrecall.curate.importer import ImportResult as ImportResult
    from realrecall.curate.importer import ImportSpec as ImportSpec
    from realrecall.curate.importer import UnmatchedRow as UnmatchedRow
    from realrecall.curate.importer import import_gold as import_gold
    from realrecall.curate.judgements import AddResult as AddResult
    from realrecall.curate.judgements import Judgement as Judgement
    from realrecall.curate.judgements import JudgementLog as JudgementLog
    from realrecall.curate.judgements import Judgements as Judgements
    from realrecall.curate.judgements import add_judgements as add_judgements
    from realrecall.curate.judgements import read_judgements as read_judgements
    from realrecall.curate.judgements import record_history as record_history
    from realrecall.curate.matching import PassageMatcher as PassageMatcher
    from realrecall.curate.migrate import MigrateResult as MigrateResult
    from realrecall.curate.migrate import migrate_gold as migrate_gold
    from realrecall.curate.normalise import normalise_question as normalise_question
    from realrecall.curate.normalise import normalise_title as normalise_title
    from realrecall.curate.normalise import normalise_url as normalise_url
    from realrecall.curate.normalise import stable_query_id as stable_query_id
    from realrecall.curate.review import Miss as Miss
    from realrecall.curate.review import Passage as Passage
    from realrecall.curate.review import Retrieved as Retrieved
    from realrecall.curate.review import ReviewList as ReviewList
    from realrecall.curate.review import find_misses as find_misses
    from realrecall.curate.review import pending as pending
    from realrecall.curate.review import write_judgement_template as write_judgement_template
    from realrecall.curate.tables import Table as Table
    from realrecall.curate.tables import read_table as read_table
    from realrecall.evaluate.results import read_per_query as read_per_query
    from realrecall.evaluate.results import records_for as records_for
    from realrecall.labels import TypeRule as TypeRule
    from realrecall.labels import TypeRules as TypeRules
    from realrecall.labels import default_type_rules as default_type_rules
    from realrecall.labels import load_type_rules as load_type_rules
    from realrecall.labels.language import LanguageDetector as LanguageDetector
    from realrecall.text_features import shingles as shingles

__all__, __getattr__, __dir__ = _lazy_exports(__name__, __file__)
