"""How well synthetic questions pass for real ones: a classifier's cross-validated AUC.

A logistic regression is trained to tell the real questions from the synthetic ones, from simple
surface features (length in words and characters, mean word length, ends with "?", starts with a
question word, capitals, digits, punctuation, commas) and character n-grams (TF-IDF over ``char_wb``
2-4 grams, lower-cased). Every question is scored by a model that did not see it (stratified k-fold,
fixed seed), and the AUC of those scores says how separable the sets are:

- about 0.5: the classifier cannot tell them apart; the synthetic questions read like the users';
- near 1.0: they are told apart almost every time (another length, another form, other words);
- below 0.5 (the whole interval): worse than chance, which no real difference explains. The classifier
  learnt noise: most often the same questions stand on both sides, and each is scored by a model that
  saw its twin with the other label. It says nothing about realism, and the verdict says so.

The same set twice (one file given as both, a link to it, or two files of the same questions) is
refused: there is nothing to tell apart.

The interval is DeLong's (the AUC's standard error from each question's placement among the other
side's scores), which costs nothing beyond the scores. The features that separate the sets most are
those of the model fitted on all questions, ranked by **contribution**: the part of the gap between the
mean scores of the synthetic and the real questions that the feature accounts for, its coefficient
times the difference of its (scaled) mean between the sets. The model's score is a sum over features,
so the contributions add up to that gap. A feature held by 1% of the questions moves the means by
little, however large its coefficient: rare features rank low, however strongly they lean. Each comes
with its standardised weight (coefficient times the feature's standard deviation; > 0 leans synthetic)
and its support: how many real and synthetic questions hold it (a count or length: a non-zero value).
A feature whose contribution is not positive (its weight points against its own difference between the
sets: a correction for a correlated feature) is not listed, nor is one held by fewer than 5% (and 3) of
the questions of the side it leans to (``MIN_SUPPORT_SHARE``): too rare to tell sets apart, it is noise
the fit latched on to.

scikit-learn is an optional dependency (``pip install 'realrecall[realism]'``), imported only when a
score is computed, so the CLI starts without it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from realrecall.errors import InputError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "MIN_QUERIES",
    "RealismFeature",
    "RealismScore",
    "load_questions",
    "realism_missing",
    "realism_of_files",
    "realism_score",
]

# Below this many questions a side, a 5-fold AUC swings too much to say anything.
MIN_QUERIES = 20
FOLDS = 5
SEED = 0
TOP_FEATURES = 10
MIN_SUPPORT_SHARE = 0.05
MIN_SUPPORT = 3
"""A feature is listed only when at least this share (and this many) of the questions of the side it
leans to hold it: a feature two questions in a hundred hold separates nothing but those two, however
large the coefficient the fit gives it (a comma, in two halves of one human set)."""

INSTALL_HINT = "pip install 'realrecall[realism]'"

# English question openers; a keyword query ("dog age by teeth") starts with none of them.
QUESTION_WORDS = frozenset(
    ("what", "how", "why", "when", "where", "who", "whom", "whose", "which", "is", "are", "was", "were",
     "do", "does", "did", "can", "could", "should", "would", "will", "shall", "may", "might", "must",
     "has", "have", "had")
)  # fmt: skip

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class RealismFeature:
    """One feature that tells the sets apart.

    ``weight``: the standardised coefficient, > 0 leans synthetic, < 0 leans real. ``real`` and
    ``synthetic``: the feature's mean on each side (for an n-gram, the share of questions holding it).
    ``contribution``: the part of the gap between the sets' mean scores it accounts for (the ranking);
    ``real_support``, ``synthetic_support``: how many questions of each side hold it (non-zero value).
    """

    name: str
    weight: float
    real: float
    synthetic: float
    contribution: float = 0.0
    real_support: int = 0
    synthetic_support: int = 0

    @property
    def support(self) -> int:
        """How many questions, of both sets, hold the feature."""
        return self.real_support + self.synthetic_support

    @property
    def leans(self) -> str:
        return "synthetic" if self.weight > 0 else "real"


@dataclass(frozen=True)
class RealismScore:
    """How distinguishable the synthetic questions are from the real ones (see the module doc)."""

    auc: float
    low: float
    high: float
    confidence: float
    n_real: int
    n_synthetic: int
    folds: int
    seed: int
    features: tuple[RealismFeature, ...]

    @property
    def verdict(self) -> str:
        """One sentence for a report: how well the synthetic questions pass for real ones."""
        if self.high < 0.5:
            return (
                "the classifier does worse than chance, which is noise, not realism "
                "(do the sets share questions?)"
            )
        if self.low <= 0.5 <= self.high or self.auc < 0.6:
            return "the synthetic questions read like the real ones"
        if self.auc < 0.75:
            return "the synthetic questions are somewhat distinguishable from the real ones"
        if self.auc < 0.9:
            return "the synthetic questions are clearly distinguishable from the real ones"
        return "the synthetic questions are told apart from the real ones almost every time"

    def to_dict(self) -> dict[str, Any]:
        return {
            "auc": round(self.auc, 4),
            "interval": [round(self.low, 4), round(self.high, 4)],
            "confidence": self.confidence,
            "n_real": self.n_real,
            "n_synthetic": self.n_synthetic,
            "folds": self.folds,
            "seed": self.seed,
            "verdict": self.verdict,
            "features": [
                {
                    "name": f.name,
                    "contribution": round(f.contribution, 4),
                    "weight": round(f.weight, 4),
                    "leans": f.leans,
                    "real": round(f.real, 4),
                    "synthetic": round(f.synthetic, 4),
                    "support": {"real": f.real_support, "synthetic": f.synthetic_support},
                }
                for f in self.features
            ],
        }


def realism_missing(n_real: int, n_synthetic: int) -> str | None:
    """Why no realism score can be computed (too few questions, scikit-learn absent), or None."""
    if min(n_real, n_synthetic) < MIN_QUERIES:
        return f"needs at least {MIN_QUERIES} questions on each side ({n_real} real, {n_synthetic} synthetic)"
    try:
        import sklearn  # noqa: F401
    except ImportError:
        return f"scikit-learn is not installed ({INSTALL_HINT})"
    return None


# -- surface features -----------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _first_word(text: str) -> str:
    found = _words(text.lower())
    return found[0] if found else ""


# Name as a report shows it, and the function of one question's text. Counts are log-free on purpose:
# standardised, a coefficient then reads per standard deviation of the raw measure.
SURFACE_FEATURES: tuple[tuple[str, Callable[[str], float]], ...] = (
    ("length in words", lambda t: float(len(_words(t)))),
    ("length in characters", lambda t: float(len(t.strip()))),
    ("mean word length", lambda t: sum(map(len, _words(t))) / max(1, len(_words(t)))),
    ('ends with "?"', lambda t: float(t.rstrip().endswith("?"))),
    ("starts with a question word", lambda t: float(_first_word(t) in QUESTION_WORDS)),
    ("starts with a capital", lambda t: float(t.lstrip()[:1].isupper())),
    ("share of capitals", lambda t: sum(c.isupper() for c in t) / max(1, sum(c.isalpha() for c in t))),
    ("has a digit", lambda t: float(any(c.isdigit() for c in t))),
    ("punctuation marks", lambda t: float(sum(not c.isalnum() and not c.isspace() for c in t))),
    ("has a comma", lambda t: float("," in t)),
)


def _surface_matrix(texts: Sequence[str]) -> NDArray[np.float64]:
    import numpy as np

    return np.array([[fn(text) for _, fn in SURFACE_FEATURES] for text in texts], dtype=np.float64)


def _surface_lookup(texts: Sequence[str]) -> Callable[[Sequence[str]], NDArray[np.float64]]:
    """The surface features of ``texts``, computed once and looked up by every fold's fit."""
    import numpy as np

    rows = dict(zip(texts, _surface_matrix(texts), strict=True))
    return lambda batch: np.array([rows[text] for text in batch], dtype=np.float64)


def _ngram_name(gram: str) -> str:
    # char_wb pads each word with a space; shown, the padding marks a word's start or end.
    return "characters " + json.dumps(gram, ensure_ascii=False)


# -- the score --------------------------------------------------------------------------------------


def realism_score(
    real: Sequence[str],
    synthetic: Sequence[str],
    *,
    folds: int = FOLDS,
    seed: int = SEED,
    top: int = TOP_FEATURES,
    confidence: float = 0.95,
) -> RealismScore:
    """The cross-validated AUC of a classifier telling ``synthetic`` from ``real`` questions.

    Raises InputError when a side has fewer than ``MIN_QUERIES`` questions or scikit-learn is missing.
    """
    missing = realism_missing(len(real), len(synthetic))
    if missing is not None:
        hint = INSTALL_HINT if "scikit-learn" in missing else "give more questions"
        raise InputError(f"no realism score: {missing}", hint=hint)
    if Counter(real) == Counter(synthetic):
        raise InputError(
            "no realism score: the real and the synthetic questions are the same questions",
            hint="give the synthetic set as the second set",
        )
    import numpy as np
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from threadpoolctl import threadpool_limits

    texts = [*real, *synthetic]
    labels = np.array([0] * len(real) + [1] * len(synthetic))
    splits = max(2, min(folds, len(real), len(synthetic)))
    cv = StratifiedKFold(n_splits=splits, shuffle=True, random_state=seed)
    surface = _surface_lookup(texts)
    # One BLAS thread: on these small problems a thread pool costs ten times the arithmetic.
    with threadpool_limits(limits=1):
        scores = cross_val_predict(_pipeline(surface), texts, labels, cv=cv, method="decision_function")
        features = _top_features(texts, labels, top, surface)
    auc, low, high = _auc_interval(scores[labels == 0], scores[labels == 1], confidence)
    return RealismScore(
        auc=auc,
        low=low,
        high=high,
        confidence=confidence,
        n_real=len(real),
        n_synthetic=len(synthetic),
        folds=splits,
        seed=seed,
        features=features,
    )


def realism_of_files(
    real: str | Path,
    synthetic: str | Path,
    *,
    folds: int = FOLDS,
    seed: int = SEED,
    top: int = TOP_FEATURES,
    confidence: float = 0.95,
) -> RealismScore:
    """:func:`realism_score` of the questions of two files (see :func:`load_questions`).

    One file given twice (by the same path, a symlink or a hard link) is refused before it is read.
    """
    from realrecall.files import same_file

    if same_file(real, synthetic):
        raise InputError(
            f"the real and the synthetic questions are the same file: {real} and {synthetic}",
            hint="give the synthetic questions as the second file",
        )
    return realism_score(
        load_questions(real),
        load_questions(synthetic),
        folds=folds,
        seed=seed,
        top=top,
        confidence=confidence,
    )


def _pipeline(surface_features: Callable[[Sequence[str]], NDArray[np.float64]]) -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import FeatureUnion, make_pipeline
    from sklearn.preprocessing import FunctionTransformer, StandardScaler

    surface = make_pipeline(FunctionTransformer(surface_features), StandardScaler())
    ngrams = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), lowercase=True, min_df=2)
    features = FeatureUnion([("surface", surface), ("ngrams", ngrams)])
    # lbfgs is deterministic; C=1 is the usual default and the score is not tuned on the test folds.
    return make_pipeline(features, LogisticRegression(C=1.0, max_iter=2000))


def _top_features(
    texts: Sequence[str],
    labels: NDArray[Any],
    top: int,
    surface_features: Callable[[Sequence[str]], NDArray[np.float64]],
) -> tuple[RealismFeature, ...]:
    import numpy as np

    model = _pipeline(surface_features).fit(texts, labels)
    union = model.steps[0][1]
    coefficients = model.steps[-1][1].coef_[0]
    surface_names = [name for name, _ in SURFACE_FEATURES]
    vectorizer = union.transformer_list[1][1]
    names = surface_names + [_ngram_name(g) for g in vectorizer.get_feature_names_out()]
    raw_surface = surface_features(texts)
    ngram_matrix = vectorizer.transform(texts)
    present = (ngram_matrix > 0).astype(np.float64)
    real, synthetic = labels == 0, labels == 1
    # Standardised weights: surface features are already scaled to unit variance; an n-gram's
    # coefficient is scaled by its TF-IDF column's spread.
    dense_sq = np.asarray(ngram_matrix.multiply(ngram_matrix).mean(axis=0)).ravel()
    dense_mean = np.asarray(ngram_matrix.mean(axis=0)).ravel()
    spread = np.concatenate([np.ones(len(surface_names)), np.sqrt(np.maximum(dense_sq - dense_mean**2, 0))])
    weights = coefficients * spread
    # Contribution: coefficient x (synthetic mean - real mean) of the column the model reads; the
    # model's score is their sum, so they split the gap between the sets' mean scores.
    scaled = union.transform(texts)
    gap = np.asarray(scaled[synthetic].mean(axis=0) - scaled[real].mean(axis=0)).ravel()
    contributions = coefficients * gap
    features: list[RealismFeature] = []
    for index in np.argsort(-contributions, kind="stable"):
        # Not positive: nothing of the gap, or a weight against the feature's own difference between
        # the sets (longer questions are synthetic, yet the weight says real), a correction for a
        # correlated feature; it separates nothing by itself.
        if len(features) == top or contributions[index] <= 0:
            break
        if index < len(surface_names):
            column = raw_surface[:, index]
        else:
            column = present[:, index - len(surface_names)].toarray().ravel()
        real_mean, synthetic_mean = float(column[real].mean()), float(column[synthetic].mean())
        side = synthetic if weights[index] > 0 else real
        held = int(np.count_nonzero(column[side]))
        if held < max(MIN_SUPPORT, MIN_SUPPORT_SHARE * int(side.sum())):
            continue  # too rare on the side it leans to: noise the fit latched on to
        features.append(
            RealismFeature(
                names[index],
                float(weights[index]),
                real_mean,
                synthetic_mean,
                contribution=float(contributions[index]),
                real_support=int(np.count_nonzero(column[real])),
                synthetic_support=int(np.count_nonzero(column[synthetic])),
            )
        )
    return tuple(features)


def _auc_interval(
    negatives: NDArray[np.float64], positives: NDArray[np.float64], confidence: float
) -> tuple[float, float, float]:
    """AUC with DeLong's interval (normal approximation, clipped to [0, 1])."""
    import numpy as np
    from scipy.stats import norm

    # Placement values: for each positive, the share of negatives it beats (ties count half), and
    # the converse; the AUC is their mean and their variances give its standard error.
    beats = (positives[:, None] > negatives[None, :]).astype(np.float64)
    beats += 0.5 * (positives[:, None] == negatives[None, :])
    v10 = beats.mean(axis=1)
    v01 = 1.0 - beats.mean(axis=0)
    auc = float(v10.mean())
    variance = v10.var(ddof=1) / len(positives) + v01.var(ddof=1) / len(negatives)
    z = float(norm.ppf(0.5 + confidence / 2))
    half = z * float(np.sqrt(max(variance, 0.0)))
    return auc, max(0.0, auc - half), min(1.0, auc + half)


# -- reading questions ------------------------------------------------------------------------------


def load_questions(path: str | Path) -> list[str]:
    """The question texts of a file: a gold set (any format ``load_gold`` reads that holds text), a
    JSON Lines file of ``{"query"|"question"|"text": ...}`` objects or strings, a ``.tsv`` of
    ``id<TAB>text`` lines (MS MARCO and TREC topics files), or plain text, one question a line.
    """
    p = Path(path)
    if p.is_dir() or (p.suffix == ".tsv" and (p.parent.parent / "queries.jsonl").is_file()):
        from realrecall.gold import load_gold

        questions = [query.query for query in load_gold(p) if query.query.strip()]
    elif p.suffix in (".jsonl", ".json"):
        questions = _jsonl_questions(p)
    else:
        questions = _line_questions(p, tabbed=p.suffix == ".tsv")
    if not questions:
        raise InputError("no question found", path=p, hint="give a file with one question per line or record")
    return questions


_TEXT_KEYS = ("query", "question", "text")


def _jsonl_questions(path: Path) -> list[str]:
    from realrecall.files import parse_jsonl_line, read_text_lines

    questions = []
    for number, line in read_text_lines(path):
        if not line.strip():
            continue
        try:
            value: Any = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            value = parse_jsonl_line(line, path, number, what="question")  # raises with the line
        if isinstance(value, dict):
            value = next((value[key] for key in _TEXT_KEYS if isinstance(value.get(key), str)), None)
        if not isinstance(value, str):
            raise InputError(
                "no question text in this record",
                path=path,
                line=number,
                hint='give a "query", "question" or "text" field (or a JSON string)',
            )
        if value.strip():
            questions.append(value.strip())
    return questions


def _line_questions(path: Path, *, tabbed: bool) -> list[str]:
    from realrecall.files import read_text_lines

    lines = [line for _, line in read_text_lines(path) if line.strip()]
    if lines and all(_QRELS_LINE.match(line) for line in lines):
        raise InputError(
            "this looks like TREC qrels, which hold no question text",
            path=path,
            hint="give the queries file (id<TAB>text, JSON Lines or one question a line)",
        )
    return [text.strip() for line in lines if (text := line.rsplit("\t", 1)[-1] if tabbed else line).strip()]


# A qrels line: query id, the iteration column trec_eval ignores (0 or Q0 in TREC's files, judge:<model>
# in a judge's), document id, integer grade. Four words ending in a number alone is not enough: a file
# of short questions ("covid cases in 2020", "top films of 1999") has lines of that shape too, and must
# be read as questions; the iteration column is what no question line carries on every line.
_QRELS_LINE = re.compile(r"^\s*\S+\s+(?:0|[Qq]0|judge:\S+)\s+\S+\s+-?\d+\s*$")
