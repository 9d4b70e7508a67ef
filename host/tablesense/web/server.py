"""Serve the display app with uvicorn in a background thread.

``tablesense demo`` and ``tablesense play`` run the referee in the main thread
and the display beside it: :func:`serve_display` starts uvicorn on its own
thread and event loop, waits until the socket listens (so the printed address
works at once) and returns a :class:`DisplayServer` whose ``stop()`` ends the
live streams and joins the thread. Port 0 picks a free port.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import threading
from typing import Any

import uvicorn
from fastapi import FastAPI

from tablesense.outputs.events import EventBus

__all__ = [
    "DisplayServer", "PortInUseError", "WebServerError", "check_port", "free_port_near", "lan_address",
    "serve_display", "serve_in_thread",
]


class WebServerError(RuntimeError):
    """The web server could not start (port in use, bad host, ...)."""


class PortInUseError(WebServerError):
    """Another program listens on the port: the command says which option
    chooses another one (never uvicorn's raw ``[Errno 98]``, never a page
    served elsewhere without a word)."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(f"could not serve the display on {host}:{port}: the port is in use by another program")
        self.host = host
        self.port = port


def _listen(host: str, port: int) -> socket.socket:
    """The page's listening socket, bound here rather than by uvicorn, which
    logs a bind error itself and exits: a busy port is
    :class:`PortInUseError`, any other failure :class:`WebServerError`."""
    try:
        family, kind, proto, _canon, address = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise WebServerError(f"could not serve the display on {host}:{port}: {exc.strerror}") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: no wait after a restart
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUseError(host, port) from None
        raise WebServerError(f"could not serve the display on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def check_port(host: str, port: int) -> None:
    """Raise :class:`PortInUseError` (or :class:`WebServerError`) now if a
    page could not listen on ``host:port``: a command that starts other
    things first (``sim boards`` starts its boards) asks before it does."""
    if port:
        _listen(host, port).close()


def free_port_near(port: int, host: str) -> int:
    """The first port after ``port`` that nobody listens on at this moment,
    for a message that names one (0, any free port, when the next twenty
    are all taken)."""
    for candidate in range(port + 1, min(port + 21, 65536)):
        try:
            check_port(host, candidate)
        except WebServerError:
            continue
        return candidate
    return 0


def lan_address() -> str:
    """The address other devices on the club's network reach this machine at
    (a page listening on every interface, ``0.0.0.0``, is not opened at
    ``http://0.0.0.0``). The routing table answers without sending anything;
    with no network at all, the host name, then the loopback address."""
    for probe in ("192.0.2.1", "10.255.255.255"):
        with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((probe, 9))  # UDP: no packet leaves, the route is chosen
            addr = str(s.getsockname()[0])
            if addr and not addr.startswith(("0.", "127.")):
                return addr
    with contextlib.suppress(OSError):
        name = socket.gethostname()
        addr = socket.gethostbyname(name)
        if addr and not addr.startswith("127."):
            return addr
    return "127.0.0.1"


class DisplayServer:
    """A running uvicorn server on a background thread.

    ``url`` is the address to open (``http://host:port/``). ``stop()`` is
    idempotent; the object is a context manager.
    """

    def __init__(self, app: FastAPI, server: uvicorn.Server, thread: threading.Thread) -> None:
        self.app = app
        self._server = server
        self._thread = thread
        self._stopped = False
        sockets = [s for srv in getattr(server, "servers", []) for s in srv.sockets]
        if not sockets:
            raise WebServerError("the web server started without a listening socket")
        host, port = sockets[0].getsockname()[:2]
        self.host: str = server.config.host
        self.port: int = int(port)
        shown = self.host if self.host not in ("0.0.0.0", "::", "") else lan_address()
        if ":" in shown:
            shown = f"[{shown}]"
        self.url = f"http://{shown}:{self.port}/"

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        """End live clients, stop uvicorn and join its thread (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        hub = getattr(self.app.state, "hub", None)
        if hub is not None:
            hub.close_clients()
        self._server.should_exit = True
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout)

    def __enter__(self) -> DisplayServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<DisplayServer {self.url} running={self.running}>"


def serve_in_thread(
    app: FastAPI,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    start_timeout: float = 10.0,
    log_level: str = "warning",
) -> DisplayServer:
    """Start ``app`` with uvicorn on a daemon thread; returns once it listens.

    Raises :class:`WebServerError` with the reason when it cannot listen
    (:class:`PortInUseError` when another program holds the port).
    """
    sock = _listen(host, port)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        ws_ping_interval=20.0,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # noqa: BLE001 - SystemExit from uvicorn on a bind error
            failure.append(exc)

    thread = threading.Thread(target=run, name=f"display-web-{port}", daemon=True)
    thread.start()
    pause = threading.Event()  # never set: a sleep that reads as a bounded wait
    for _ in range(max(1, int(start_timeout / 0.02))):
        if server.started or not thread.is_alive():
            break
        pause.wait(0.02)
    if not server.started:
        server.should_exit = True
        thread.join(2)
        sock.close()
        reason = f"{failure[0]!r}" if failure else "it did not start in time"
        raise WebServerError(f"could not serve the display on {host}:{port}: {reason}")
    return DisplayServer(app, server, thread)


def serve_display(
    bus: EventBus,
    host: str = "127.0.0.1",
    port: int = 0,
    **app_kwargs: Any,
) -> DisplayServer:
    """Build the display app for ``bus`` and serve it; ``.url`` is its address."""
    from tablesense.web.app import create_app

    return serve_in_thread(create_app(bus, **app_kwargs), host, port)
