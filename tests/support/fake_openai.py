"""A real HTTP server on 127.0.0.1 that speaks enough of the OpenAI API for every test.

    with FakeOpenAI() as server:
        server.inject_fault("429", retry_after=1)
        client = OpenAIChatClient(LLMConfig(base_url=server.base_url))
        ...
        assert server.count("chat") == 2

Endpoints (all under ``/v1``) and the names ``count``, ``requests`` and ``inject_fault`` use for them:

    chat          POST /chat/completions
    embeddings    POST /embeddings
    files         POST /files               (multipart upload)
    file_content  GET  /files/{id}/content
    batches       POST /batches
    batch_get     GET  /batches/{id}        (validating -> in_progress -> completed, one step per poll)
    models        GET  /models

Faults are queued and served to the next matching requests, first in first out. A kind of three digits
answers that HTTP status with an OpenAI-style error body; the other kinds are described at ``FAULT_KINDS``.

Also runnable as a process, for kill -9 tests and benchmarks::

    python tests/support/fake_openai.py --port 0 --delay 0.2 --port-file /tmp/port
"""

from __future__ import annotations

import argparse
import base64
import collections
import email.parser
import email.policy
import itertools
import json
import re
import sys
import threading
import time
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

import numpy as np

__all__ = ["EMBEDDING_DIMS", "FAULT_KINDS", "FakeOpenAI", "RecordedRequest", "fake_embedding"]

EMBEDDING_DIMS = 256

FAULT_KINDS = {
    "timeout": "hold the connection `timeout_sleep` seconds, then close it without answering",
    "disconnect": "close the connection without answering (a connection error for the client)",
    "malformed": "200 with a body that is not valid JSON",
    "empty": "200 with an empty `choices` list (chat only)",
    "truncated": "200, finish_reason 'length', content cut in the middle of the JSON (chat only)",
    "refusal": "200 with `message.refusal` set and no content (chat only)",
    "reject_json_schema": "400 naming response_format json_schema, only for requests that use json_schema",
}

ENDPOINTS = ("chat", "embeddings", "files", "file_content", "batches", "batch_get", "models")

# A chat answer: the content, or a dict with any of content, refusal, finish_reason, usage, model (the
# model name the answer reports), or error and status (an error reply instead of an answer).
ChatAnswer = str | dict[str, Any]
ChatHandler = Callable[[dict[str, Any]], ChatAnswer]

_HIDDEN_HEADERS = {"authorization", "api-key", "x-api-key"}


class RecordedRequest(NamedTuple):
    """One request as the server saw it; the credentials headers are left out on purpose."""

    endpoint: str
    body: dict[str, Any]
    headers: dict[str, str]


class _Fault(NamedTuple):
    kind: str
    endpoint: str
    retry_after: float | str | None


def fake_embedding(text: str, dims: int = EMBEDDING_DIMS) -> np.ndarray:
    """A deterministic, meaningful vector: hashed lower-cased words and character trigrams, L2-normalised.

    Texts that share words share coordinates, so a similar text scores a higher cosine than an
    unrelated one; each feature gets a hashed sign so that unrelated texts sit near cosine 0.
    """
    vector = np.zeros(dims, dtype=np.float64)
    words = re.findall(r"\w+", text.lower())
    features: list[tuple[str, float]] = [(f"w:{word}", 1.0) for word in words]
    for word in words:
        padded = f"#{word}#"
        features.extend((f"t:{padded[i : i + 3]}", 0.25) for i in range(len(padded) - 2))
    for feature, weight in features:
        digest = zlib.crc32(feature.encode("utf-8"))
        sign = 1.0 if (digest >> 16) & 1 else -1.0
        vector[digest % dims] += sign * weight
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:
        # An empty text still gets a unit vector, so a cosine against it is defined.
        vector[0] = 1.0
        norm = 1.0
    return (vector / norm).astype(np.float32)


def approx_tokens(text: str) -> int:
    """About four characters a token, as OpenAI's rule of thumb; at least 1 for a non-empty text."""
    return max(1, len(text) // 4) if text else 0


# Everyday words the default answers are made of: six per answer, picked by the request's seed, so
# that no two answers nearly repeat each other (generate would regenerate a near-duplicate).
_WORDS = (
    "printer", "wifi", "refund", "login", "backup", "folder", "upload", "calendar", "storage", "license",
    "cable", "battery", "invoice", "screen", "laptop", "phone", "email", "meeting", "password", "account",
    "keyboard", "mouse", "desk", "badge", "parking", "lunch", "travel", "expense", "holiday", "contract",
    "salary", "ticket",
)  # fmt: skip


def _seed_of(body: dict[str, Any]) -> int:
    seed = body.get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool):
        return seed
    return zlib.crc32(json.dumps(body.get("messages", []), sort_keys=True).encode("utf-8"))


def _sentence(seed: int) -> str:
    w = [_WORDS[(seed >> shift) % len(_WORDS)] for shift in (0, 5, 10, 15, 20, 25)]
    return f"why does my {w[0]} {w[1]} {w[2]} keep {w[3]} the {w[4]} {w[5]}? ({seed})"


_GERMAN = ["Drucker", "Rechnung", "Passwort", "Urlaub", "Laptop", "Ordner", "Vertrag", "Ausweis"]
_ASKS_FOR_GERMAN = re.compile(r"(?:question|query): German|in German")


def _german_sentence(seed: int) -> str:
    w = [_GERMAN[(seed >> shift) % len(_GERMAN)] for shift in (0, 3, 6)]
    return f"warum geht mein {w[0]} nicht mehr, seit ich den {w[1]} und das {w[2]} geändert habe? ({seed})"


def _asks_for_german(body: dict[str, Any]) -> bool:
    messages = body.get("messages", [])
    return any(isinstance(m, dict) and _ASKS_FOR_GERMAN.search(str(m.get("content"))) for m in messages)


def requested_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON Schema a chat request asks its answer to match: Structured Outputs' ``json_schema``,
    or (json_object mode, or no response_format) the schema a message spells out, as realrecall's
    client writes it after "JSON Schema:"."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        schema = response_format.get("json_schema", {}).get("schema")
        return schema if isinstance(schema, dict) else None
    for message in reversed(body.get("messages", [])):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str) and "JSON Schema:" in content:
            start = content.find("{", content.index("JSON Schema:"))
            try:
                schema, _ = json.JSONDecoder().raw_decode(content[start:])
            except ValueError:
                return None
            return schema if isinstance(schema, dict) else None
    return None


def _fill(schema: Any, seed: int, name: str = "") -> Any:
    """A value that matches ``schema``: every property of an object, one item in an array, a true
    boolean, a number, and for a string a question (or a sentence) made from the seed."""
    if not isinstance(schema, dict):
        return _sentence(seed)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {key: _fill(sub, seed, key) for key, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [_fill(schema.get("items", {}), seed, name)]
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return 1
    if schema.get("enum"):
        return schema["enum"][0]
    return _sentence(seed) if "question" in name or not name else f"the {name} of answer {seed}"


def default_chat_handler(body: dict[str, Any]) -> ChatAnswer:
    """An answer that matches the schema the request asks for (generate's question, the judge's
    verdict, ...), varying with the request's seed; ``{"questions": [...]}`` when it names none."""
    seed = _seed_of(body)
    schema = requested_schema(body)
    if schema is None:
        return json.dumps({"questions": [_sentence(seed)]})
    answer = _fill(schema, seed)
    if isinstance(answer, dict) and "answer" in answer:
        # Situation-first generation checks that the stated answer quotes the passage it was shown
        # (and, over two passages, that answer_b quotes the second).
        passages = [*_passages_of(body), "", ""]
        answer["answer"] = " ".join(passages[0].split()[:12]) or answer["answer"]
        if "answer_b" in answer:
            answer["answer_b"] = " ".join(passages[1].split()[:12]) or answer["answer_b"]
    if isinstance(answer, dict) and isinstance(answer.get("question"), str) and _asks_for_german(body):
        # generate reads every answer's language: a question asked for in German comes in German.
        answer["question"] = _german_sentence(seed)
    return json.dumps(answer)


def _passages_of(body: dict[str, Any]) -> list[str]:
    """The texts a request shows between <passage> tags, in order."""
    found: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            found += re.findall(r"<passage>\n(.*?)\n</passage>", content, re.DOTALL)
    return found


def answer_together(parties: int, then: ChatHandler = default_chat_handler) -> ChatHandler:
    """A chat handler that answers only once ``parties`` requests are being served at the same time.

    Proves concurrency without timing anything: served one after another, the first request waits for
    the others until the barrier gives up (30 s, on failure only) and is answered with a 500.
    """
    barrier = threading.Barrier(parties, timeout=30)

    def handler(body: dict[str, Any]) -> ChatAnswer:
        barrier.wait()
        return then(body)

    return handler


class FakeOpenAI:
    """An OpenAI-compatible HTTP server in a daemon thread, with scripted answers and fault injection."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, delay: float = 0.0) -> None:
        self.host = host
        self.port = port
        self.delay = delay
        self.timeout_sleep = 5.0
        self.chat_handler: ChatHandler = default_chat_handler
        self.supports_json_schema = True
        self.supports_json_object = True
        # Parameters refused the way OpenAI's reasoning models refuse them (a 400 naming the parameter),
        # e.g. {"max_tokens", "temperature"}.
        self.unsupported_parameters: frozenset[str] = frozenset()
        # Like the real API, refuse json_schema requests whose schema breaks strict mode's rules.
        self.validate_strict_schemas = True
        self.expected_api_key: str | None = None
        self.reverse_embedding_order = False
        self.supports_base64_embeddings = True
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._faults: list[_Fault] = []
        self._script: collections.deque[ChatAnswer] = collections.deque()
        self._files: dict[str, dict[str, Any]] = {}
        self._batches: dict[str, dict[str, Any]] = {}
        self._batch_lock = threading.Lock()  # apart from _lock: running a batch calls code that takes _lock
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        server = self

        class Handler(_Handler):
            fake = server

        httpd = _Server((self.host, self.port), Handler)
        self._httpd = httpd
        self.port = httpd.server_address[1]
        # A short poll interval makes stop() quick: each test starts and stops a server.
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # -- scripting -------------------------------------------------------------------------------------

    def script(self, answers: list[ChatAnswer]) -> None:
        """Queue chat answers, served in order before ``chat_handler`` is asked again."""
        with self._lock:
            self._script.extend(answers)

    def inject_fault(
        self,
        kind: str,
        times: int = 1,
        endpoint: str = "chat",
        retry_after: float | str | None = None,
    ) -> None:
        """Make the next ``times`` matching requests to ``endpoint`` fail with ``kind``."""
        if kind not in FAULT_KINDS and not re.fullmatch(r"[1-5]\d\d", kind):
            raise ValueError(f"unknown fault kind {kind!r}; choose from {sorted(FAULT_KINDS)} or a status")
        if endpoint not in ENDPOINTS:
            raise ValueError(f"unknown endpoint {endpoint!r}; choose from {list(ENDPOINTS)}")
        with self._lock:
            self._faults.extend(_Fault(kind, endpoint, retry_after) for _ in range(times))

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def count(self, endpoint: str) -> int:
        with self._lock:
            return sum(1 for request in self._requests if request.endpoint == endpoint)

    def bodies(self, endpoint: str) -> list[dict[str, Any]]:
        with self._lock:
            return [request.body for request in self._requests if request.endpoint == endpoint]

    # -- used by the handler ---------------------------------------------------------------------------

    def _record(self, endpoint: str, body: dict[str, Any], headers: dict[str, str]) -> None:
        with self._lock:
            self._requests.append(RecordedRequest(endpoint, body, headers))

    def _take_fault(self, endpoint: str, body: dict[str, Any]) -> _Fault | None:
        with self._lock:
            for index, fault in enumerate(self._faults):
                if fault.endpoint != endpoint:
                    continue
                if fault.kind == "reject_json_schema" and _response_format_type(body) != "json_schema":
                    continue
                del self._faults[index]
                return fault
        return None

    def _next_answer(self, body: dict[str, Any]) -> ChatAnswer:
        with self._lock:
            if self._script:
                return self._script.popleft()
        return self.chat_handler(body)

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    def sleep(self, seconds: float) -> None:
        """Sleep, but wake at once when the server stops, so no test waits on a held connection."""
        self._stopping.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Benchmarks open dozens of connections at once; the default backlog of 5 would refuse some.
    request_queue_size = 256


class _Reply(NamedTuple):
    status: int
    body: bytes
    headers: dict[str, str]


def _json_reply(status: int, payload: Any, headers: dict[str, str] | None = None) -> _Reply:
    return _Reply(
        status, json.dumps(payload).encode("utf-8"), {"Content-Type": "application/json", **(headers or {})}
    )


def _error_reply(
    status: int,
    message: str,
    *,
    error_type: str = "invalid_request_error",
    code: str | None = None,
    param: str | None = None,
    headers: dict[str, str] | None = None,
) -> _Reply:
    error = {"message": message, "type": error_type, "param": param, "code": code}
    return _json_reply(status, {"error": error}, headers)


def _response_format_type(body: dict[str, Any]) -> str | None:
    response_format = body.get("response_format")
    if isinstance(response_format, dict):
        value = response_format.get("type")
        return value if isinstance(value, str) else None
    return None


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a test server that writes to stderr on every request drowns the test output

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        fake = self.fake
        raw = self._read_body()
        path = self.path.split("?", 1)[0].rstrip("/")
        route = _route(method, path)
        if route is None:
            self._send(_error_reply(404, f"Unknown request URL: {method} {path}", code="unknown_url"))
            return
        endpoint, arg = route
        try:
            body = self._parse_body(endpoint, raw, arg)
        except ValueError as exc:
            fake._record(endpoint, {"_unparsed": raw[:200].decode("utf-8", "replace")}, self._headers())
            self._send(_error_reply(400, f"We could not parse the JSON body of your request: {exc}"))
            return
        fake._record(endpoint, body, self._headers())
        if fake.delay > 0:
            fake.sleep(fake.delay)
        auth_error = self._check_auth()
        if auth_error is not None:
            self._send(auth_error)
            return
        fault = fake._take_fault(endpoint, body)
        if fault is not None and self._serve_fault(fault, endpoint, body):
            return
        try:
            reply = self._dispatch(endpoint, arg, body, fault)
        except Exception as exc:  # a broken chat_handler in a test should show up as a clear 500
            reply = _error_reply(500, f"fake server handler failed: {exc!r}", error_type="server_error")
        self._send(reply)

    # -- plumbing --------------------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items() if k.lower() not in _HIDDEN_HEADERS}

    def _parse_body(self, endpoint: str, raw: bytes, arg: str | None) -> dict[str, Any]:
        if endpoint == "files":
            return self._parse_upload(raw)
        if endpoint in ("file_content", "batch_get"):
            return {"id": arg}
        if not raw:
            return {}
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(exc.msg) from exc
        if not isinstance(value, dict):
            raise ValueError("expected a JSON object")
        return value

    def _parse_upload(self, raw: bytes) -> dict[str, Any]:
        content_type = self.headers.get("Content-Type", "")
        if "multipart/form-data" not in content_type:
            raise ValueError("file uploads must be multipart/form-data")
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw
        )
        fields: dict[str, Any] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True) or b""
            if name == "file":
                fields["filename"] = part.get_filename() or "upload"
                fields["content"] = payload
            elif isinstance(name, str):
                fields[name] = payload.decode("utf-8")
        if "content" not in fields:
            raise ValueError("missing the 'file' part")
        return fields

    def _check_auth(self) -> _Reply | None:
        expected = self.fake.expected_api_key
        if expected is None:
            return None
        given = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if given == expected:
            return None
        # Like the real service, echo the key that was sent: the client must keep it out of its errors.
        return _error_reply(
            401,
            f"Incorrect API key provided: {given}.",
            code="invalid_api_key",
            error_type="invalid_request_error",
        )

    def _send(self, reply: _Reply) -> None:
        try:
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (its timeout); nothing to answer

    # -- faults ----------------------------------------------------------------------------------------

    def _serve_fault(self, fault: _Fault, endpoint: str, body: dict[str, Any]) -> bool:
        """Serve a fault that replaces the answer; return False for faults that only shape a chat answer."""
        kind = fault.kind
        if kind in ("truncated", "refusal"):
            return False
        if kind == "timeout":
            self.fake.sleep(self.fake.timeout_sleep)
            self.close_connection = True
            return True
        if kind == "disconnect":
            self.close_connection = True
            return True
        if kind == "malformed":
            broken = b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"index": 0, "mess'
            self._send(_Reply(200, broken, {"Content-Type": "application/json"}))
            return True
        if kind == "empty":
            self._send(_json_reply(200, _chat_envelope(body, [], None)))
            return True
        if kind == "reject_json_schema":
            self._send(_reject_response_format("json_schema"))
            return True
        status = int(kind)
        headers = {} if fault.retry_after is None else {"Retry-After": str(fault.retry_after)}
        if status == 429:
            message = "Rate limit reached for requests. Please try again later."
            self._send(
                _error_reply(429, message, error_type="requests", code="rate_limit_exceeded", headers=headers)
            )
        elif status >= 500:
            message = "The server had an error while processing your request. Sorry about that!"
            self._send(_error_reply(status, message, error_type="server_error", headers=headers))
        else:
            self._send(_error_reply(status, f"Injected client error {status}.", headers=headers))
        return True

    # -- endpoints -------------------------------------------------------------------------------------

    def _dispatch(self, endpoint: str, arg: str | None, body: dict[str, Any], fault: _Fault | None) -> _Reply:
        fake = self.fake
        if endpoint == "chat":
            return _chat_reply(fake, body, None if fault is None else fault.kind)
        if endpoint == "embeddings":
            return _embeddings_reply(fake, body)
        if endpoint == "models":
            models = [{"id": name, "object": "model", "created": 0, "owned_by": "fake"} for name in _MODELS]
            return _json_reply(200, {"object": "list", "data": models})
        if endpoint == "files":
            return _upload_reply(fake, body)
        if endpoint == "file_content":
            with fake._lock:
                stored = fake._files.get(arg or "")
            if stored is None:
                return _error_reply(404, f"No such File object: {arg}", param="id")
            return _Reply(200, stored["content"], {"Content-Type": "application/octet-stream"})
        if endpoint == "batches":
            return _create_batch(fake, body)
        if endpoint == "batch_get":
            return _advance_batch(fake, arg or "")
        raise AssertionError(endpoint)


_MODELS = ("gpt-4o-mini", "text-embedding-3-small")


def _route(method: str, path: str) -> tuple[str, str | None] | None:
    fixed = {
        ("POST", "/v1/chat/completions"): "chat",
        ("POST", "/v1/embeddings"): "embeddings",
        ("POST", "/v1/files"): "files",
        ("POST", "/v1/batches"): "batches",
        ("GET", "/v1/models"): "models",
    }
    if (method, path) in fixed:
        return fixed[(method, path)], None
    if method == "GET" and (match := re.fullmatch(r"/v1/files/([^/]+)/content", path)):
        return "file_content", match.group(1)
    if method == "GET" and (match := re.fullmatch(r"/v1/batches/([^/]+)", path)):
        return "batch_get", match.group(1)
    return None


def _reject_response_format(kind: str) -> _Reply:
    return _error_reply(
        400,
        f"Invalid parameter: 'response_format' of type '{kind}' is not supported with this model.",
        param="response_format",
    )


def _chat_envelope(
    body: dict[str, Any],
    choices: list[dict[str, Any]],
    usage: dict[str, int] | None,
    model: str | None = None,
) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model or body.get("model", "fake-model"),
        "system_fingerprint": "fp_fake",
        "choices": choices,
        "usage": usage,
    }


def _error_body(message: str, *, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}}


def _strict_schema_problem(json_schema: dict[str, Any]) -> str | None:
    """What the real API would say about a schema that breaks Structured Outputs' strict rules, or None.

    Checks the two rules callers trip on: every object lists all its properties in ``required`` and
    sets ``additionalProperties: false``; and the root is an object.
    """
    name = json_schema.get("name", "")
    schema = json_schema.get("schema")
    prefix = f"Invalid schema for response_format '{name}'"
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return f"{prefix}: schema must be a JSON Schema of 'type: \"object\"'."
    stack: list[tuple[str, Any]] = [("()", schema)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, list):
            stack.extend((where, item) for item in node)
            continue
        if not isinstance(node, dict):
            continue
        if node.get("type") == "object" or "properties" in node:
            properties = node.get("properties", {})
            context = f"{prefix}: In context={where}"
            if node.get("additionalProperties") is not False:
                return f"{context}, 'additionalProperties' is required to be supplied and to be false."
            missing = [key for key in properties if key not in node.get("required", [])]
            if missing:
                return (
                    f"{context}, 'required' is required to include every key in properties: '{missing[0]}'."
                )
            stack.extend((f"{where}, '{key}'", value) for key, value in properties.items())
        for key in ("items", "anyOf"):
            if key in node:
                stack.append((where, node[key]))
        for key in ("$defs", "definitions"):
            stack.extend((f"{key}, '{sub}'", value) for sub, value in dict(node.get(key, {})).items())
    return None


# The real API's words for a parameter a reasoning model does not take.
_UNSUPPORTED = {
    "": "Unsupported parameter: '{0}' is not supported with this model.",
    "max_tokens": "Unsupported parameter: '{0}' is not supported with this model. "
    "Use 'max_completion_tokens' instead.",
    "temperature": "Unsupported value: '{0}' does not support 0.7 with this model. "
    "Only the default (1) value is supported.",
}


def _chat_completion(fake: FakeOpenAI, body: dict[str, Any], shape: str | None) -> tuple[int, dict[str, Any]]:
    """The status and JSON body of one chat answer; shared by the live endpoint and batch output files."""
    format_type = _response_format_type(body)
    if format_type == "json_schema" and not fake.supports_json_schema:
        return 400, json.loads(_reject_response_format("json_schema").body)
    if format_type == "json_object" and not fake.supports_json_object:
        return 400, json.loads(_reject_response_format("json_object").body)
    if format_type == "json_schema" and fake.validate_strict_schemas:
        problem = _strict_schema_problem(body["response_format"].get("json_schema", {}))
        if problem is not None:
            return 400, _error_body(problem, param="response_format")
    refused = next((name for name in sorted(fake.unsupported_parameters) if name in body), None)
    if refused is not None:
        return 400, _error_body(_UNSUPPORTED.get(refused, _UNSUPPORTED[""]).format(refused), param=refused)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not body.get("model"):
        return 400, _error_body("you must provide a model parameter and a non-empty messages list")

    answer = fake._next_answer(body)
    spec: dict[str, Any] = {"content": answer} if isinstance(answer, str) else dict(answer)
    if "error" in spec:
        return int(spec.get("status", 400)), _error_body(str(spec["error"]))
    content: str | None = spec.get("content")
    refusal: str | None = spec.get("refusal")
    finish_reason: str = spec.get("finish_reason", "stop")
    if shape == "truncated":
        text = content or ""
        content = text[: max(1, len(text) // 2)]
        finish_reason = "length"
    elif shape == "refusal":
        content, refusal = None, "I'm sorry, but I can't help with that request."
    prompt_text = "".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
    usage = spec.get("usage") or {
        "prompt_tokens": approx_tokens(prompt_text),
        "completion_tokens": approx_tokens(content or refusal or ""),
    }
    usage = {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}
    message = {"role": "assistant", "content": content, "refusal": refusal}
    choice = {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
    return 200, _chat_envelope(body, [choice], usage, spec.get("model"))


def _chat_reply(fake: FakeOpenAI, body: dict[str, Any], shape: str | None) -> _Reply:
    status, payload = _chat_completion(fake, body, shape)
    return _json_reply(status, payload)


def _embeddings_reply(fake: FakeOpenAI, body: dict[str, Any]) -> _Reply:
    raw_input = body.get("input")
    texts = [raw_input] if isinstance(raw_input, str) else raw_input
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        return _error_reply(400, "'input' must be a string or a non-empty array of strings", param="input")
    if any(t == "" for t in texts):
        return _error_reply(400, "'$.input' is invalid: an input cannot be an empty string", param="input")
    encoding = body.get("encoding_format", "float")
    if encoding == "base64" and not fake.supports_base64_embeddings:
        return _error_reply(
            400, "Invalid value for 'encoding_format': only 'float' is supported.", param="encoding_format"
        )
    data = []
    for index, text in enumerate(texts):
        vector = fake_embedding(text)
        if body.get("dimensions"):
            vector = vector[: int(body["dimensions"])]
        encoded: Any = (
            base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
            if encoding == "base64"
            else [float(x) for x in vector]
        )
        data.append({"object": "embedding", "index": index, "embedding": encoded})
    if fake.reverse_embedding_order:
        data.reverse()  # allowed by the API: each item carries its index
    tokens = sum(approx_tokens(t) for t in texts)
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return _json_reply(200, {"object": "list", "data": data, "model": body.get("model"), "usage": usage})


def _store_file(fake: FakeOpenAI, content: bytes, filename: str, purpose: str) -> dict[str, Any]:
    file_id = fake._new_id("file")
    record = {
        "id": file_id,
        "object": "file",
        "bytes": len(content),
        "created_at": int(time.time()),
        "filename": filename,
        "purpose": purpose,
        "status": "processed",
    }
    with fake._lock:
        fake._files[file_id] = {**record, "content": content}
    return record


def _upload_reply(fake: FakeOpenAI, body: dict[str, Any]) -> _Reply:
    purpose = body.get("purpose")
    if not purpose:
        return _error_reply(400, "Missing required parameter: 'purpose'.", param="purpose")
    record = _store_file(fake, body["content"], body.get("filename", "upload"), purpose)
    return _json_reply(200, record)


def _create_batch(fake: FakeOpenAI, body: dict[str, Any]) -> _Reply:
    input_file_id = body.get("input_file_id", "")
    with fake._lock:
        stored = fake._files.get(input_file_id)
    if stored is None:
        return _error_reply(400, f"Invalid 'input_file_id': '{input_file_id}'.", param="input_file_id")
    if body.get("endpoint") != "/v1/chat/completions":
        return _error_reply(400, "The fake serves batches for /v1/chat/completions only.", param="endpoint")
    if body.get("completion_window") != "24h":
        return _error_reply(
            400, "Invalid 'completion_window': only '24h' is supported.", param="completion_window"
        )
    lines = [line for line in stored["content"].decode("utf-8").splitlines() if line.strip()]
    batch = {
        "id": fake._new_id("batch"),
        "object": "batch",
        "endpoint": body["endpoint"],
        "errors": None,
        "input_file_id": input_file_id,
        "completion_window": "24h",
        "status": "validating",
        "output_file_id": None,
        "error_file_id": None,
        "created_at": int(time.time()),
        "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
        "metadata": body.get("metadata"),
    }
    with fake._lock:
        fake._batches[batch["id"]] = batch
    return _json_reply(200, batch)


def _advance_batch(fake: FakeOpenAI, batch_id: str) -> _Reply:
    with fake._lock:
        batch = fake._batches.get(batch_id)
    if batch is None:
        return _error_reply(404, f"No batch found with id '{batch_id}'.", param="batch_id")
    with fake._batch_lock:  # two concurrent polls must not both run the batch
        if batch["status"] == "validating":
            batch["status"] = "in_progress"
        elif batch["status"] == "in_progress":
            _run_batch(fake, batch)
        return _json_reply(200, batch)


def _run_batch(fake: FakeOpenAI, batch: dict[str, Any]) -> None:
    """Answer every line with the chat handler; faults queued for endpoint 'chat' fail single items."""
    with fake._lock:
        content = fake._files[batch["input_file_id"]]["content"]
    outputs: list[str] = []
    errors: list[str] = []
    for line in content.decode("utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        body = item.get("body", {})
        fault = fake._take_fault("chat", body)
        shape = None if fault is None else fault.kind
        payload: dict[str, Any]
        if shape == "reject_json_schema":
            status, payload = 400, json.loads(_reject_response_format("json_schema").body)
        elif shape is not None and shape not in ("truncated", "refusal"):
            status = int(shape) if shape.isdigit() else 500
            payload = {"error": {"message": f"injected {shape}", "type": "server_error"}}
        else:
            status, payload = _chat_completion(fake, body, shape)
        record = {
            "id": fake._new_id("batch_req"),
            "custom_id": item.get("custom_id"),
            "response": {"status_code": status, "request_id": fake._new_id("req"), "body": payload},
            "error": None,
        }
        (outputs if status == 200 else errors).append(json.dumps(record))
    batch["request_counts"] = {
        "total": len(outputs) + len(errors),
        "completed": len(outputs),
        "failed": len(errors),
    }
    if outputs:
        data = ("\n".join(outputs) + "\n").encode("utf-8")
        batch["output_file_id"] = _store_file(fake, data, "batch_output.jsonl", "batch_output")["id"]
    if errors:
        data = ("\n".join(errors) + "\n").encode("utf-8")
        batch["error_file_id"] = _store_file(fake, data, "batch_errors.jsonl", "batch_output")["id"]
    batch["status"] = "completed"
    batch["completed_at"] = int(time.time())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve a fake OpenAI-compatible API on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait before each answer")
    parser.add_argument("--port-file", help="also write the port here (atomically) once serving")
    args = parser.parse_args(argv)
    server = FakeOpenAI(port=args.port, delay=args.delay).start()
    print(server.port, flush=True)
    if args.port_file:
        from pathlib import Path

        target = Path(args.port_file)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(f"{server.port}\n", encoding="utf-8")
        tmp.replace(target)
    try:
        threading.Event().wait()  # serve until killed
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
