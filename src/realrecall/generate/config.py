"""``GenerateConfig``: every option of the generate stage, declared once, with its default and rules.

``realrecall generate``'s options, the keys of pipeline.toml's ``[generate]`` and the keyword
arguments of ``GenerateConfig`` are its fields (``realrecall.settings`` derives the command line's
options from the declarations below). Kept free of heavy imports: the CLI reads it at start-up, so
the checks that need the strategy registry, the query forms or the language detector load them when
a config is made.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from realrecall.errors import InputError, SettingError
from realrecall.generate.question_types import QUESTION_TYPES
from realrecall.llm.types import BASE_URL_HINT, LLMConfig, base_url_problem
from realrecall.settings import BatchSettings, EngineSettings, Flag, StageSettings, Text, parse

__all__ = [
    "BACKENDS",
    "DEFAULT_STRATEGY",
    "MAX_AUDIENCE_CHARS",
    "PROMPT_FILE_STRATEGY",
    "QUESTION_TYPES",
    "SCREEN_MODES",
    "GenerateConfig",
    "Shard",
    "parse_shard",
    "parse_weights",
]

BACKENDS: Mapping[str, str] = {
    "llm": "an OpenAI-compatible chat model writes each question",
    "extractive": "offline, no model: a sentence of the chunk becomes the query (Inverse Cloze)",
}

SCREEN_MODES: Mapping[str, str] = {
    "off": "no screening (--no-screen)",
    "rules": "the readable rules skip chunks without prose (the default)",
    "model": "the rules, then one model request per remaining chunk (--screen)",
}

DEFAULT_STRATEGY = "situation"
"""The strategy of an llm run that names none (a name of ``generate.strategies.STRATEGIES``)."""
PROMPT_FILE_STRATEGY = "direct"
"""The strategy of an llm run that names none and gives a ``prompt`` file (whose prompt it replaces)."""


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


# How the options whose text form their type cannot give are read, from a command line or a file.


def _weights(name: str, what: str, known: Mapping[str, str] | None = None) -> Text:
    """``lookup=2,conceptual`` (a name without a weight weighs 1), or a table of weights."""

    def read(value: object) -> object:
        if value is None or isinstance(value, Mapping):
            return value  # a table: its weights are checked as numbers when the config is made
        if isinstance(value, str):
            return parse_weights(value, what=what, known=known)
        raise SettingError(name, f"must be a string like 'a=2,b' or a table of weights, got {value!r}")

    return Text(read, "NAME[=WEIGHT],...")


def _read_cache_path(value: object) -> object:
    """A file name, refused as given when it can only be a folder (``cache/``: a Path drops the slash)."""
    if isinstance(value, str):
        from realrecall.files import check_file_name

        check_file_name(value.strip(), label="the cache", example="answers.cache.jsonl")
        return parse("cache_path", value, Path | None)
    return value


def _read_personas(value: object) -> object:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise SettingError("personas", f"must be a list of strings, got {value!r}")


def _read_shard(value: object) -> object:
    if value is None or isinstance(value, Shard):
        return value
    if isinstance(value, str):
        return parse_shard(value)
    raise SettingError("shard", f"must be a string like '0/4', got {value!r}")


def _read_screen(value: object) -> object:
    if isinstance(value, bool):  # --screen: the model screen too; --no-screen: none
        return "model" if value else "off"
    if isinstance(value, str):
        return value
    raise SettingError("screen", f"must be off, rules or model, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class GenerateConfig(StageSettings):
    """Every choice of a generation run. Paths are read when the run starts.

    Anything that changes what a question would be (backend, model, prompt, temperature, types,
    languages, personas, style examples, seed) is part of each question's cache key; filters and
    budgets are not, so tightening ``max_overlap`` re-checks cached answers without a request.

    ``request_timeout`` (seconds one model request may take before it counts as timed out and is
    retried) and ``base_url`` (where the requests go) apply to the client the CLI and the pipeline make
    (``llm_config()``); a client passed to ``generate`` keeps its own ``LLMConfig``.
    """

    backend: Annotated[str, "llm (a chat model) or extractive (offline, no model)."] = "llm"
    model: Annotated[str, "Chat model name."] = "gpt-4o-mini"
    temperature: Annotated[
        float, "Sampling temperature of the chat model, in [0, 2] (0: its likeliest words)."
    ] = 0.7
    max_tokens: Annotated[int | None, "Answer token limit per request."] = 200
    prompt: Annotated[
        Path | None, "A prompt file replacing the direct strategy's built-in one (and choosing it)."
    ] = None
    types: Annotated[
        Mapping[str, float],
        "Question types with weights, e.g. lookup=2,conceptual=1; choose from "
        + ", ".join(QUESTION_TYPES)
        + ".",
        _weights("types", "question type", QUESTION_TYPES),
    ] = field(default_factory=_default_types)
    languages: Annotated[
        Mapping[str, float],
        "Keep the chunks in these languages, e.g. de,en (default: every chunk, each question in its "
        "chunk's language); with --cross-language the questions' languages, with weights.",
        _weights("languages", "language"),
    ] = field(default_factory=_default_languages)
    personas: Annotated[
        tuple[str, ...], "Who asks (repeatable).", Flag("--persona"), Text(_read_personas, form="repeated")
    ] = ()
    per_chunk: Annotated[int, "Questions per chunk."] = 1
    sample: Annotated[
        int | float | None,
        "Sample the chunks: a share (0.05) or a count (50, a rate kept by later runs).",
    ] = None
    stratify_by: Annotated[str, "Metadata field the sample is stratified by."] = "document"
    seed: Annotated[
        int,
        "Seed of every random choice: the sample, each question's type, language and form, the style "
        "examples, the requests' seeds.",
    ] = 0
    shard: Annotated[Shard | None, "i/n: this runner's share of the chunks.", Text(_read_shard, "I/N")] = None
    style_examples: Annotated[Path | None, "Real questions (gold JSONL) to match."] = None
    n_style_examples: Annotated[int, "How many real questions to show."] = 3
    max_overlap: Annotated[float | None, "Drop and regenerate above this lexical overlap."] = None
    near_duplicate: Annotated[float | None, "Jaccard bound for near-duplicates; 0 = off."] = 0.8
    judge: Annotated[
        bool,
        "Check answerability with an LLM call (without it, the situation strategy checks that step 1 "
        "quoted the passage: at least 3 content words of it).",
    ] = False
    judge_model: Annotated[str | None, "Model of the judge (default: --model)."] = None
    judge_prompt: Annotated[Path | None, "A prompt file for the judge."] = None
    max_attempts: Annotated[int, "Answers asked per question before giving up."] = 3
    concurrency: Annotated[int, "Requests in flight."] = 8
    price_in: Annotated[float | None, "Price per million input tokens."] = None
    price_out: Annotated[float | None, "Price per million output tokens."] = None
    cache_path: Annotated[
        Path | None,
        "Answer cache (default: beside --output).",
        Flag("--cache"),
        Text(_read_cache_path, "<path>"),
    ] = None
    request_timeout: Annotated[
        float, "Seconds one model request may take before it is retried (each of 6 attempts)."
    ] = 60.0
    base_url: Annotated[str | None, "OpenAI-compatible endpoint (default: OPENAI_BASE_URL)."] = None
    """Where realrecall's own client sends the requests. Not part of any question's cache key, nor of
    the summary's config: the same model behind another address asks and keeps the same questions."""
    type_rules: Annotated[Path | None, "Type and form rules (TOML/JSON) the real set was typed by."] = None
    prune: Annotated[bool, "Drop cached answers this run does not plan (other shards, old parameters)."] = (
        False
    )
    """Drop cached answers of slots this run does not plan (other shards, other parameters, deleted
    chunks). Off by default: they cost nothing to keep and a later run may need them again."""
    cross_language: Annotated[bool, "Ask in the --languages mix whatever each chunk's language."] = False
    """Ask in the languages of ``languages`` whatever the chunk's language (else: only chunks in them)."""
    screen: Annotated[
        str,
        "Skip chunks no user would ask about: rules by default; --screen adds one model request per "
        "chunk, --no-screen turns the rules off.",
        Text(_read_screen, form="switch"),
    ] = "rules"
    """Chunk screening: ``off``, ``rules`` (default) or ``model`` (the rules, then a model request)."""
    multi_chunk: Annotated[
        float, "Share of questions over two related chunks (gold holds both), e.g. 0.2."
    ] = 0.0
    """The share of question slots asked over two related chunks (llm backend; see generate.pairs)."""
    strategy: Annotated[
        str | None, "How the llm backend writes a question; default: situation, or direct with --prompt."
    ] = None
    """How the llm backend writes a question: a name of ``generate.strategies.STRATEGIES`` (``situation``,
    ``direct``...); None: situation, or direct when a ``prompt`` file replaces the direct prompt. Only
    the llm backend has one."""
    audience: Annotated[
        str | None,
        "Who searches and where, e.g. 'clinicians searching a literature database': fills the situation "
        "strategy's prompts (default: the people who typed --style-examples' queries, else people "
        "searching a documentation site or asking a support chat).",
    ] = None
    """Who searches and where (the situation strategy's ``{{audience}}``; ``generate.situation``); one
    line of at most ``MAX_AUDIENCE_CHARS`` characters, its white space collapsed."""
    prompt_situation: Annotated[
        Path | None, "A prompt file replacing step 1 of the situation strategy (prompts/situation.md)."
    ] = None
    prompt_query: Annotated[
        Path | None, "A prompt file replacing step 2 of the situation strategy (prompts/situation_query.md)."
    ] = None
    forms: Annotated[
        Mapping[str, float] | None,
        "Query forms with weights, e.g. keywords=2,question=2,typo=1 (also statement); default: measured "
        "from --style-examples, else keywords=2,question=2,typo=1.",
        _weights("forms", "query form"),
    ] = None
    """Query forms with weights (``generate.forms``); None: measured from the style examples, else
    the default mix."""
    engine_settings: EngineSettings = field(default_factory=EngineSettings)
    """Where the requests are sent from: here, or a pool of Ray actors; set by its fields' names. Not
    part of any question's cache key: both engines ask and keep the same questions."""
    batch_settings: BatchSettings = field(default_factory=BatchSettings)
    """Whether the answers are asked through the provider's Batch API, and how it is polled; set by its
    fields' names (``batch``, ``poll_interval``, ``batch_timeout``); ``generate`` makes the run's
    ``BatchOptions`` from them. Not part of any question's cache key either."""

    def __post_init__(self) -> None:
        # NaN and infinity before the fields are converted (which refuses them as not numbers at all):
        # these rules say what the value must be.
        numbers = (self.request_timeout, self.price_in, self.price_out)
        if any(isinstance(number, float) and not math.isfinite(number) for number in numbers):
            _check_request_timeout(self.request_timeout)
            _check_prices(self)
        super().__post_init__()
        if self.near_duplicate == 0:  # 0 switches the filter off, as on the command line
            object.__setattr__(self, "near_duplicate", None)
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
            from realrecall.generate.languages import check_language_codes  # the detector's model

            check_language_codes(self.languages)
        elif self.cross_language:
            raise InputError("cross_language needs languages to ask in", hint="e.g. --languages de=1,en=1")
        _check_screen_options(self)
        _check_audience(self)
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
            raise SettingError("max_overlap", f"must be within [0, 1], got {self.max_overlap}")
        if self.near_duplicate is not None and not 0.0 < self.near_duplicate <= 1.0:
            raise SettingError("near_duplicate", f"must be within (0, 1], got {self.near_duplicate}")
        if not 0.0 <= self.temperature <= 2.0:
            raise SettingError("temperature", f"must be within [0, 2], got {self.temperature}")
        _check_request_timeout(self.request_timeout)
        _check_prices(self)
        problem = None if self.base_url is None else base_url_problem(self.base_url)
        if problem is not None:
            raise SettingError("base_url", f"{self.base_url!r} {problem}", hint=BASE_URL_HINT)
        if self.batch_settings.batch and self.engine_settings.on_ray:
            raise SettingError(
                "batch", "and the Ray engine are two ways to send the requests", hint="choose one"
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
        return self.strategy or (PROMPT_FILE_STRATEGY if self.prompt is not None else DEFAULT_STRATEGY)

    def llm_config(self) -> LLMConfig:
        """The endpoint settings of the client realrecall makes for this run (address and timeout)."""
        return LLMConfig(base_url=self.base_url, timeout=self.request_timeout)


def _check_screen_options(config: GenerateConfig) -> None:
    if config.screen not in SCREEN_MODES:
        raise InputError(f"unknown screen {config.screen!r}", hint=f"choose from {', '.join(SCREEN_MODES)}")
    if not 0.0 <= config.multi_chunk <= 1.0:
        raise SettingError(
            "multi_chunk", f"must be a share within [0, 1], got {config.multi_chunk!r}", hint="e.g. 0.2"
        )
    if config.multi_chunk and config.backend != "llm":
        raise InputError(
            "questions over two chunks need a model (backend llm)",
            hint="leave multi_chunk (--multi-chunk) out",
        )


MAX_AUDIENCE_CHARS = 200


def _check_audience(config: GenerateConfig) -> None:
    """One line naming who searches and where: it is placed inside a sentence of the prompts."""
    if config.audience is None:
        return
    line = " ".join(config.audience.split())
    if not line:
        raise SettingError(
            "audience",
            "must name who searches and where",
            hint="e.g. 'clinicians searching a literature database'",
        )
    if len(line) > MAX_AUDIENCE_CHARS:
        raise SettingError(
            "audience",
            f"must be at most {MAX_AUDIENCE_CHARS} characters, got {len(line)}",
            hint="say it in a few words",
        )
    object.__setattr__(config, "audience", line)


def _check_prompting_options(config: GenerateConfig) -> None:
    # The registry and the forms load the strategies' modules and the gold reader: not at start-up.
    from realrecall.generate.forms import check_forms
    from realrecall.generate.strategies import find_strategy

    if config.strategy is not None:
        find_strategy(config.strategy)  # a name is checked with any backend, so a typo is never ignored
    strategy = config.effective_strategy
    if strategy is not None:
        find_strategy(strategy).check(config)
    if config.forms is not None:
        check_forms(config.forms)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _positive_seconds(value: Any) -> bool:
    return _is_number(value) and math.isfinite(value) and value > 0


def _check_sample(value: Any) -> None:
    """A share of the chunks (0 < R < 1) or a whole count (1 to 10^9); see ``generate.planner``."""
    share = _is_number(value) and math.isfinite(value) and 0 < value < 1
    count = _is_number(value) and 1 <= value <= 10**9 and float(value).is_integer()
    if not (share or count):
        raise SettingError(
            "sample",
            f"must be a share of the chunks between 0 and 1 (e.g. 0.05) or a whole count >= 1 (e.g. 50), "
            f"got {value!r}",
        )


def _check_weights(weights: Mapping[str, float], what: str) -> None:
    if not weights or any(w < 0 for w in weights.values()) or not any(weights.values()):
        raise InputError(f"give at least one {what} with a positive weight (and none negative)")


def _check_range(name: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SettingError(name, f"must be an integer within [{low}, {high}], got {value!r}")


def _check_request_timeout(value: object) -> None:
    if not _positive_seconds(value):
        raise SettingError(
            "request_timeout", f"must be a number of seconds > 0, got {value!r}", hint="e.g. 30"
        )


def _check_prices(config: GenerateConfig) -> None:
    for price in (config.price_in, config.price_out):
        # NaN or infinity would reach the summary as a cost that is not valid JSON.
        if price is not None and not (_is_number(price) and math.isfinite(price) and price >= 0):
            raise InputError(f"prices must be numbers >= 0, got {price}")
