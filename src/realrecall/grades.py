"""Grades as gold sets, qrels and evidence give them: whole numbers, refused with the file and line else.

A leaf below ``formats`` and ``evidence``, which both check grades by these rules.
"""

from __future__ import annotations

import json
import numbers
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from realrecall.errors import InputError

__all__ = ["MAX_GRADE", "check_grade", "plain_grades", "text_grade"]

# trec_eval reads a grade as a C long; this bound (int32) keeps every sum of grades exact in int64 and
# float64, and no real judgment scale comes near it. 1e30 or 1e400 is a typo, not a grade.
MAX_GRADE = 2**31 - 1
_GRADE_HINT = "use 1 for relevant, 0 for judged not relevant, higher for graded relevance"
_INTEGER = re.compile(r"[+-]?[0-9]+")


def check_grade(
    value: Any, passage_id: str, *, path: str | Path | None = None, line: int | None = None
) -> int:
    """A grade as an int: a whole number within ``MAX_GRADE`` either way, else a one-line InputError."""
    return _grade(value, passage_id, path, line)


def plain_grades(grades: Collection[Any]) -> bool:
    """True when every grade is an int within ``MAX_GRADE`` (what ``check_grade`` returns unchanged),
    checked in C-level passes: a reader keeps such grades as parsed and checks only the others."""
    return _ONLY_INT(map(type, grades)) and (  # type(), not isinstance: a bool or float is not plain
        not grades or (min(grades) >= -MAX_GRADE and max(grades) <= MAX_GRADE)
    )


_ONLY_INT = frozenset({int}).issuperset


def _grade(value: Any, passage_id: str, path: str | Path | None, line: int | None) -> int:
    # JSON's NaN and Infinity parse as floats; int() of them would raise, so they are refused here.
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral | float)
        or (isinstance(value, float) and not value.is_integer())
    ):
        raise InputError(
            f"grade of passage {passage_id!r} must be an integer, got {_json_text(value)}",
            path=path,
            line=line,
            hint=_GRADE_HINT,
        )
    return _bounded_grade(int(value), passage_id, path, line)


def _bounded_grade(grade: int, passage_id: str, path: str | Path | None, line: int | None) -> int:
    if abs(grade) > MAX_GRADE:
        raise InputError(
            f"grade of passage {passage_id!r} is out of range: {grade}",
            path=path,
            line=line,
            hint=f"grades are small integers (at most {MAX_GRADE} either way); {_GRADE_HINT}",
        )
    return grade


def text_grade(raw: str, passage_id: str, path: Path, line: int) -> int:
    """A grade written as text (TREC qrels, BEIR tsv): ASCII digits only, as trec_eval's atol reads."""
    if _INTEGER.fullmatch(raw) is None:
        raise InputError(
            f"grade {raw!r} of passage {passage_id!r} is not an integer",
            path=path,
            line=line,
            hint=_GRADE_HINT,
        )
    return _bounded_grade(int(raw), passage_id, path, line)


def _json_text(value: Any) -> str:
    """A value as it reads in the JSON file (NaN, Infinity, true, "1"), not as Python prints it."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # a value built in Python, not read from JSON
        return repr(value)
