"""What a generation run is asked to do: one frozen value, checked when it is made."""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.generate.forms import check_forms
from realrecall.generate.languages import check_language_codes
from realrecall.generate.question_types import QUESTION_TYPES
from realrecall.generate.screening import SCREEN_MODES
from realrecall.generate.strategies import DEFAULT, WITH_PROMPT_FILE, find_strategy
from realrecall.llm.types import LLMConfig

__all__ = ["BACKENDS", "QUESTION_TYPES", "GenerateConfig", "Shard", "parse_shard", "parse_weights"]

BACKENDS: Mapping[str, str] = {
    "llm": "an OpenAI-compatible chat model writes each question",
    "extractive": "offline, no model: a sentence of the chunk becomes the query (Inverse Cloze)",
}


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (0-based): the chunks whose id hashes to ``index`` modulo ``count``."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise InputError(f"bad shard {self.index}/{self.count}", hint="use i/n with 0 <= i < n, e.g. 0/4")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``"1/4"`` -> ``Shard(1, 4)``."""
    index, _sep, count = text.partition("/")
    try:
        return Shard(int(index), int(count))
    except ValueError:
        raise InputError(f"bad shard {text!r}", hint="use i/n with 0 <= i < n, e.g. 0/4") from None


def parse_weights(text: str, *, what: str, known: Mapping[str, str] | None = None) -> dict[str, float]:
    """``"lookup=2,conceptual"`` -> ``{"lookup": 2.0, "conceptual": 1.0}``; a name without weight weighs 1."""
    weights: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, raw = item.partition("=")
        name = name.strip()
        try:
            weight = float(raw) if sep else 1.0
        except ValueError:
            raise InputError(f"bad weight {raw!r} for {what} {name!r}", hint="write name=number") from None
        if known is not None and name not in known:
            raise InputError(f"unknown {what} {name!r}", hint=f"choose from {', '.join(known)}")
        if weight < 0 or name in weights:
            raise InputError(f"{what} {name!r} given twice or with a negative weight")
        weights[name] = weight
    if not weights or not any(weights.values()):
        raise InputError(f"no {what} with a positive weight in {text!r}")
    return weights


def _default_types() -> dict[str, float]:
    return {"lookup": 2.0, "conceptual": 1.0}


def _default_languages() -> dict[str, float]:
    # Empty: each question in its chunk's own language (see generate.languages).
    return {}


@dataclass(frozen=True, kw_only=True)
class GenerateConfig:
    """Every choice of a generation run. Paths are read when the run starts.

    Anything that changes what a question would be (backend, model, prompt, temperature, types,
    languages, personas, style examples, seed) is part of each question's cache key; filters and
    budgets are not, so tightening ``max_overlap`` re-checks cached answers without a request.

    ``request_timeout`` (seconds one model request may take before it counts as timed out and is
    retried) applies to the client the CLI and the pipeline make (``llm_config()``); a client passed
    to ``generate`` keeps its own ``LLMConfig``.
    """

    backend: str = "llm"
    model: str = "gpt-4o-mini"
    temperature: float = 0.7
    max_tokens: int | None = 200
    prompt: Path | None = None
    types: Mapping[str, float] = field(default_factory=_default_types)
    languages: Mapping[str, float] = field(default_factory=_default_languages)
    personas: tuple[str, ...] = ()
    per_chunk: int = 1
    sample: float | None = None
    stratify_by: str = "document"
    seed: int = 0
    shard: Shard | None = None
    style_examples: Path | None = None
    n_style_examples: int = 3
    max_overlap: float | None = None
    near_duplicate: float | None = 0.8
    judge: bool = False
    judge_model: str | None = None
    judge_prompt: Path | None = None
    max_attempts: int = 3
    concurrency: int = 8
    price_in: float | None = None
    price_out: float | None = None
    cache_path: Path | None = None
    request_timeout: float = 60.0
    type_rules: Path | None = None
    prune: bool = False
    """Drop cached answers of slots this run does not plan (other shards, other parameters, deleted
    chunks). Off by default: they cost nothing to keep and a later run may need them again."""
    cross_language: bool = False
    """Ask in the languages of ``languages`` whatever the chunk's language (else: only chunks in them)."""
    screen: str = "rules"
    """Chunk screening: ``off``, ``rules`` (default) or ``model`` (the rules, then a model request)."""
    multi_chunk: float = 0.0
    """The share of question slots asked over two related chunks (llm backend; see generate.pairs)."""
    strategy: str | None = None
    """How the llm backend writes a question: a name of ``generate.strategies.STRATEGIES`` (``situation``,
    ``direct``...); None: situation, or direct when a ``prompt`` file replaces the direct prompt. Only
    the llm backend has one."""
    forms: Mapping[str, float] | None = None
    """Query forms with weights (``generate.forms``); None: measured from the style examples, else
    the default mix."""

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise InputError(f"unknown backend {self.backend!r}", hint=f"choose from {', '.join(BACKENDS)}")
        for name in self.types:
            if name not in QUESTION_TYPES:
                raise InputError(
                    f"unknown question type {name!r}", hint=f"choose from {', '.join(QUESTION_TYPES)}"
                )
        _check_weights(self.types, "question type")
        if self.languages:
            _check_weights(self.languages, "language")
            check_language_codes(self.languages)
        elif self.cross_language:
            raise InputError("cross_language needs languages to ask in", hint="e.g. --languages de=1,en=1")
        _check_screen_options(self)
        _check_prompting_options(self)
        _check_range("per_chunk", self.per_chunk, 1, 1000)
        _check_range("max_attempts", self.max_attempts, 1, 100)
        _check_range("concurrency", self.concurrency, 1, 10_000)
        _check_range("n_style_examples", self.n_style_examples, 0, 100)
        if self.sample is not None:
            _check_sample(self.sample)
        if self.max_tokens is not None:
            _check_range("max_tokens", self.max_tokens, 1, 1_000_000)
        if not self.model.strip() or not self.stratify_by.strip():
            raise InputError("model and stratify_by must not be empty")
        if self.max_overlap is not None and not 0.0 <= self.max_overlap <= 1.0:
            raise InputError(f"max_overlap must be within [0, 1], got {self.max_overlap}")
        if self.near_duplicate is not None and not 0.0 < self.near_duplicate <= 1.0:
            raise InputError(f"near_duplicate must be within (0, 1], got {self.near_duplicate}")
        if not 0.0 <= self.temperature <= 2.0:
            raise InputError(f"temperature must be within [0, 2], got {self.temperature}")
        for price in (self.price_in, self.price_out):
            # NaN or infinity would reach the summary as a cost that is not valid JSON.
            if price is not None and not (math.isfinite(price) and price >= 0):
                raise InputError(f"prices must be numbers >= 0, got {price}")
        if not _positive_seconds(self.request_timeout):
            raise InputError(
                f"request_timeout must be a number of seconds > 0, got {self.request_timeout!r}",
                hint="e.g. 30",
            )
        if any(not persona.strip() for persona in self.personas):
            raise InputError("a persona is empty", hint="describe each persona in a few words")

    @property
    def effective_judge_model(self) -> str:
        return self.judge_model or self.model

    @property
    def effective_strategy(self) -> str | None:
        """How the llm backend writes a question (None for the extractive backend)."""
        if self.backend != "llm":
            return None
        return self.strategy or (WITH_PROMPT_FILE if self.prompt is not None else DEFAULT)

    def llm_config(self, base_url: str | None = None) -> LLMConfig:
        """The endpoint settings of the client realrecall makes for this run (request timeout included)."""
        return LLMConfig(base_url=base_url, timeout=self.request_timeout)

    @classmethod
    def from_options(
        cls,
        options: Mapping[str, Any],
        *,
        source: str | Path | None = None,
        base: str | Path | None = None,
        label: str = "generate option",
    ) -> GenerateConfig:
        """A config from plain values, e.g. a pipeline's ``[generate] options`` table or parsed JSON.

        Every key is checked first: an unknown one is an InputError naming it and the valid ones
        (never ``__init__() got an unexpected keyword argument``). Strings are accepted where the CLI
        takes them (``types = "lookup=2,conceptual"``, ``shard = "0/4"``); relative paths are read
        from ``base`` (default: the folder of ``source``). Errors name ``source``.
        """
        names = [item.name for item in fields(cls)]
        for key in options:
            if key not in names:
                close = difflib.get_close_matches(str(key), names, n=1)
                guess = f"did you mean {close[0]!r}? " if close else ""
                raise InputError(
                    f"unknown {label} {key!r}", path=source, hint=f"{guess}valid: {', '.join(names)}"
                )
        folder = Path(base) if base is not None else Path(source).parent if source is not None else None
        values: dict[str, Any] = {}
        try:
            for key, value in options.items():
                values[key] = _option_value(key, value, folder)
            return cls(**values)
        except InputError as exc:
            if exc.path is not None:
                raise
            raise InputError(f"{label}s: {exc.message}", path=source, hint=exc.hint) from None


def _check_screen_options(config: GenerateConfig) -> None:
    if config.screen not in SCREEN_MODES:
        raise InputError(f"unknown screen {config.screen!r}", hint=f"choose from {', '.join(SCREEN_MODES)}")
    if not (_is_number(config.multi_chunk) and 0.0 <= config.multi_chunk <= 1.0):
        raise InputError(
            f"multi_chunk must be a share within [0, 1], got {config.multi_chunk!r}", hint="e.g. 0.2"
        )
    if config.multi_chunk and config.backend != "llm":
        raise InputError(
            "questions over two chunks need a model (backend llm)",
            hint="leave multi_chunk (--multi-chunk) out",
        )


def _check_prompting_options(config: GenerateConfig) -> None:
    if config.strategy is not None:
        find_strategy(config.strategy)  # a name is checked with any backend, so a typo is never ignored
    strategy = config.effective_strategy
    if strategy is not None:
        find_strategy(strategy).check(config)
    if config.forms is not None:
        check_forms(config.forms)


_PATH_OPTIONS = ("prompt", "style_examples", "judge_prompt", "cache_path", "type_rules")
_TEXT_OPTIONS = ("backend", "model", "stratify_by", "judge_model", "strategy")
_NUMBER_OPTIONS = (
    "multi_chunk",
    "temperature",
    "max_overlap",
    "near_duplicate",
    "price_in",
    "price_out",
    "request_timeout",
)
_INTEGER_OPTIONS = (
    "max_tokens",
    "per_chunk",
    "seed",
    "n_style_examples",
    "max_attempts",
    "concurrency",
)
_OPTIONAL = (
    "max_tokens",
    "sample",
    "max_overlap",
    "near_duplicate",
    "price_in",
    "price_out",
    "judge_model",
    "strategy",
    "forms",
)


def _option_value(key: str, value: Any, folder: Path | None) -> Any:
    """One option as GenerateConfig takes it; InputError naming the key for a value of the wrong kind."""
    if value is None and key in (*_OPTIONAL, *_PATH_OPTIONS, "shard"):
        return None
    if key == "near_duplicate" and _is_number(value) and value == 0:
        return None  # as on the command line: 0 switches the filter off
    if key in ("types", "languages", "forms"):
        what = {"types": "question type", "languages": "language", "forms": "query form"}[key]
        if isinstance(value, str):
            return parse_weights(value, what=what, known=QUESTION_TYPES if key == "types" else None)
        if isinstance(value, Mapping) and all(_is_number(weight) for weight in value.values()):
            return {str(name): float(weight) for name, weight in value.items()}
        raise InputError(f"{key} must be a string like 'a=2,b' or a table of weights, got {value!r}")
    if key == "personas":
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
            return tuple(value)
        raise InputError(f"personas must be a list of strings, got {value!r}")
    if key == "shard":
        if isinstance(value, Shard):
            return value
        if isinstance(value, str):
            return parse_shard(value)
        raise InputError(f"shard must be a string like '0/4', got {value!r}")
    if key in _PATH_OPTIONS:
        if not isinstance(value, str | Path) or not str(value).strip():
            raise InputError(f"{key} must be a path, got {value!r}")
        path = Path(value).expanduser()
        return path if path.is_absolute() or folder is None else folder / path
    if key in _TEXT_OPTIONS:
        if not isinstance(value, str):
            raise InputError(f"{key} must be a string, got {value!r}")
        return value
    if key == "screen":
        if isinstance(value, bool):  # true: the model screen too; false: none
            return "model" if value else "off"
        if not isinstance(value, str):
            raise InputError(f"screen must be off, rules or model, got {value!r}")
        return value
    if key in ("judge", "prune", "cross_language"):
        if not isinstance(value, bool):
            raise InputError(f"{key} must be true or false, got {value!r}")
        return value
    if key == "sample":
        if not _is_number(value):
            raise InputError(f"sample must be a share like 0.05 or a count like 50, got {value!r}")
        return value
    if key in _NUMBER_OPTIONS:
        if not _is_number(value):
            raise InputError(f"{key} must be a number, got {value!r}")
        return float(value)
    if key in _INTEGER_OPTIONS:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"{key} must be an integer, got {value!r}")
        return value
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _positive_seconds(value: Any) -> bool:
    return _is_number(value) and math.isfinite(value) and value > 0


def _check_sample(value: Any) -> None:
    """A share of the chunks (0 < R < 1) or a whole count (1 to 10^9); see ``generate.planner``."""
    share = _is_number(value) and math.isfinite(value) and 0 < value < 1
    count = _is_number(value) and 1 <= value <= 10**9 and float(value).is_integer()
    if not (share or count):
        raise InputError(
            f"sample must be a share of the chunks between 0 and 1 (e.g. 0.05) or a whole count >= 1 "
            f"(e.g. 50), got {value!r}",
        )


def _check_weights(weights: Mapping[str, float], what: str) -> None:
    if not weights or any(w < 0 for w in weights.values()) or not any(weights.values()):
        raise InputError(f"give at least one {what} with a positive weight (and none negative)")


def _check_range(name: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"{name} must be an integer within [{low}, {high}], got {value!r}")
