"""``realrecall gold``: import a real gold set, review misses, add judged passages, expand near-duplicates."""

from __future__ import annotations

import getpass
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from realrecall.cli.application import (
    command_group,
    err,
    out,
    output_option,
    output_options,
    split_list,
    user_errors,
    warn,
)
from realrecall.cli.console import plain
from realrecall.corpus import load_corpus
from realrecall.curate import (
    ImportSpec,
    Judgement,
    JudgementLog,
    Miss,
    Passage,
    Retrieved,
    ReviewList,
    add_judgements,
    expand_gold,
    find_misses,
    find_near_duplicates,
    import_gold,
    pending,
    read_judgements,
    write_judgement_template,
)
from realrecall.errors import InputError
from realrecall.files import check_distinct, write_jsonl_atomic
from realrecall.resolution import QueryResolution, check_gold_from

gold_app = command_group(
    "gold", "Keep a gold set honest: import it, review its misses, add and expand its gold passages."
)

_CorpusOption = Annotated[
    Path | None, typer.Option("--corpus", help="Corpus file (JSONL, BEIR folder or JSON).")
]


def _say(text: str) -> None:
    """Print a line as plain text: ids, paths and queries may hold brackets rich would read as markup."""
    out.print(plain(text))


def _default_judge() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _snippet(passage: Passage, width: int) -> str:
    if not passage.found:
        return "(not in the corpus)"
    text = (
        " ".join(f"{passage.title} — {passage.text}".split())
        if passage.title
        else " ".join(passage.text.split())
    )
    return text if len(text) <= width else text[: width - 1] + "…"


@gold_app.command("import")
@output_options("output", "unmatched")
def import_command(
    source: Annotated[
        Path, typer.Argument(help="CSV, TSV, JSONL or Parquet file with questions and passages.")
    ],
    question: Annotated[str, typer.Option("--question", help="Column holding the question.")],
    passage: Annotated[str, typer.Option("--passage", help="Column naming the passage (id, URL or title).")],
    output: Annotated[
        Path, output_option("--output", "-o", help="Gold set to write (JSONL).", example="real.jsonl")
    ],
    corpus: _CorpusOption = None,
    passage_by: Annotated[str, typer.Option("--passage-by", help="id, url or title.")] = "id",
    id_column: Annotated[
        str | None, typer.Option("--id", help="Column with query ids (else hashed).")
    ] = None,
    type_column: Annotated[str | None, typer.Option("--type", help="Column with the query type.")] = None,
    language_column: Annotated[
        str | None, typer.Option("--language", help="Column with the language.")
    ] = None,
    clicks: Annotated[str | None, typer.Option("--clicks", help="Column with click counts.")] = None,
    grade: Annotated[
        str | None, typer.Option("--grade", help="Column with graded relevance (whole numbers >= 1).")
    ] = None,
    min_clicks: Annotated[int | None, typer.Option("--min-clicks", help="Clicks a pair needs.")] = None,
    ambiguous: Annotated[
        str, typer.Option("--ambiguous", help="URL/title naming several chunks: report, all or first.")
    ] = "report",
    languages: Annotated[
        str | None, typer.Option("--languages", help="Candidate languages for detection, e.g. en,de.")
    ] = None,
    type_rules: Annotated[Path | None, typer.Option("--type-rules", help="Rules file (TOML/JSON).")] = None,
    unmatched: Annotated[
        Path | None,
        output_option("--unmatched", help="Write unmatched rows (JSONL).", example="unmatched.jsonl"),
    ] = None,
) -> None:
    """Turn tickets, answered questions or click logs into a real gold set."""
    with user_errors():
        check_distinct(
            {"SOURCE": source, "--corpus": corpus, "--type-rules": type_rules},
            {"--output": output, "--unmatched": unmatched},
        )
        spec = ImportSpec(
            question=question,
            passage=passage,
            passage_by=passage_by,  # type: ignore[arg-type]  # checked by ImportSpec
            id_column=id_column,
            type_column=type_column,
            language_column=language_column,
            clicks_column=clicks,
            grade_column=grade,
            min_clicks=min_clicks,
            ambiguous=ambiguous,  # type: ignore[arg-type]
            languages=tuple(split_list(languages)) or None,
            type_rules=type_rules,
        )
        result = import_gold(source, spec, corpus=corpus, output=output, unmatched_output=unmatched)
    _say(
        f"imported {len(result.queries)} queries ({result.gold_ids} gold ids) from {result.rows} rows "
        f"into {result.output}"
    )
    _say("types: " + ", ".join(f"{k} {v}" for k, v in sorted(result.types.items())))
    _say("languages: " + ", ".join(f"{k or 'undetermined'} {v}" for k, v in result.languages.items()))
    if not result.checked_against_corpus:
        warn(
            "no --corpus given: passage ids were not checked against a corpus, and their text is not "
            "recorded as evidence (the set will not survive re-chunking): give --corpus"
        )
    problems = result.unmatched + result.below_min_clicks
    if problems:
        below = len(result.below_min_clicks)
        warn(f"{len(result.unmatched)} unmatched row(s), {below} below the click minimum:")
        for row in problems[:20]:
            err.print(plain(f"  row {row.row}: {row.reason}"))
        if len(problems) > 20:
            err.print(
                plain(
                    f"  ... and {len(problems) - 20} more"
                    + ("" if unmatched else " (write them with --unmatched)")
                )
            )
        if unmatched:
            err.print(plain(f"  all listed in {unmatched}"))


def _render_miss(number: int, total: int, miss: Miss, width: int, *, retrieved: bool = True) -> None:
    facets = " · ".join(v for v in (miss.gold_set, miss.type, miss.language) if v)
    rank = miss.first_relevant_rank if miss.first_relevant_rank is not None else "none retrieved"
    out.rule(plain(f"{number}/{total}  {miss.query_id}  [{facets}]  first relevant rank: {rank}"))
    out.print(plain(f"Query: {miss.query}", style="bold"))
    out.print("Gold:")
    for passage in miss.gold or (Passage("(no relevant gold passage)", found=True),):
        out.print(plain(f"  {passage.id}  {_snippet(passage, width)}"))
    if not retrieved:  # interactive mode shows each retrieved passage as it asks about it
        return
    out.print("Retrieved:")
    for hit in miss.retrieved:
        out.print(plain(f"  {hit.rank:>2}  {hit.passage.id}  {_snippet(hit.passage, width)}{_marks(hit)}"))


def _marks(hit: Retrieved) -> str:
    marks = "" if hit.judged is None else f"  (judged {hit.judged})"
    if hit.duplicate_of is not None:
        source, similarity = hit.duplicate_of
        marks += f"  (near-duplicate of gold {source}, Jaccard {similarity:.2f})"
    return marks


def _summary(review: ReviewList) -> str:
    at = f"at k={review.k}" if review.k else "in the retrieved lists"
    if review.k and review.metric:
        at += f" (the cut-off of {review.metric}; --k for another)"
    shown = f" (showing {len(review.misses)})" if len(review.misses) < review.n_misses else ""
    queries = f"{review.origin} queries" if review.origin else "queries"
    return f"{review.n_misses} of {review.n_queries} {queries} miss {at}{shown}"


@gold_app.command("review")
@output_options("judgements")
def review_command(
    results: Annotated[Path, typer.Argument(help="results.json written by evaluate.")],
    per_query: Annotated[Path, typer.Option("--per-query", help="Per-query JSONL written by evaluate.")],
    corpus: _CorpusOption = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Show at most N misses.")] = None,
    k: Annotated[
        int | None,
        typer.Option("--k", help="Cut-off (default: the headline metric's, recall@10 when evaluated)."),
    ] = None,
    origin: Annotated[
        str, typer.Option("--origin", help="Only queries of this origin: real, synthetic or all.")
    ] = "real",
    show: Annotated[int, typer.Option("--show", help="Retrieved passages shown per miss.")] = 5,
    gold_set: Annotated[str | None, typer.Option("--gold-set", help="Only this gold set's queries.")] = None,
    gold: Annotated[
        Path | None, typer.Option("--gold", help="Current gold set: counts passages added since evaluating.")
    ] = None,
    duplicates: Annotated[
        float | None,
        typer.Option(
            "--duplicates", help="Mark retrieved near-duplicates of gold passages (Jaccard, e.g. 0.8)."
        ),
    ] = None,
    interactive: Annotated[bool, typer.Option("--interactive", "-i", help="Judge each passage.")] = False,
    judgements: Annotated[
        Path | None,
        output_option(
            "--judgements",
            help="Interactive: judgements file to append to; else: template to write.",
            example="judgements.jsonl",
        ),
    ] = None,
    by: Annotated[str | None, typer.Option("--by", help="Your name, recorded with judgements.")] = None,
    width: Annotated[int, typer.Option("--width", help="Characters of passage text shown.")] = 240,
) -> None:
    """List the misses (query, gold passage, top retrieved) for a person to judge."""
    with user_errors():
        check_distinct(
            {"RESULTS": results, "--per-query": per_query, "--corpus": corpus, "--gold": gold},
            {"--judgements": judgements},
        )
        if interactive and not sys.stdin.isatty():
            raise InputError(
                "--interactive needs a terminal", hint="run it in a terminal, or drop --interactive"
            )
        if width < 1:  # a slice [: width - 1] would show nearly the whole passage
            raise InputError(f"--width must be at least 1 character, got {width}", hint="e.g. --width 240")
        review = find_misses(
            results,
            per_query,
            corpus=corpus,
            k=k,
            limit=limit,
            show=show,
            gold_set=gold_set,
            gold=gold,
            duplicates=duplicates,
            origin=None if origin == "all" else origin,
        )
        for message in review.warnings:
            warn(message)
        if interactive:
            _interactive(
                review, judgements or Path("judgements.jsonl"), by or _default_judge(), width, results
            )
            return
        for number, miss in enumerate(review.misses, start=1):
            _render_miss(number, len(review.misses), miss, width)
        _say(_summary(review))
        if judgements is not None:
            lines = write_judgement_template(judgements, review, by=by)
            _say(f"wrote {lines} judgement line(s) to fill in to {judgements} (grade 1, 0, or leave null)")


_KEYS = {"r": 1, "n": 0}


def _ask() -> str:
    """One key press: r, n, s or q (Ctrl-C and Ctrl-D quit, keeping what was recorded)."""
    while True:
        out.print(plain("[r]elevant / [n]ot / [s]kip / [q]uit ? "), end="")
        try:
            key = typer.getchar().lower()
        except (KeyboardInterrupt, EOFError):
            key = "q"
        out.print(plain(key))
        if key in ("r", "n", "s", "q"):
            return key


def _interactive(review: ReviewList, path: Path, by: str, width: int, results: Path) -> None:
    counts = {"r": 0, "n": 0, "s": 0}
    _say(_summary(review) + f"; recording into {path}")
    with JudgementLog(path) as log:
        for miss, hits in pending(review, log.judged()):
            _render_miss(review.misses.index(miss) + 1, len(review.misses), miss, width, retrieved=False)
            for hit in hits:
                out.print(
                    plain(f"\n#{hit.rank} {hit.passage.id}{_marks(hit)}: {_snippet(hit.passage, width * 3)}")
                )
                key = _ask()
                if key == "q":
                    _closing(counts, path)
                    return
                counts[key] += 1
                if key in _KEYS:
                    log.record(
                        Judgement(
                            query_id=miss.query_id,
                            passage_id=hit.passage.id,
                            grade=_KEYS[key],
                            by=by,
                            why=f"review of {results.name}: rank {hit.rank}",
                            at=datetime.now(UTC).isoformat(timespec="seconds"),
                        )
                    )
    _closing(counts, path)


def _closing(counts: dict[str, int], path: Path) -> None:
    _say(
        f"judged {counts['r']} relevant, {counts['n']} not relevant, skipped {counts['s']}; saved in {path}\n"
        f"apply with: realrecall gold add GOLD_FILE --judgements {path} --corpus CORPUS "
        "(with the corpus, the judged passages' text is recorded as evidence)"
    )


@gold_app.command("add")
@output_options("output")
def add_command(
    gold_file: Annotated[Path, typer.Argument(help="Gold set (JSONL) to add to.")],
    query_id: Annotated[str | None, typer.Argument(help="Query id.")] = None,
    passage_id: Annotated[str | None, typer.Argument(help="Passage id to add as gold.")] = None,
    grade: Annotated[int, typer.Option("--grade", help="Grade of the passage (1 relevant, 0 not).")] = 1,
    by: Annotated[str | None, typer.Option("--by", help="Who judged (default: your user name).")] = None,
    why: Annotated[str | None, typer.Option("--why", help="Why it answers the query.")] = None,
    judgements: Annotated[Path | None, typer.Option("--judgements", help="JSONL file of judgements.")] = None,
    corpus: _CorpusOption = None,
    output: Annotated[
        Path | None,
        output_option("--output", "-o", help="Write here instead of in place.", example="gold.jsonl"),
    ] = None,
) -> None:
    """Add judged passages to a gold set, recording who, when and why."""
    with user_errors():
        # Writing over GOLD_FILE itself is this command's purpose (in place); over another input, never.
        check_distinct({"--judgements": judgements, "--corpus": corpus}, {"--output": output or gold_file})
        judge = by or _default_judge()
        if judgements is not None:
            if query_id is not None or passage_id is not None:
                raise InputError("give QUERY_ID PASSAGE_ID or --judgements FILE, not both")
            read = read_judgements(judgements, default_by=judge)
            items, unjudged = read.items, read.unjudged
        elif query_id is not None and passage_id is not None:
            items, unjudged = (Judgement(query_id, passage_id, grade, judge, why),), 0
        else:
            raise InputError("nothing to add", hint="give QUERY_ID PASSAGE_ID, or --judgements FILE")
        result = add_judgements(gold_file, items, corpus=corpus, output=output)
    _say(
        f"added {len(result.added)} gold id(s), regraded {len(result.regraded)}, "
        f"{len(result.unchanged)} already as judged" + (f"; wrote {result.output}" if result.changed else "")
    )
    if unjudged:
        warn(f"{unjudged} line(s) still have grade null and were skipped")
    if corpus is None and result.changed:
        warn("no --corpus given: the judged passages' text is not recorded as evidence: give --corpus")


@gold_app.command("dupes")
@output_options("output")
def dupes_command(
    corpus: Annotated[Path, typer.Option("--corpus", help="Corpus file (JSONL, BEIR folder or JSON).")],
    threshold: Annotated[float, typer.Option("--threshold", help="Jaccard similarity of shingles.")] = 0.8,
    shingle: Annotated[int, typer.Option("--shingle", help="Words per shingle.")] = 3,
    width: Annotated[int, typer.Option("--width", help="Characters of passage text shown.")] = 100,
    output: Annotated[
        Path | None,
        output_option("--output", "-o", help="Also write the clusters as JSONL.", example="clusters.jsonl"),
    ] = None,
) -> None:
    """List clusters of near-duplicate passages in the corpus."""
    with user_errors():
        check_distinct({"--corpus": corpus}, {"--output": output})
        loaded = load_corpus(corpus)
        found = find_near_duplicates(loaded, threshold=threshold, shingle=shingle)
        if output is not None:
            write_jsonl_atomic(output, found.cluster_records())
    for number, cluster in enumerate(found.clusters, start=1):
        out.rule(plain(f"cluster {number}: {len(cluster)} passages"))
        for pid in cluster:
            chunk = loaded[pid]
            out.print(plain(f"  {pid}  {_snippet(Passage(pid, chunk.title, chunk.text), width)}"))
    _say(
        f"{len(found.clusters)} cluster(s), {len(found.pairs)} pair(s) at Jaccard >= {threshold} "
        f"over {shingle}-word shingles in {len(loaded)} passages"
    )


@gold_app.command("expand")
@output_options("output")
def expand_command(
    gold_file: Annotated[Path, typer.Argument(help="Gold set to expand.")],
    corpus: Annotated[Path, typer.Option("--corpus", help="Corpus file (JSONL, BEIR folder or JSON).")],
    output: Annotated[
        Path,
        output_option("--output", "-o", help="Expanded gold set to write (JSONL).", example="expanded.jsonl"),
    ],
    threshold: Annotated[float, typer.Option("--threshold", help="Jaccard similarity of shingles.")] = 0.8,
    shingle: Annotated[int, typer.Option("--shingle", help="Words per shingle.")] = 3,
    per_query: Annotated[
        Path | None, typer.Option("--per-query", help="Per-query JSONL: count the misses removed.")
    ] = None,
    k: Annotated[
        int | None, typer.Option("--k", help="Cut-off for misses (default: whole top list).")
    ] = None,
    gold_set: Annotated[
        str | None,
        typer.Option("--gold-set", help="Per-query records of this gold set (default: file stem)."),
    ] = None,
) -> None:
    """Add each gold passage's near-duplicates to its gold ids."""
    with user_errors():
        # --output GOLD_FILE expands in place (read whole, then replaced atomically, mode kept).
        check_distinct({"--corpus": corpus, "--per-query": per_query}, {"--output": output})
        result = expand_gold(
            gold_file,
            corpus,
            output=output,
            threshold=threshold,
            shingle=shingle,
            per_query=per_query,
            k=k,
            gold_set=gold_set,
        )
    _say(
        f"added {result.n_added} near-duplicate gold id(s) to {len(result.added)} queries; "
        f"wrote {result.output}"
    )
    if result.misses_before is not None:
        at = f"at k={result.k}" if result.k else "in the retrieved lists"
        _say(
            f"misses {at}: {result.misses_before} -> {result.misses_after} of {result.evaluated} queries "
            f"({len(result.recovered)} removed"
            + (f": {', '.join(result.recovered)})" if result.recovered else ")")
        )


@gold_app.command("migrate")
@output_options("output", "report")
def migrate_command(
    gold_file: Annotated[Path, typer.Argument(help="Gold set whose queries carry evidence.")],
    corpus: Annotated[Path, typer.Option("--corpus", help="The new chunking (JSONL, BEIR folder or JSON).")],
    output: Annotated[
        Path,
        output_option("--output", "-o", help="Migrated gold set to write (JSONL).", example="migrated.jsonl"),
    ],
    coverage: Annotated[
        float, typer.Option("--coverage", help="Share of an evidence span a chunk must hold, in (0, 1].")
    ] = 0.5,
    gold_from: Annotated[
        str,
        typer.Option(
            "--gold-from", help="auto (ids the new corpus holds, evidence for the rest), evidence or ids."
        ),
    ] = "auto",
    report: Annotated[
        Path | None,
        output_option(
            "--report",
            help="Write per-query counts (chunks, by id, from evidence, split, lost) here.",
            example="migrate_report.jsonl",
        ),
    ] = None,
) -> None:
    """Rewrite a gold set's chunk ids for a new chunking from its evidence; report mapped, split, lost."""
    with user_errors():
        from realrecall.curate import migrate_gold

        check_gold_from(gold_from, coverage)
        check_distinct({"GOLD": gold_file, "--corpus": corpus}, {"--output": output, "--report": report})
        result = migrate_gold(gold_file, corpus, output=output, coverage=coverage, gold_from=gold_from)
        if report is not None:
            write_jsonl_atomic(report, (_migrated(query) for query in result.queries))
    resolution = result.resolution
    _say(
        f"migrated {len(result.queries)} queries into {result.output}: {result.mapped} mapped to "
        f"{resolution.by_id + resolution.from_evidence} chunk(s) ({resolution.by_id} kept by id, "
        f"{resolution.from_evidence} from evidence); {resolution.split} evidence item(s) split over "
        f"several chunks, {resolution.lost} lost"
    )
    for query in result.queries:
        if query.lost:
            _say(
                f"  {query.query_id}: {query.by_id + query.from_evidence} chunk(s), "
                f"{query.split} split, {query.lost} lost" + (" (kept, scores 0)" if query.empty else "")
            )
    if resolution.lost:
        warn(
            f"{resolution.lost} evidence item(s) of {len(resolution.lost_queries)} queries were found in no "
            "chunk of the new corpus; those queries are kept with their evidence"
        )
    if result.unresolved:
        warn(
            f"{len(result.unresolved)} queries have no evidence and no id in the new corpus "
            f"({_some(result.unresolved)}); they keep their old ids: add evidence to carry them over"
        )
    by_id_alone = [q for q in result.without_evidence if q not in set(result.unresolved)]
    if by_id_alone:
        warn(
            f"{len(by_id_alone)} queries have no evidence and were carried by id alone "
            f"({_some(by_id_alone)}): right only if the new corpus gives those ids the same text; "
            "add evidence to carry them by their text"
        )


def _some(query_ids: Sequence[str], shown: int = 5) -> str:
    """The first few ids, and how many more."""
    more = len(query_ids) - shown
    return ", ".join(query_ids[:shown]) + (f" and {more} more" if more > 0 else "")


def _migrated(query: QueryResolution) -> dict[str, object]:
    return {
        "query_id": query.query_id,
        "chunks": query.passages,
        "by_id": query.by_id,
        "from_evidence": query.from_evidence,
        "split": query.split,
        "lost": query.lost,
    }
