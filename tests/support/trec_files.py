"""Generated TREC files whose fields are parted by one byte (a space, or a tab): the files pyarrow's
CSV reader takes, with what must still send a file on (lines of other lengths, comments as long as
the data lines or not, blank lines, CRLF, a space before the line end)."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def one_separator_files(draw: st.DrawFn, fields: st.SearchStrategy[list[str]], needed: int) -> str:
    """A file of lines drawn from ``fields`` (an empty field is a missing one); ``needed``: the fields
    a line must have (6 for a run, 4 for qrels)."""
    separator = draw(st.sampled_from([" ", " ", "\t"]))
    extra = ["extra"] * draw(st.integers(0, 1))  # a field after the needed ones, on every data line
    rows = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["data"] * 6 + ["comment", "blank", "short", "long"]))
        line = [field for field in [*draw(fields), *extra] if field] or ["q1"]
        if kind == "comment":
            line = ["#" + line[0], *line[1:]][: draw(st.integers(1, needed + 2))]
        elif kind == "blank":
            line = []
        elif kind == "short":
            line = line[: needed - 1]
        elif kind == "long":
            line = [*line, "more"]
        ends = ["", "", "", "\r", " "] if separator == " " else ["", "", "", "\r"]
        rows.append(separator.join(line) + draw(st.sampled_from(ends)))
    return "\n".join(rows) + draw(st.sampled_from(["\n", "\n", ""]))
