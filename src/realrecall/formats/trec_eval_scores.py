"""trec_eval ``-q`` output: each system's value of a measure on each query.

Two shapes, told apart line by line by the number of fields:

- ``measure  query_id  value`` (trec_eval ``-q`` as it prints): the system is named by the
  ``runid  all  NAME`` line of its summary block. Several outputs may be concatenated; a per-query line
  after a summary line starts the next system. A file with no ``runid`` line names its one system after
  the file.
- ``run  measure  query_id  value`` (per-query files with the run's name in front, as ranking studies
  share them).

Lines whose query id is ``all`` are summaries and are skipped, as are blank lines and ``#`` comments.
"""

from __future__ import annotations

import math
from pathlib import Path

from realrecall.errors import InputError
from realrecall.files import read_text_lines

__all__ = ["read_trec_eval_scores"]

_SUMMARY = "all"
_HINT = "give trec_eval -q output: 'measure query_id value' or 'run measure query_id value' per line"


def read_trec_eval_scores(path: str | Path, measure: str) -> dict[str, dict[str, float]]:
    """``{system: {query_id: value}}`` of ``measure`` in a trec_eval ``-q`` file (see the module doc).

    A query given twice for the same system and measure is an error naming both lines.
    """
    p = Path(path)
    systems: dict[str, dict[str, float]] = {}
    seen_lines: dict[tuple[str, str], int] = {}
    current: dict[str, float] = {}
    current_lines: dict[str, int] = {}
    current_name: str | None = None
    in_summary = False

    def close_block() -> None:
        nonlocal current, current_lines, current_name
        if current or current_name is not None:
            name = current_name if current_name is not None else p.stem
            _add_system(systems, seen_lines, name, current, current_lines, p)
        current, current_lines, current_name = {}, {}, None

    for number, line in read_text_lines(p):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) == 4:
            run, name, query_id, raw = fields
            if query_id == _SUMMARY:
                continue
            if name == measure:
                values = systems.setdefault(run, {})
                key = (run, query_id)
                if key in seen_lines:
                    raise _duplicate(p, number, run, query_id, seen_lines[key])
                seen_lines[key] = number
                values[query_id] = _value(raw, p, number)
            continue
        if len(fields) != 3:
            raise InputError(f"expected 3 or 4 fields, found {len(fields)}", path=p, line=number, hint=_HINT)
        name, query_id, raw = fields
        if query_id == _SUMMARY:
            in_summary = True
            if name == "runid":
                current_name = raw
            continue
        if in_summary:  # a per-query line after a summary: the next system's output begins
            close_block()
            in_summary = False
        if name == measure:
            if query_id in current:
                raise _duplicate(p, number, current_name or p.stem, query_id, current_lines[query_id])
            current[query_id] = _value(raw, p, number)
            current_lines[query_id] = number
    close_block()
    return {name: values for name, values in systems.items() if values}


def _add_system(
    systems: dict[str, dict[str, float]],
    seen_lines: dict[tuple[str, str], int],
    name: str,
    values: dict[str, float],
    lines: dict[str, int],
    path: Path,
) -> None:
    target = systems.setdefault(name, {})
    for query_id, value in values.items():
        key = (name, query_id)
        if key in seen_lines:
            raise _duplicate(path, lines[query_id], name, query_id, seen_lines[key])
        seen_lines[key] = lines[query_id]
        target[query_id] = value


def _value(raw: str, path: Path, number: int) -> float:
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise InputError(f"value {raw!r} is not a finite number", path=path, line=number, hint=_HINT)
    return value


def _duplicate(path: Path, number: int, system: str, query_id: str, first: int) -> InputError:
    return InputError(
        f"system {system!r} has query {query_id!r} twice (first on line {first})",
        path=path,
        line=number,
        hint="give each system's scores once per query",
    )
