"""Where the work runs: this process (the local engine) or a Ray cluster (``realrecall[ray]``).

``EngineSettings`` says which; ``open_cluster`` starts or joins the Ray cluster for one run and hands
the stages a ``Cluster`` to send their work to (Ray Data jobs and actor pools). Only
``realrecall.engine.cluster`` imports Ray, and only when a run asks for the Ray engine.
"""

from __future__ import annotations

import typing as _typing

from realrecall._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from realrecall.engine.cluster import Cluster as Cluster
    from realrecall.engine.cluster import open_cluster as open_cluster
    from realrecall.settings import EngineSettings as EngineSettings

__all__, __getattr__, __dir__ = _lazy_exports(__name__, __file__)
