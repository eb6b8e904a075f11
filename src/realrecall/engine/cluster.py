"""The Ray engine: start or join a cluster for one run, and send it work; the only module importing Ray.

Work goes out in *parts* (a batch of queries, a slice of the corpus, one pipeline), each a pickled
Python object, so whatever a stage hands over comes back exactly as it went (no conversion to Arrow
types on the way). Four shapes:

- ``Cluster.map``: a Ray Data job, ``map_batches`` over the parts, either in a pool of actors that each
  run a ``setup`` once (build the retriever's index, load the embedding model) then its function on
  each part they get, or in stateless tasks. Results stream back to the driver as they finish, which
  feeds the progress callback; they are returned in the parts' order.
- ``Cluster.tasks``: one Ray task per item (``realrecall run`` over many pipelines).
- ``Cluster.chat_client``: a ``ChatClient`` whose requests are sent by a pool of actors, each holding
  its own LLM client; the answers come back to the driver, whose cache and store decide what is kept.
- ``Cluster.pool``: actors that each hold one object for the whole run (a loaded embedding model),
  asked from the driver or from other actors of the run (local-dense's retrieval actors embed their
  queries there, so the model is loaded once a run, not once a stage).

An actor that dies is restarted and its work retried ``actor_retries`` times, then the run stops with
one ``EngineError`` line. A project error raised in a worker (a bad retriever option, a custom
retriever failing on a query, an endpoint that kept failing) comes back as itself, so the caller sees
the same line the local engine gives. Nothing here writes a file: the stages write on the driver.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import pickle
import socket
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from realrecall.errors import EngineError, InputError, RealrecallError
from realrecall.settings import EngineSettings

if TYPE_CHECKING:
    from realrecall.llm.types import ChatClient, ChatRequest, ChatResult

__all__ = ["MISSING_EXTRA", "ActorPool", "Cluster", "Stage", "open_cluster"]

MISSING_EXTRA = "the ray engine needs the optional extra: pip install 'realrecall[ray]'"

T = TypeVar("T")

# Seconds to wait for a cluster's address to answer before saying it cannot be reached (ray.init
# itself waits minutes on an address where nothing listens, then exits the process).
_REACH_TIMEOUT = 5.0


@dataclass(frozen=True)
class Stage:
    """How a ``Cluster.map`` job processes each part.

    Actors: ``setup()`` runs once in each of ``actors`` actors and returns the function applied to
    every part that actor gets (so an index is built once per actor). Tasks: ``function`` is applied to
    each part in a stateless task. ``what`` names the stage in errors (``retrieval``, ``scoring``).
    ``num_cpus``: CPUs each worker reserves.
    """

    what: str
    function: Callable[[Any], Any] | None = None
    setup: Callable[[], Callable[[Any], Any]] | None = None
    actors: int | None = None
    num_cpus: float = 1.0

    def __post_init__(self) -> None:
        if (self.function is None) == (self.setup is None):
            raise RuntimeError("a stage has either a function (tasks) or a setup (actors)")


@contextlib.contextmanager
def open_cluster(settings: EngineSettings | None) -> Iterator[Cluster | None]:
    """The cluster the Ray engine sends work to during the ``with`` block; None for the local engine.

    A Ray already running in this process (the caller's own ``ray.init``) is used as it is and left
    running; otherwise one is started here (``num_cpus``) or joined (``address``), and shut down at the
    end of the block, whatever ends it (Ctrl-C included), with every actor it started.
    """
    if settings is None or not settings.on_ray:
        yield None
        return
    ray = _import_ray()
    if settings.address is not None and settings.address != "auto":
        # In seconds, before Ray is asked (it waits minutes); a cluster named but down is said so even
        # when this process already runs a Ray.
        _check_reachable(settings.address)
    started = not ray.is_initialized()
    with _quiet(ray, show=settings.ray_logs):
        if started:
            _connect(ray, settings)
        cluster = Cluster(ray, settings)
        try:
            yield cluster
        finally:
            cluster.close()
            if started:
                ray.shutdown()


class Cluster:
    """A Ray cluster joined for one run (see ``open_cluster``)."""

    def __init__(self, ray: Any, settings: EngineSettings) -> None:
        self._ray = ray
        self.settings = settings
        self._actors: list[Any] = []

    @property
    def cpus(self) -> int:
        """The cluster's CPUs (at least 1)."""
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def pool_size(self, given: int | None, parts: int | None = None) -> int:
        """Actors for a pool: ``given``, else one a CPU; never more than there are parts to do."""
        size = given if given is not None else self.cpus
        return max(1, min(size, parts)) if parts is not None else size

    def map(
        self,
        parts: Sequence[Any],
        stage: Stage,
        *,
        sizes: Sequence[int] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[Any]:
        """Each part through ``stage`` as one Ray Data job, the results in the parts' order.

        ``progress(done, total)`` counts ``sizes`` (each part's items; default 1 a part), called
        before the first result and after each, from the driver.
        """
        if not parts:
            return []
        data = _ray_data()
        counts = list(sizes) if sizes is not None else [1] * len(parts)
        rows = [{"part": index, "data": _dumps(part)} for index, part in enumerate(parts)]
        dataset = data.from_items(rows, override_num_blocks=len(rows))
        retries = self.settings.actor_retries
        options: dict[str, Any] = {"batch_size": 1, "batch_format": "pyarrow", "num_cpus": stage.num_cpus}
        if stage.setup is not None:
            size = self.pool_size(stage.actors, len(parts))
            options.update(
                fn_constructor_kwargs={"setup": stage.setup},
                compute=data.ActorPoolStrategy(size=size),
                max_restarts=retries,
                max_task_retries=retries,
            )
            function: Any = _ActorWorker
        else:
            options.update(fn_kwargs={"function": stage.function}, max_retries=retries)
            function = _task_worker
        if progress is not None:
            progress(0, sum(counts))
        with warnings.catch_warnings():
            # Bounded restarts are only given as remote arguments (Ray Data's own default: forever), and
            # Ray Data warns of its own deprecated settings as it copies its context to the workers.
            warnings.simplefilter("ignore", DeprecationWarning)
            mapped = dataset.map_batches(function, **options)
            batches = mapped.iter_batches(batch_format="pyarrow", batch_size=None)
            return self._collect(batches, counts, progress, stage.what)

    def _collect(
        self, batches: Any, counts: list[int], progress: Callable[[int, int], None] | None, what: str
    ) -> list[Any]:
        """The job's results as they stream back, each into its part's place; progress after each.

        A part that failed is raised once every part before it is back, so the error is the one the
        local engine, going through the parts in order, meets first.
        """
        results: list[Any] = [None] * len(counts)
        finished: set[int] = set()
        failed: dict[int, _Failed] = {}
        done, total = 0, sum(counts)
        try:
            for batch in batches:
                indexes, blobs = batch.column("part").to_pylist(), batch.column("data").to_pylist()
                for index, blob in zip(indexes, blobs, strict=True):
                    result = pickle.loads(blob)
                    finished.add(index)
                    if isinstance(result, _Failed):
                        failed[index] = result
                        continue
                    results[index] = result
                    done += counts[index]
                _raise_first(failed, finished)
                if progress is not None:
                    progress(done, total)
            _raise_first(failed, finished)
        except self._ray.exceptions.RayError as exc:
            raise _engine_error(exc, what, self.settings.actor_retries) from None
        finally:
            close = getattr(batches, "close", None)
            if close is not None:
                close()
        return results

    def tasks(
        self,
        function: Callable[[Any], Any],
        items: Sequence[Any],
        *,
        what: str,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[Any]:
        """``function(item)`` for each item in its own Ray task, the results in the items' order."""
        retries = self.settings.actor_retries
        remote = self._ray.remote(max_retries=retries)(_run_task)
        refs = [remote.remote(function, item) for item in items]
        # A pipeline's task still running when another failed is killed (force): it may run for hours.
        return _gather(refs, what=what, retries=retries, progress=progress, force_cancel=True)

    def chat_client(self, make: Callable[[], ChatClient], *, actors: int | None = None) -> ChatClient:
        """A ChatClient whose ``complete`` runs in a pool of actors, each holding the client ``make()``
        gives; started on the first request (a run answered wholly from the cache starts none)."""
        return _ActorChatClient(self, make, self.pool_size(actors))

    def pool(self, setup: Callable[[], object], size: int, *, what: str) -> ActorPool:
        """``size`` actors that each hold ``setup()``'s object for the rest of the run (a loaded model),
        asked through the ``ActorPool`` (picklable: other actors of the run may ask it too)."""
        return ActorPool(
            tuple(self._start_actors(_ObjectActor, size, setup)), what, self.settings.actor_retries
        )

    def _start_actors(self, cls: type, size: int, *args: Any) -> list[Any]:
        # No CPU reserved: a chat actor waits on the endpoint. A call whose actor dies is sent again
        # by Ray once the actor is back, at most ``actor_retries`` times.
        # Spread over the nodes: with no CPU to reserve, Ray would otherwise pack them on one.
        retries = self.settings.actor_retries
        remote = self._ray.remote(cls).options(
            max_restarts=retries, max_task_retries=retries, num_cpus=0, scheduling_strategy="SPREAD"
        )
        actors = [remote.remote(*args) for _ in range(size)]
        self._actors.extend(actors)
        return actors

    def close(self) -> None:
        """Stop every actor this run started (Ray Data stops its own at the end of each job)."""
        for actor in self._actors:
            with contextlib.suppress(Exception):
                self._ray.kill(actor, no_restart=True)
        self._actors.clear()


class _ActorChatClient:
    """``ChatClient.complete`` through a pool of actors, least busy first; see ``Cluster.chat_client``.

    A request whose actor dies is sent again once Ray has restarted it (each answer that came back is
    in the driver's cache by then, so only the requests in flight at the death are sent twice), at most
    ``actor_retries`` times, then one EngineError line.
    """

    def __init__(self, cluster: Cluster, make: Callable[[], ChatClient], size: int) -> None:
        self._cluster = cluster
        self._make = make
        self._size = size
        self._actors: list[Any] = []
        self._busy: list[int] = []
        self._turn = itertools.count()

    async def complete(self, request: ChatRequest) -> ChatResult:
        ray = self._cluster._ray
        if not self._actors:
            self._actors = self._cluster._start_actors(_ChatActor, self._size, self._make)
            self._busy = [0] * self._size
        start = next(self._turn) % self._size
        index = min(((start + i) % self._size for i in range(self._size)), key=self._busy.__getitem__)
        self._busy[index] += 1
        try:
            result = await self._actors[index].complete.remote(request)
        except ray.exceptions.RayError as exc:
            raise _engine_error(exc, "generation", self._cluster.settings.actor_retries) from None
        finally:
            self._busy[index] -= 1
        if isinstance(result, _Failed):
            raise result.error()
        return result  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        for actor in self._actors:
            with contextlib.suppress(Exception):
                self._cluster._ray.kill(actor, no_restart=True)
        self._actors = []


class ActorPool:
    """A pool of actors that each hold one object for the run (``Cluster.pool``): one of its methods
    called on one item (``call``, from any process of the run), or on many items spread over the pool
    (``map``, from the driver, with progress). An actor that dies is restarted (its object made again)
    and the call sent again, at most ``retries`` times, then one EngineError line naming ``what``.
    """

    def __init__(self, actors: tuple[Any, ...], what: str, retries: int) -> None:
        self._actors = actors
        self._what = what
        self._retries = retries
        self._turn = itertools.count(os.getpid())  # each process that asks starts on its own actor

    def __reduce__(self) -> tuple[Any, ...]:
        return (ActorPool, (self._actors, self._what, self._retries))

    def attribute(self, name: str) -> Any:
        """An attribute of the object the pool's first actor holds (its description, say)."""
        return self._get([self._actors[0].attribute.remote(name)])[0]

    def call(self, method: str, item: Any) -> Any:
        """``object.method(item)`` in one of the pool's actors."""
        actor = self._actors[next(self._turn) % len(self._actors)]
        return self._get([actor.call.remote(method, item)])[0]

    def map(
        self,
        method: str,
        items: Sequence[Any],
        *,
        sizes: Sequence[int] | None = None,
        progress: Callable[[int, int], None] | None = None,
        arrived: Callable[[int, Any], None] | None = None,
    ) -> list[Any]:
        """``object.method(item)`` for each item, spread over the actors, the results in the items'
        order; ``progress(done, total)`` counts ``sizes`` (default 1 an item) and ``arrived(index,
        result)`` is called with each result, both as results come back."""
        counts = list(sizes) if sizes is not None else [1] * len(items)
        actors = itertools.cycle(self._actors)
        refs = [next(actors).call.remote(method, item) for item in items]
        return self._get(refs, counts, progress, arrived)

    def _get(
        self,
        refs: list[Any],
        counts: list[int] | None = None,
        progress: Callable[[int, int], None] | None = None,
        arrived: Callable[[int, Any], None] | None = None,
    ) -> list[Any]:
        return _gather(
            refs, what=self._what, retries=self._retries, counts=counts, progress=progress, arrived=arrived
        )


def _gather(
    refs: Sequence[Any],
    *,
    what: str,
    retries: int,
    counts: Sequence[int] | None = None,
    progress: Callable[[int, int], None] | None = None,
    arrived: Callable[[int, Any], None] | None = None,
    force_cancel: bool = False,
) -> list[Any]:
    """Each ref's result, in the refs' order, taken as they come back (``Cluster.tasks``, ``ActorPool``).

    ``progress(done, total)`` counts ``counts`` (default 1 a ref) and ``arrived(index, result)`` is
    called with each result, both as results come back. A project error raised in a worker is raised
    here as itself (the first part's, once every part before it has finished); a Ray error is one
    EngineError line naming ``what``. Refs still pending then are cancelled (``force_cancel``: a task
    is killed mid-run; an actor's call cannot be).
    """
    ray = _import_ray()
    pending = {ref: index for index, ref in enumerate(refs)}
    results: list[Any] = [None] * len(refs)
    finished: set[int] = set()
    failed: dict[int, _Failed] = {}
    done, total = 0, sum(counts) if counts is not None else len(refs)
    if progress is not None:
        progress(0, total)
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                index = pending.pop(ref)
                result = ray.get(ref)
                finished.add(index)
                if isinstance(result, _Failed):
                    failed[index] = result
                    continue
                results[index] = result
                done += counts[index] if counts is not None else 1
                if arrived is not None:
                    arrived(index, result)
            _raise_first(failed, finished)
            if progress is not None:
                progress(done, total)
    except ray.exceptions.RayError as exc:
        raise _engine_error(exc, what, retries) from None
    finally:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=force_cancel)
    return results


class _ObjectActor:
    """One actor of an ``ActorPool``: ``setup()``'s object, made once, asked one item a call.

    A project error in the setup (a model folder that is not one) is kept and given back for each
    call, so the caller raises it as itself: raised from ``__init__``, Ray would only say it died.
    """

    def __init__(self, setup: Callable[[], object]) -> None:
        self._object, self._failed = _set_up(setup)

    def attribute(self, name: str) -> Any:
        return self._failed if self._failed is not None else getattr(self._object, name)

    def call(self, method: str, item: Any) -> Any:
        if self._failed is not None:
            return self._failed
        try:
            return getattr(self._object, method)(item)
        except RealrecallError as exc:
            return _Failed.of(exc)


class _ChatActor:
    """One actor of a chat pool: its own LLM client, asked one request per call (many at once)."""

    def __init__(self, make: Callable[[], ChatClient]) -> None:
        self._client = make()

    async def complete(self, request: ChatRequest) -> ChatResult | _Failed:
        try:
            return await self._client.complete(request)
        except RealrecallError as exc:
            return _Failed.of(exc)


class _ActorWorker:
    """A Ray Data actor: ``setup()`` once, then its function on each part it is given.

    A project error in the setup (a corpus a retriever refuses) is kept and given back for the parts,
    so the driver raises it as itself: raised from ``__init__``, Ray would only say the actor died.
    """

    def __init__(self, setup: Callable[[], Callable[[Any], Any]]) -> None:
        self._function, self._failed = _set_up(setup)

    def __call__(self, batch: Any) -> Any:
        return _apply(batch, self._function, self._failed)


def _set_up(setup: Callable[[], T]) -> tuple[T | None, _Failed | None]:
    """An actor's ``setup()``, or its project error kept (``_ObjectActor``, ``_ActorWorker``)."""
    try:
        return setup(), None
    except RealrecallError as exc:
        return None, _Failed.of(exc)


def _task_worker(batch: Any, function: Callable[[Any], Any]) -> Any:
    return _apply(batch, function, None)


def _apply(batch: Any, function: Callable[[Any], Any] | None, failed: _Failed | None) -> Any:
    import pyarrow as pa

    out = []
    for blob in batch.column("data").to_pylist():
        if failed is not None or function is None:
            out.append(_dumps(failed))
            continue
        try:
            result = function(pickle.loads(blob))
        except RealrecallError as exc:
            result = _Failed.of(exc)
        out.append(_dumps(result))
    return pa.table({"part": batch.column("part"), "data": pa.array(out, type=pa.large_binary())})


def _raise_first(failed: dict[int, _Failed], finished: set[int]) -> None:
    """The error of the first part that failed, once every part before it has finished."""
    if failed:
        first = min(failed)
        if all(index in finished for index in range(first)):
            raise failed[first].error()


def _run_task(function: Callable[[Any], Any], item: Any) -> Any:
    try:
        return function(item)
    except RealrecallError as exc:
        return _Failed.of(exc)


@dataclass(frozen=True)
class _Failed:
    """A project error raised in a worker, carried back to the driver as data.

    The error is rebuilt from its class and attributes: its own constructor may take other arguments
    than the message it keeps (``SettingError``), which is all plain pickling would give it back.
    """

    cls: type[RealrecallError]
    args: tuple[Any, ...]
    state: dict[str, Any]

    @classmethod
    def of(cls, error: RealrecallError) -> _Failed:
        return cls(type(error), error.args, dict(vars(error)))

    def error(self) -> RealrecallError:
        error = self.cls.__new__(self.cls)
        error.args = self.args
        vars(error).update(self.state)
        return error


def _dumps(value: Any) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _engine_error(error: Exception, what: str, retries: int) -> EngineError:
    """The one line for a job Ray could not finish: an actor kept dying, or a bug (shown as Ray gave it)."""
    ray = _import_ray()
    died = (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError, ray.exceptions.OutOfMemoryError)
    if isinstance(error, died):
        return EngineError(
            f"a Ray worker of the {what} died {retries + 1} times (restarted and retried {retries} times); "
            "the run stopped with nothing half-written: see the Ray logs (/tmp/ray/session_latest/logs), "
            "or raise --actor-retries"
        )
    raise error  # a bug in a worker: its traceback, as Ray wraps it


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise InputError(MISSING_EXTRA) from exc
    return ray


def _ray_data() -> Any:
    try:
        import ray.data
    except ImportError as exc:
        raise InputError(MISSING_EXTRA) from exc
    return ray.data


def _connect(ray: Any, settings: EngineSettings) -> None:
    """Join the cluster at ``address``, or start one here; one EngineError line when it cannot be."""
    address = settings.address
    show = settings.ray_logs
    options: dict[str, Any] = {"address": address, "log_to_driver": show, "configure_logging": show}
    if address is None:
        options.update(num_cpus=settings.num_cpus, include_dashboard=False)
    try:
        with contextlib.nullcontext() if show else _stderr_to_null():
            ray.init(**options)
    except (ConnectionError, SystemExit, TimeoutError) as exc:
        where = f"at {address}" if address is not None else "on this machine"
        raise EngineError(
            f"cannot start or reach the Ray cluster {where}: {exc}; check the address (or leave it unset "
            "to start a cluster here)"
        ) from None


def _check_reachable(address: str) -> None:
    """A TCP connection to the address's host and port, within a few seconds, or one EngineError line."""
    parts = urlsplit(address if "://" in address else f"ray://{address}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None:
        raise EngineError(
            f"the Ray address {address!r} names no host and port; give host:port, ray://host:port or auto"
        )
    try:
        with socket.create_connection((parts.hostname, port), timeout=_REACH_TIMEOUT):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise EngineError(
            f"cannot reach the Ray cluster at {address}: {reason}; check the address and that the "
            "cluster is running (ray status), or leave the address unset to start a cluster here"
        ) from None


@contextlib.contextmanager
def _stderr_to_null() -> Iterator[None]:
    """File descriptor 2 on /dev/null while a cluster starts: the processes Ray starts keep their own
    log files, and its core writes a line there as it reads its log level."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@contextlib.contextmanager
def _quiet(ray: Any, *, show: bool) -> Iterator[None]:
    """Ray's own log lines and Ray Data's progress bars hidden for the run (``ray_logs`` shows them):
    the stages report progress and errors themselves, and stdout carries the command's output."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Ray Data's about its own settings
        context = _ray_data().DataContext.get_current()
    saved_context = (context.enable_progress_bars, context.enable_operator_progress_bars)
    context.enable_progress_bars = context.enable_operator_progress_bars = show
    if show:
        try:
            yield
        finally:
            context.enable_progress_bars, context.enable_operator_progress_bars = saved_context
        return
    loggers = [logging.getLogger(name) for name in ("ray", "ray.data", "ray.serve", "ray.train")]
    levels = [logger.level for logger in loggers]
    backend = os.environ.get("RAY_BACKEND_LOG_LEVEL")
    worker: Any = getattr(getattr(ray, "_private", None), "worker", None)
    printing = getattr(worker, "_worker_logs_enabled", None)
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    # The C++ core's log level, read when this process joins the cluster (its error lines are notes
    # about Ray's own fault tolerance, not failures of the run).
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    if printing is not None:
        # The driver prints what the raylet publishes (a worker that died, a task retried) on
        # stdout; the switch Ray itself turns off while a breakpoint is open.
        worker._worker_logs_enabled = False
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
        if backend is None:
            os.environ.pop("RAY_BACKEND_LOG_LEVEL", None)
        if printing is not None:
            worker._worker_logs_enabled = printing
        context.enable_progress_bars, context.enable_operator_progress_bars = saved_context
