"""Question labels: the type (what a question asks) and form (how it is written) readable rules give.

generate labels the questions it writes, ``gold import`` the real ones it reads, and evaluate,
calibrate and compare the queries that have no label of their own, all by the same rules
(``type_rules.toml``), so that the strata of a real and a synthetic set match. The third label, the
language, is read by ``language.LanguageDetector`` (py3langid, loaded on first use), which generate
and ``gold import`` share. A leaf: it imports only ``realrecall.errors`` and ``realrecall.files`` of
the project.
"""

from __future__ import annotations

from realrecall.labels.labelling import Labeller, default_labeller
from realrecall.labels.rules import (
    FormRule,
    FormRules,
    TypeRule,
    TypeRules,
    default_type_rules,
    load_type_rules,
)

__all__ = [
    "FormRule",
    "FormRules",
    "Labeller",
    "TypeRule",
    "TypeRules",
    "default_labeller",
    "default_type_rules",
    "load_type_rules",
]
