"""A small corpus with a near-duplicate pair, a page split in two chunks, and a German passage;
a gold set over it, and the results.json and per-query file an evaluation would have written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CONFLICTS = (
    "When two devices edit the same note while offline, Harbor Notes keeps both versions. "
    "The server saves the later edit as the note and the earlier edit as a conflict copy named after "
    "the device, so nothing is lost. Open the note history to compare the two versions and merge "
    "them by hand, then delete the conflict copy once the note reads as it should."
)

CHUNKS = [
    {
        "id": "en-sync-001",
        "title": "Sync > Conflicts",
        "text": CONFLICTS,
        "metadata": {"url": "https://docs.example.com/sync/conflicts", "language": "en"},
    },
    {
        "id": "en-sync-002",
        "title": "Sync > Offline mode",
        "text": "The desktop and mobile apps keep working without a connection and queue your edits. "
        "They upload the queue the next time the server is reachable.",
        "metadata": {"url": "https://docs.example.com/sync/offline", "language": "en"},
    },
    {
        "id": "en-release-034",
        "title": "Sync > Conflicts",
        "text": CONFLICTS + " This applies from release 3.4.",
        "metadata": {"url": "https://docs.example.com/releases/3.4#conflicts", "language": "en"},
    },
    {
        "id": "en-backup-001",
        "title": "Administration > Backups",
        "text": "Run harbor-admin backup create to write a consistent snapshot of notes and attachments.",
        "metadata": {"url": "https://docs.example.com/admin/backups", "language": "en"},
    },
    {
        "id": "en-backup-002",
        "title": "Administration > Restoring a backup",
        "text": "Stop harbord, then run harbor-admin backup restore FILE and start the server again.",
        "metadata": {"url": "https://docs.example.com/admin/backups", "language": "en"},
    },
    {
        "id": "en-config-001",
        "title": "Configuration > Sync interval",
        "text": "The key sync.interval_ms sets how often clients poll the server; the default is 30000.",
        "metadata": {"url": "https://docs.example.com/config/sync", "language": "en"},
    },
    {
        "id": "de-sync-001",
        "title": "Synchronisierung > Konflikte",
        "text": "Wenn zwei Geräte dieselbe Notiz offline bearbeiten, behält Harbor Notes beide Fassungen.",
        "metadata": {"url": "https://docs.example.com/de/sync/konflikte", "language": "de"},
    },
]

GOLD = [
    {"query_id": "q1", "query": "What happens when two devices edit the same note?",
     "gold": {"en-sync-001": 1},
     "origin": "real", "type": "conceptual", "language": "en"},
    {"query_id": "q2", "query": "default of sync.interval_ms", "gold": {"en-config-001": 1},
     "origin": "real", "type": "lookup", "language": "en"},
    {"query_id": "q3", "query": "How do I restore a backup?", "gold": {"en-backup-002": 1},
     "origin": "real", "type": "conceptual", "language": "en"},
]  # fmt: skip

PER_QUERY = [
    {"query_id": "q1", "query": GOLD[0]["query"], "gold": ["en-sync-001"], "origin": "real",
     "type": "conceptual", "language": "en", "first_relevant_rank": None,
     "top": ["en-release-034", "en-sync-002", "de-sync-001"], "metrics": {"recall@3": 0.0}},
    {"query_id": "q2", "query": GOLD[1]["query"], "gold": ["en-config-001"], "origin": "real",
     "type": "lookup", "language": "en", "first_relevant_rank": 1,
     "top": ["en-config-001", "en-sync-002", "en-sync-001"], "metrics": {"recall@3": 1.0}},
    {"query_id": "q3", "query": GOLD[2]["query"], "gold": ["en-backup-002"], "origin": "real",
     "type": "conceptual", "language": "en", "first_relevant_rank": None,
     "top": ["en-backup-001", "en-sync-002", "en-config-001"], "metrics": {"recall@3": 0.0}},
]  # fmt: skip


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "corpus.jsonl", CHUNKS)


@pytest.fixture
def gold_file(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "gold.jsonl", GOLD)


@pytest.fixture
def per_query_file(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "per_query.jsonl", PER_QUERY)


@pytest.fixture
def results_file(tmp_path: Path, corpus_file: Path) -> Path:
    results = {
        "realrecall_version": "0.1.0",
        "retriever": {"name": "bm25", "description": "bm25s"},
        "corpus": {"path": corpus_file.name, "sha256": None, "chunks": len(CHUNKS)},
        "metrics": ["recall@1", "recall@3", "mrr@10"],
        "relevance_threshold": 1,
        "gold_sets": [{"name": "gold", "n_queries": 3}],
    }
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    return path


@pytest.fixture
def cli():
    """Run ``realrecall ARGS`` in-process (``support.cli.run``); paths may be given as ``Path``."""
    from support.cli import run

    return lambda *args: run(*(str(a) for a in args))
