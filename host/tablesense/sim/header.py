"""The virtual table's seat header: its seat buttons and turn LEDs, on a socket.

On a real table the seat buttons and turn LEDs hang on the Pi's GPIO header,
not on the sensor boards. When the virtual boards run in one process
(``tablesense sim boards``) and the referee in another (``tablesense play``),
this is the wire between them: a Unix socket carrying pin levels as JSON
lines, the way the header's wires carry them.

- the referee's side (``play --seat-header PATH``, a GPIO backend) sends
  ``{"out": PIN, "level": true}`` whenever it drives an output (a turn LED);
- this side sends ``{"in": PIN, "level": false}`` when a button closes (the
  buttons are wired to ground with pull-ups: pressed reads low) and
  ``{"in": PIN, "level": true}`` when it opens.

:class:`SeatHeaderServer` is what the table top presses and reads (it has the
``level``/``press``/``release_button`` of a simulated header).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from pathlib import Path


class HeaderNotConnected(RuntimeError):
    """No referee is connected to the seat header (start ``tablesense play``)."""


class SeatHeaderServer:
    """Listens on ``path``; any number of referee connections (usually one)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(self.path))
        self._sock.listen(4)
        self._lock = threading.Lock()
        self._clients: list[socket.socket] = []
        self._outputs: dict[int, bool] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="seat-header", daemon=True)
        self._thread.start()

    @property
    def connected(self) -> bool:
        with self._lock:
            return bool(self._clients)

    # -- what the table top uses ---------------------------------------------------
    def level(self, pin: int) -> bool:
        """An output's level as the referee last drove it (False when unknown)."""
        with self._lock:
            return self._outputs.get(pin, False)

    def press(self, pin: int) -> None:
        self._send({"in": pin, "level": False})

    def release_button(self, pin: int) -> None:
        self._send({"in": pin, "level": True})

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._sock.close()
        with self._lock:
            clients, self._clients = self._clients, []
        for c in clients:
            with contextlib.suppress(OSError):
                c.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    # -- internals -------------------------------------------------------------------
    def _send(self, msg: dict[str, object]) -> None:
        data = (json.dumps(msg) + "\n").encode()
        with self._lock:
            clients = list(self._clients)
        if not clients:
            raise HeaderNotConnected(
                "no referee is connected to the seat buttons: start `tablesense play` "
                "with the --seat-header printed by `sim boards`"
            )
        for c in clients:
            try:
                c.sendall(data)
            except OSError:
                self._drop(c)

    def _drop(self, c: socket.socket) -> None:
        with self._lock:
            if c in self._clients:
                self._clients.remove(c)
            if not self._clients:
                self._outputs.clear()  # the referee left: its LEDs went dark
        with contextlib.suppress(OSError):
            c.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                c, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                self._clients.append(c)
            threading.Thread(target=self._read, args=(c,), daemon=True).start()

    def _read(self, c: socket.socket) -> None:
        buf = b""
        while not self._stop.is_set():
            try:
                chunk = c.recv(4096)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                    pin, level = int(msg["out"]), bool(msg["level"])
                except (ValueError, KeyError, TypeError):
                    continue  # not ours: ignore the line, keep the wire
                with self._lock:
                    self._outputs[pin] = level
        self._drop(c)


__all__ = ["HeaderNotConnected", "SeatHeaderServer"]
