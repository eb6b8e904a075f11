"""The rules' labels of question texts, computed when something first asks for them, and kept.

Labelling is not free: the rules try a dozen patterns on each text, and a million distinct questions
took 9.4 of the 26.9 s of CPU evaluating them took when every query was labelled up front. So nothing
labels a gold set up front: evaluate labels when it slices by ``type`` or ``form``, and calibrate,
compare and review when a stratum, a slice or a report reads a label of a query that has none of its
own. A :class:`Labeller` classifies each distinct text once (up to a bound: a set of all-different
texts would only fill the memory), and keeps whole columns (a gold set's questions) by the hash of
their content, so the same gold file is labelled once per process, whichever stage asks first.
"""

from __future__ import annotations

import hashlib
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import cache

from realrecall.labels.rules import TypeRules, default_type_rules

__all__ = ["Labeller", "default_labeller"]

# Distinct texts whose labels a labeller keeps: repeated texts (TREC and BEIR qrels have none, synthetic
# sets repeat templates) are classified once; past the bound every text is new and keeping it costs.
_TEXTS = 1 << 16
# Columns kept: a few gold sets (a real and a synthetic set, and another evaluated beside them).
_COLUMNS = 4


class Labeller:
    """The type and form ``rules`` give question texts, each distinct text classified once.

    :meth:`types` and :meth:`forms` label a column of texts (one per query of a gold set) and keep it
    by the content's SHA-256: asked again for the same texts, they return the same tuple at once.
    Thread-safe; the answers never depend on what was asked before.
    """

    def __init__(self, rules: TypeRules) -> None:
        self.rules = rules
        self._type_of: dict[str, str] = {}
        self._form_of: dict[str, str] = {}
        self._columns: OrderedDict[tuple[str, bytes], tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def type_of(self, text: str) -> str:
        """The type the rules give ``text`` (their default when no rule matches)."""
        found = self._type_of.get(text)
        if found is None:
            found = self.rules.classify(text)[0]
            if len(self._type_of) < _TEXTS:
                self._type_of[text] = found
        return found

    def form_of(self, text: str) -> str:
        """The form the rules give ``text`` (their default form when no rule matches)."""
        found = self._form_of.get(text)
        if found is None:
            found = self.rules.classify_form(text)[0]
            if len(self._form_of) < _TEXTS:
                self._form_of[text] = found
        return found

    def types(self, texts: Sequence[str]) -> tuple[str, ...]:
        """``type_of`` each text, as one column kept by its content."""
        return self._column("type", texts, self.type_of)

    def forms(self, texts: Sequence[str]) -> tuple[str, ...]:
        """``form_of`` each text, as one column kept by its content."""
        return self._column("form", texts, self.form_of)

    def _column(self, kind: str, texts: Sequence[str], label: Callable[[str], str]) -> tuple[str, ...]:
        key = (kind, _digest(texts))
        with self._lock:
            found = self._columns.get(key)
            if found is not None:
                self._columns.move_to_end(key)
                return found
        column = tuple(map(label, texts))
        with self._lock:
            self._columns[key] = column
            while len(self._columns) > _COLUMNS:
                self._columns.popitem(last=False)
        return column


@cache
def default_labeller() -> Labeller:
    """The labeller of the built-in rules (``default_type_rules``), shared by every stage."""
    return Labeller(default_type_rules())


def _digest(texts: Sequence[str]) -> bytes:
    """SHA-256 of the texts and their lengths (so that no two lists of texts share one), in C passes."""
    digest = hashlib.sha256(array("q", map(len, texts)).tobytes())
    digest.update("".join(texts).encode("utf-8", "surrogatepass"))
    return digest.digest()
