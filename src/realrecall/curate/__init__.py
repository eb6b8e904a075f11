"""The gold-set lifecycle: import a real set from existing data, review misses, add judged passages
(with who, when and why), and expand gold ids with near-duplicate passages.

Each CLI command under ``realrecall gold`` is a thin layer over one function here.
"""

from __future__ import annotations

import typing as _typing

from realrecall._lazy import lazy_getattr as _lazy_getattr

# Exported lazily: a command that needs one name would otherwise load the whole lifecycle (import,
# review, expand, duplicates) at start-up.
_LAZY = {
    "DuplicatePair": "realrecall.curate.duplicates",
    "NearDuplicates": "realrecall.curate.duplicates",
    "find_near_duplicates": "realrecall.curate.duplicates",
    "ExpandResult": "realrecall.curate.expand",
    "expand_gold": "realrecall.curate.expand",
    "ImportResult": "realrecall.curate.importer",
    "ImportSpec": "realrecall.curate.importer",
    "UnmatchedRow": "realrecall.curate.importer",
    "import_gold": "realrecall.curate.importer",
    "AddResult": "realrecall.curate.judgements",
    "Judgement": "realrecall.curate.judgements",
    "JudgementLog": "realrecall.curate.judgements",
    "Judgements": "realrecall.curate.judgements",
    "add_judgements": "realrecall.curate.judgements",
    "read_judgements": "realrecall.curate.judgements",
    "record_history": "realrecall.curate.judgements",
    "LanguageDetector": "realrecall.labels.language",
    "PassageMatcher": "realrecall.curate.matching",
    "MigrateResult": "realrecall.curate.migrate",
    "migrate_gold": "realrecall.curate.migrate",
    "normalise_question": "realrecall.curate.normalise",
    "normalise_title": "realrecall.curate.normalise",
    "normalise_url": "realrecall.curate.normalise",
    "stable_query_id": "realrecall.curate.normalise",
    "Miss": "realrecall.curate.review",
    "Passage": "realrecall.curate.review",
    "Retrieved": "realrecall.curate.review",
    "ReviewList": "realrecall.curate.review",
    "find_misses": "realrecall.curate.review",
    "pending": "realrecall.curate.review",
    "write_judgement_template": "realrecall.curate.review",
    "Table": "realrecall.curate.tables",
    "read_table": "realrecall.curate.tables",
    "TypeRule": "realrecall.labels",
    "TypeRules": "realrecall.labels",
    "default_type_rules": "realrecall.labels",
    "load_type_rules": "realrecall.labels",
    "read_per_query": "realrecall.evaluate.results",
    "records_for": "realrecall.evaluate.results",
    "shingles": "realrecall.text_features",
}

if _typing.TYPE_CHECKING:
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
    from realrecall.curate.matching import PassageMatcher
    from realrecall.curate.migrate import MigrateResult, migrate_gold
    from realrecall.curate.normalise import (
        normalise_question,
        normalise_title,
        normalise_url,
        stable_query_id,
    )
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
    from realrecall.evaluate.results import read_per_query, records_for
    from realrecall.labels import TypeRule, TypeRules, default_type_rules, load_type_rules
    from realrecall.labels.language import LanguageDetector
    from realrecall.text_features import shingles

__getattr__ = _lazy_getattr("realrecall.curate", _LAZY)

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
