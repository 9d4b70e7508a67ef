"""The connection to the broker: its URL (with the password from a file or
the environment, never the command line), and the paho client every part of
the tournament room opens with it (the director's bridge, the live relay, the
tables). Kept apart from :mod:`.bridge` so that the live relay, which the
bridge feeds, can open its own client without importing the bridge.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion


@dataclass(frozen=True)
class BrokerURL:
    """``mqtt://user:password@host:port`` split into its parts.

    ``mqtts://user:password@host:8883?ca=FILE`` is MQTT over TLS: the client
    verifies the broker's certificate against the CA in ``FILE`` (the
    ``ca.crt`` that ``tournament mosquitto-config`` wrote) and its host name,
    so the password is sent only to the real broker and only encrypted.
    Without ``ca`` the system's trusted CAs are used.

    The password need not be in the URL (where ``ps`` shows it to every user
    of the machine): ``?password_file=FILE`` reads it from the file's first
    line, and a URL with a user and no password takes it from the environment
    variable ``TABLESENSE_BROKER_PASSWORD``."""

    host: str = "127.0.0.1"
    port: int = 1883
    username: str | None = None
    password: str | None = None
    tls: bool = False
    ca: str | None = None

    @classmethod
    def parse(cls, url: str) -> BrokerURL:
        from urllib.parse import parse_qs, unquote

        if "://" not in url:
            url = "mqtt://" + url
        u = urlparse(url)
        if u.scheme not in ("mqtt", "tcp", "mqtts", "ssl"):
            raise ValueError(f"broker URL must start with mqtt:// or mqtts://, not {u.scheme}://")
        tls = u.scheme in ("mqtts", "ssl")
        query = parse_qs(u.query)
        ca = query.get("ca", [None])[0]
        password = unquote(u.password) if u.password is not None else None
        password_file = query.get("password_file", [None])[0]
        if password_file is not None:
            if password is not None:
                raise ValueError("the broker URL has a password and a password_file: give one")
            password = read_password_file(password_file)
        elif password is None and u.username is not None:
            password = os.environ.get(PASSWORD_ENV) or None
        return cls(u.hostname or "127.0.0.1", u.port or (8883 if tls else 1883), u.username, password, tls, ca)

    def with_user(self, username: str, password: str) -> BrokerURL:
        return BrokerURL(self.host, self.port, username, password, self.tls, self.ca)


#: The environment variable a broker URL without a password takes it from.
PASSWORD_ENV = "TABLESENSE_BROKER_PASSWORD"
#: A password file is one line; anything longer is not one.
MAX_PASSWORD_FILE_BYTES = 4096


def read_password_file(path: str) -> str:
    """The first line of a password file (a regular file of at most 4 kB), stripped."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise ValueError(f"the broker password file {path} is not a regular file")
            raw = f.read(MAX_PASSWORD_FILE_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read the broker password file {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_PASSWORD_FILE_BYTES:
        raise ValueError(f"the broker password file {path} is longer than {MAX_PASSWORD_FILE_BYTES} bytes")
    lines = raw.decode("utf-8", errors="replace").splitlines()
    password = lines[0].strip() if lines else ""
    if not password:
        raise ValueError(f"the broker password file {path} is empty")
    return password


def password_in_url(url: str) -> bool:
    """True when a broker URL carries its password (visible in ``ps`` when it is an argument)."""
    if "://" not in url:
        url = "mqtt://" + url
    return urlparse(url).password is not None


class _PollSelect:
    """``select.select`` over ``poll()``, for paho's network loop.

    paho waits with ``select.select``, which cannot watch a descriptor above
    1023: a director serving a thousand spectators hands out higher numbers,
    and a broker connection made (or remade) then failed at once, in a loop
    (the benchmark's tables did, until this). ``poll`` has no such limit."""

    error = OSError

    @staticmethod
    def select(rlist: list[Any], wlist: list[Any], _xlist: list[Any], timeout: float | None = None
               ) -> tuple[list[Any], list[Any], list[Any]]:
        import select as _select

        poller = _select.poll()
        by_fd: dict[int, Any] = {}
        for objs, flag in ((rlist, _select.POLLIN), (wlist, _select.POLLOUT)):
            for obj in objs:
                fd = obj.fileno()  # a closed socket raises here, as select.select would
                if fd < 0:
                    raise ValueError("file descriptor cannot be a negative integer")
                by_fd[fd] = obj
                poller.register(fd, flag | (_select.POLLIN if obj in rlist else 0))
        ready = poller.poll(None if timeout is None else max(0.0, timeout) * 1000)
        bad = _select.POLLIN | _select.POLLHUP | _select.POLLERR
        readable = [by_fd[fd] for fd, ev in ready if ev & bad and by_fd[fd] in rlist]
        writable = [by_fd[fd] for fd, ev in ready if ev & (_select.POLLOUT | _select.POLLERR) and by_fd[fd] in wlist]
        return readable, writable, []


if hasattr(__import__("select"), "poll"):
    mqtt.select = _PollSelect  # type: ignore[attr-defined]  # paho's module-level name, only paho's


def make_client(client_id: str, broker: BrokerURL, *, clean: bool = False) -> mqtt.Client:
    """A paho client (MQTT 3.1.1, persistent session unless ``clean``) with auto-reconnect."""
    c = mqtt.Client(
        callback_api_version=CallbackAPIVersion.VERSION2,
        client_id=client_id,
        clean_session=clean,
        protocol=mqtt.MQTTv311,
    )
    if broker.username is not None:
        c.username_pw_set(broker.username, broker.password)
    if broker.tls:
        import ssl

        c.tls_set(ca_certs=broker.ca, cert_reqs=ssl.CERT_REQUIRED, tls_version=ssl.PROTOCOL_TLS_CLIENT)
    c.reconnect_delay_set(min_delay=1, max_delay=2)
    c.max_queued_messages_set(0)
    c.max_inflight_messages_set(100)
    return c
