"""File formats: each module reads (and checks) one family of files into plain Python data.

- ``jsonl``: JSON Lines gold sets (a key given twice is refused), corpora (and the JSON ``{id: text}``
  mapping) and runs;
- ``trec_runs``: TREC run files, the exact trec_eval 10 line reader;
- ``trec_qrels``: TREC qrels, the exact reader (and the one-grade-per-judgment rule BEIR's qrels share);
- ``trec_fast``: the fast paths of both (Arrow columns, chunked splits), each returning what the exact
  reader returns or declining the file; ``exact=True`` on ``load_run`` and ``load_gold`` skips them;
- ``beir``: BEIR ``qrels/<split>.tsv`` and ``queries.jsonl``;
- ``ids``: the id rules every format shares (the grade rules are ``realrecall.grades``, which evidence
  shares too); ``records``: what the readers return;
  ``token_chunks``: trec_eval's split on C whitespace, and the chunked C-level split of the fast paths.

The types and their ``load_*`` dispatchers live in ``realrecall.gold``, ``realrecall.corpus`` and
``realrecall.runs``, which import this package; it imports only the leaves below it (``errors``,
``files``, ``grades``, ``evidence``, ``provenance``), never them.
This module stays light (``realrecall.gold`` needs no numpy): only the run sniffer is here.
"""

from __future__ import annotations

import codecs
from pathlib import Path

from realrecall.errors import InputError

__all__ = ["sniff_run"]


def sniff_run(path: Path) -> str:
    """``"jsonl"`` or ``"trec"``, from the first line of a run file that is not blank or a comment.

    Raises InputError for a missing file, a folder, or a file with no result line.
    """
    if not path.exists():
        raise InputError("file not found", path=path, hint="check the path")
    if path.is_dir():
        raise InputError("is a folder, not a file", path=path, hint="give the path of a run file")
    with path.open("rb") as handle:
        for number, line in enumerate(handle):
            content = line[3:] if number == 0 and line.startswith(codecs.BOM_UTF8) else line
            content = content.strip()
            if content and not content.startswith(b"#"):
                return "jsonl" if content.startswith(b"{") else "trec"
    raise InputError(
        "empty run: no result line found",
        path=path,
        hint="a TREC run line reads 'query_id Q0 passage_id rank score tag'",
    )
