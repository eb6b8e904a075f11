"""Style leaks: real questions that were shown to the generator as style examples, then scored.

A synthetic record's ``provenance.style_example_ids`` names the real questions its prompt showed
(``generate --style-examples``); a real set scored beside it that holds one of them is not independent
of the generator. generate exports the check; evaluate adds its warning to the results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from realrecall.gold import GoldSet

__all__ = ["style_leak_warning"]


def style_leak_warning(synthetic_set: GoldSet, real_set: GoldSet) -> str | None:
    """A warning when ``real_set`` contains questions used as style examples for ``synthetic_set``.

    The ids are read from the synthetic records' ``provenance.style_example_ids``; a real query whose
    id is listed there helped write the synthetic set. Returns None when there is no overlap.
    """
    used: set[str] = set()
    for query in synthetic_set:
        if query.provenance is not None:
            used.update(query.provenance.style_example_ids)
    leaked = sorted(qid for qid in used if qid in real_set)
    if not leaked:
        return None
    shown = ", ".join(leaked[:5]) + (", ..." if len(leaked) > 5 else "")
    return (
        f"{len(leaked)} question(s) of real set {real_set.name!r} were style examples for synthetic set "
        f"{synthetic_set.name!r} ({shown}); their scores are not independent of the generator, "
        "leave them out of the real set or generate with other style examples"
    )
