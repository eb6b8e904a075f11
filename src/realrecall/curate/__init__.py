"""The gold-set lifecycle: import a real set from existing data, review misses, add judged passages
(with who, when and why), and expand gold ids with near-duplicate passages.

Each CLI command under ``realrecall gold`` is a thin layer over one function here.
"""

from __future__ import annotations

from realrecall.curate.duplicates import DuplicatePair, NearDuplicates, find_near_duplicates
from realrecall.curate.expand import ExpandResult, expand_gold
from realrecall.curate.importer import ImportResult, ImportSpec, UnmatchedRow, import_gold
from realrecall.curate.judgements import (
    AddResult,
    Judgement,
    JudgementLog,
    Judgements,
    add_judgements,
    read_judgements,
    record_history,
)
from realrecall.curate.language import LanguageDetector
from realrecall.curate.matching import PassageMatcher
from realrecall.curate.migrate import MigrateResult, migrate_gold
from realrecall.curate.normalise import normalise_question, normalise_title, normalise_url, stable_query_id
from realrecall.curate.review import (
    Miss,
    Passage,
    Retrieved,
    ReviewList,
    find_misses,
    pending,
    write_judgement_template,
)
from realrecall.curate.tables import Table, read_table
from realrecall.curate.type_rules import TypeRule, TypeRules, default_type_rules, load_type_rules
from realrecall.evaluate.results import read_per_query, records_for
from realrecall.text_features import shingles

__all__ = [
    "AddResult",
    "DuplicatePair",
    "ExpandResult",
    "ImportResult",
    "ImportSpec",
    "Judgement",
    "JudgementLog",
    "Judgements",
    "LanguageDetector",
    "MigrateResult",
    "Miss",
    "NearDuplicates",
    "Passage",
    "PassageMatcher",
    "Retrieved",
    "ReviewList",
    "Table",
    "TypeRule",
    "TypeRules",
    "UnmatchedRow",
    "add_judgements",
    "default_type_rules",
    "expand_gold",
    "find_misses",
    "find_near_duplicates",
    "import_gold",
    "load_type_rules",
    "migrate_gold",
    "normalise_question",
    "normalise_title",
    "normalise_url",
    "pending",
    "read_judgements",
    "read_per_query",
    "read_table",
    "record_history",
    "records_for",
    "shingles",
    "stable_query_id",
    "write_judgement_template",
]
