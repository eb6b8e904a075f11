"""A server on 127.0.0.1 that accepts connections and never answers: how a hung store or endpoint looks.

with SilentServer() as server:
    ...  # talk to 127.0.0.1:server.port; every request waits for ever unless the client times out
"""

from __future__ import annotations

import contextlib
import socket
import threading


class SilentServer:
    """Accepts every connection and reads nothing, writes nothing, closes nothing until stopped."""

    def __init__(self) -> None:
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port: int = self._listener.getsockname()[1]
        self._held: list[socket.socket] = []
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="silent server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:  # the listener was closed: stopping
                return
            self._held.append(connection)

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopped.set()
        # Wakes the thread blocked in accept() (closing alone does not, on Linux: the join below waited
        # its whole 5 s at every use).
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        for connection in self._held:
            connection.close()
        self._thread.join(timeout=5)
