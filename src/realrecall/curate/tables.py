"""Tables users already have (ticket exports, Q&A dumps, search logs) read as numbered rows of text.

Row numbers are the ones a person finds the row by: the spreadsheet row for CSV/TSV (the header is
row 1, so the first record is row 2), the line for JSON Lines, and the record's position (from 1)
for Parquet.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.files import iter_jsonl, read_text_lines

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
    if kind in ("csv", "tsv"):
        return _read_csv(p, "\t" if kind == "tsv" else _csv_delimiter(p))
    return _read_parquet(p)


def _read_parquet(path: Path) -> Table:
    try:
        import pandas as pd  # only Parquet goes through pandas; loaded when one is read

        frame = pd.read_parquet(path)
    except ImportError as exc:  # pandas reads Parquet through the optional pyarrow
        raise InputError(
            "reading Parquet needs pyarrow", path=path, hint="pip install 'realrecall[parquet]'"
        ) from exc
    except (ValueError, OSError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot read as parquet: {first_line}", path=path) from exc
    if frame.empty:
        raise InputError("no rows found", path=path, hint="the file needs at least one row")
    columns = tuple(str(c) for c in frame.columns)
    rows = tuple(
        (position, dict(zip(columns, (_cell(v) for v in values), strict=True)))
        for position, values in enumerate(frame.itertuples(index=False, name=None), start=1)
    )
    return Table(str(path), columns, rows)


def _read_csv(path: Path, delimiter: str) -> Table:
    # The csv module rather than pandas: a row with more or fewer cells than the header is an error
    # naming the row, where pandas would quietly shift cells into an index or drop them.
    lines = (line + "\n" for _, line in read_text_lines(path))
    reader = csv.reader(lines, delimiter=delimiter)
    try:
        header = next(reader, None)
        if header is None or not any(cell.strip() for cell in header):
            raise InputError("empty file", path=path, hint="the file needs a header and at least one row")
        columns = tuple(cell.strip() for cell in header)
        rows = []
        for position, cells in enumerate(reader, start=2):
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(columns):
                raise InputError(
                    f"row has {len(cells)} cells, the header has {len(columns)}",
                    path=path,
                    line=position,
                    hint=f"quote cells that contain {delimiter!r}",
                )
            rows.append((position, {c: v.strip() for c, v in zip(columns, cells, strict=True)}))
    except csv.Error as exc:
        raise InputError(f"cannot read as CSV: {exc}", path=path) from exc
    if not rows:
        raise InputError("no rows found", path=path, hint="the file needs a header and at least one row")
    return Table(str(path), columns, tuple(rows))


def _csv_delimiter(path: Path) -> str:
    """Comma, or the delimiter the file consistently uses instead (European exports use semicolons)."""
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as handle:
        sample = handle.read(1 << 16)
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:  # one column, or no consistent delimiter: the CSV default
        return ","


def _read_jsonl(path: Path) -> Table:
    columns: dict[str, None] = {}
    rows = []
    for number, record in iter_jsonl(path, what="row"):
        columns.update(dict.fromkeys(record))
        rows.append((number, {str(k): _cell(v) for k, v in record.items()}))
    return Table(str(path), tuple(columns), tuple(rows))


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, bool | int | float):
        return "" if value != value else str(value)  # NaN is the only value unequal to itself
    import pandas as pd  # only Parquet's own scalars (NA, NaT, numpy types) reach here

    if pd.api.types.is_scalar(value) and pd.isna(value):
        return ""
    return str(value)
