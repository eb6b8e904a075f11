"""Tables users already have (ticket exports, Q&A dumps, search logs) read as numbered rows of text.

Row numbers are the ones a person finds the row by: the spreadsheet row for CSV/TSV (the header is
row 1, so the first record is row 2), the line for JSON Lines, and the record's position (from 1)
for Parquet.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from realrecall.errors import InputError
from realrecall.files import iter_jsonl

__all__ = ["FORMATS", "Table", "read_table"]

FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}


@dataclass(frozen=True)
class Table:
    """Column names (in file order) and ``(row number, {column: text})`` rows; empty cells are ``""``."""

    path: str
    columns: tuple[str, ...]
    rows: tuple[tuple[int, Mapping[str, str]], ...]

    def require(self, column: str, option: str) -> None:
        """Raise an InputError naming the available columns when ``column`` is not one of them."""
        if column not in self.columns:
            raise InputError(
                f"no column {column!r} (available: {', '.join(self.columns)})",
                path=self.path,
                hint=f"pass {option} with one of the available columns",
            )


def read_table(path: str | Path) -> Table:
    """Read a CSV, TSV, JSON Lines or Parquet file, chosen by its extension."""
    p = Path(path)
    kind = FORMATS.get(p.suffix.lower())
    if kind is None:
        raise InputError(
            f"unknown table format {p.suffix or '(no extension)'!r}",
            path=p,
            hint=f"use one of {', '.join(FORMATS)}",
        )
    if not p.is_file():
        raise InputError("file not found", path=p, hint="check the path")
    if kind == "jsonl":
        return _read_jsonl(p)
    frame = _read_frame(p, kind)
    if frame.empty:
        raise InputError("no rows found", path=p, hint="the file needs a header and at least one row")
    first_row = 2 if kind in ("csv", "tsv") else 1
    columns = tuple(str(c) for c in frame.columns)
    rows = tuple(
        (first_row + position, dict(zip(columns, (_cell(v) for v in values), strict=True)))
        for position, values in enumerate(frame.itertuples(index=False, name=None))
    )
    return Table(str(p), columns, rows)


def _read_frame(path: Path, kind: str) -> pd.DataFrame:
    try:
        if kind == "parquet":
            return pd.read_parquet(path)
        return pd.read_csv(
            path,
            sep="\t" if kind == "tsv" else ",",
            dtype=str,
            keep_default_na=False,
            encoding="utf-8-sig",
        )
    except ImportError as exc:  # pandas reads Parquet through the optional pyarrow
        raise InputError(
            "reading Parquet needs pyarrow", path=path, hint="pip install 'realrecall[parquet]'"
        ) from exc
    except UnicodeDecodeError as exc:
        raise InputError("not valid UTF-8", path=path, hint="save the file as UTF-8") from exc
    except pd.errors.EmptyDataError as exc:
        raise InputError(
            "empty file", path=path, hint="the file needs a header and at least one row"
        ) from exc
    except (ValueError, OSError) as exc:  # pandas' ParserError and pyarrow's ArrowInvalid are ValueErrors
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot read as {kind}: {first_line}", path=path) from exc


def _read_jsonl(path: Path) -> Table:
    columns: dict[str, None] = {}
    rows = []
    for number, record in iter_jsonl(path, what="row"):
        columns.update(dict.fromkeys(record))
        rows.append((number, {str(k): _cell(v) for k, v in record.items()}))
    return Table(str(path), tuple(columns), tuple(rows))


def _cell(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if pd.api.types.is_scalar(value) and pd.isna(value):
        return ""
    return str(value)
