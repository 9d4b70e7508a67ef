"""The remote match over MQTT: topics, the broker's ACL lines, the short
code, and signed messages between the tables (docs/remote.md, "Messages").

A table's identity on the wire is its broker user (``table-N``): the ACL
lets a user write only under ``tablesense/remote/<user>/`` and read only the
lobby and its own inbox, so the topic a message arrives on names its sender.
Every message is also signed with the sender's table key (Ed25519, the same
:class:`~tablesense.tournament.security.TableKey` a table signs its results
with); the host's key comes with its signed lobby message, a joining table's
with its ``join``.
"""

from __future__ import annotations

import json
import queue
import secrets
import threading
import time
from pathlib import Path
from typing import Any

from tablesense.games.common import say
from tablesense.tournament.broker_client import BrokerURL, make_client
from tablesense.tournament.mosquitto import BrokerFiles, password_hash, write_broker_config

# the code's alphabet is the director's too (it draws the codes of a tournament's remote matches)
from tablesense.tournament.remote_pairs import CODE_ALPHABET as CODE_ALPHABET
from tablesense.tournament.remote_pairs import CODE_LENGTH
from tablesense.tournament.remote_pairs import new_code as new_code
from tablesense.tournament.security import SignatureError, TableKey, verify

ROOT = "tablesense/remote"


class WireError(RuntimeError):
    """The broker cannot be reached, the code names no match, a message
    does not verify: a sentence for the person at the table."""


def check_code(text: str) -> str:
    """A code as typed (any case, spaces and dashes ignored), or WireError."""
    code = "".join(ch for ch in text.upper() if ch not in " -")
    if len(code) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in code):
        raise WireError(say("{text!r} is not a match code: {n} letters and digits, as the host table printed it",
                            text=text, n=CODE_LENGTH))
    return code


def lobby_topic(user: str, code: str) -> str:
    return f"{ROOT}/{user}/lobby/{code}"


def inbox_topic(sender: str, receiver: str) -> str:
    return f"{ROOT}/{sender}/to/{receiver}"


def remote_acl_lines() -> list[str]:
    """ACL patterns of remote play: every user writes only under its own name,
    reads the lobby and only its own inbox."""
    return [
        "# remote play (docs/remote.md): a table writes under its own name, reads the lobby and its inbox",
        f"pattern write {ROOT}/%u/#",
        f"pattern read {ROOT}/+/lobby/#",
        f"pattern read {ROOT}/+/to/%u",
        "",
    ]


def write_remote_broker(directory: Path, *, tables: int, port: int, tls: bool = True, run_as: str | None = None,
                        bind: str = "127.0.0.1", names: list[str] | None = None) -> BrokerFiles:
    """An event broker's files (users ``table-1`` .. ``table-N``, TLS) with the
    remote-play ACL lines added."""
    files = write_broker_config(directory, tables=tables, port=port, tls=tls, run_as=run_as, bind=bind, names=names)
    with files.acl.open("a") as acl:
        acl.write("\n".join(remote_acl_lines()))
    for n in range(1, tables + 1):  # each table's password in its own file, for ``?password_file=`` (never in ps)
        user = f"table-{n}"
        path = password_file(files, user)
        path.write_text(files.credentials[user] + "\n")
        path.chmod(0o600)
    return files


def password_file(files: BrokerFiles, user: str) -> Path:
    """The file holding ``user``'s password beside the broker's files (mode 0600)."""
    return files.conf.parent / f"{user}.password"


def table_url(files: BrokerFiles, user: str, host: str = "127.0.0.1", port: int = 8883) -> str:
    """The ``--broker`` URL of ``user`` at this broker, its password read from
    its file (``?password_file=``): nothing secret on a command line."""
    scheme, ca = ("mqtts", f"ca={files.ca}&") if files.ca is not None else ("mqtt", "")
    return f"{scheme}://{user}@{host}:{port}?{ca}password_file={password_file(files, user)}"


def add_bridge_user(files: BrokerFiles, user: str) -> str:
    """An account at this broker for another club's bridge: it may carry any
    table's remote topics (the other club's own ACL confines its tables, and
    every message is signed). Returns its password; the broker reads it at
    its next start."""
    password = secrets.token_urlsafe(12)
    with files.passwd.open("a") as f:
        f.write(f"{user}:{password_hash(password)}\n")
    with files.acl.open("a") as f:
        f.write(f"\n# the bridge of another club: remote play's topics both ways\nuser {user}\ntopic readwrite {ROOT}/#\n")
    return password


def bridge_lines(name: str, host: str, port: int, user: str, password: str, cafile: Path | None) -> list[str]:
    """The ``connection`` section that bridges this club's broker to the
    other's: remote play's topics both ways, QoS 1, a persistent session (what
    a table sends while the link is cut waits and crosses when it is back),
    and mosquitto's private bridge flag so nothing loops between the two."""
    lines = [
        "",
        f"# bridge to the other club's broker (remote play, {name})",
        f"connection {name}",
        f"address {host}:{port}",
        f"remote_clientid {user}",
        f"remote_username {user}",
        f"remote_password {password}",
        "cleansession false",
        "try_private true",
        "notifications false",
        "restart_timeout 1 2",
        "keepalive_interval 5",
        f"topic {ROOT}/# both 1",
    ]
    if cafile is not None:
        lines += [f"bridge_cafile {cafile}", "bridge_insecure false"]
    return lines


def bridge_brokers(here: BrokerFiles, there: BrokerFiles, there_host: str, there_port: int, name: str) -> None:
    """Bridge broker ``here`` to broker ``there`` (an account at ``there``,
    the connection in ``here``'s config; restart both)."""
    password = add_bridge_user(there, name)
    with here.conf.open("a") as f:
        f.write("\n".join(bridge_lines(name, there_host, there_port, name, password, there.ca)) + "\n")


class Wire:
    """One table's connection: signed messages in (verified, queued) and out."""

    def __init__(self, broker: BrokerURL, key: TableKey) -> None:
        if broker.username is None:
            raise WireError(say("the broker URL names no user: the table's user, e.g. mqtts://table-1@host:8883"))
        self.user: str = broker.username
        self.key = key
        self.broker = broker
        self.trusted: dict[str, str] = {}
        """user -> public key (base64) whose signature that user's messages must carry."""
        self.inbox: queue.Queue[tuple[str, dict[str, Any]]] = queue.Queue()
        self.refused: list[str] = []
        self._lobby: queue.Queue[tuple[str, dict[str, Any]]] = queue.Queue()
        self._connected = threading.Event()
        self._client = make_client(f"{self.user}-remote", broker, clean=True)
        self._client.on_connect = self._on_connect
        self._client.on_message = self._on_message

    def connect(self, timeout: float = 10.0) -> None:
        try:
            self._client.connect(self.broker.host, self.broker.port, keepalive=10)
        except OSError as exc:
            raise WireError(say("cannot reach the broker at {host}:{port}: {error}",
                                host=self.broker.host, port=self.broker.port, error=str(exc))) from None
        self._client.loop_start()
        if not self._connected.wait(timeout):
            self.close()
            raise WireError(say("the broker at {host}:{port} did not accept {user} within {s} s "
                                "(user, password or certificate?)", host=self.broker.host,
                                port=self.broker.port, user=self.user, s=timeout))

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any = None) -> None:
        if getattr(reason, "is_failure", False):
            return
        client.subscribe(f"{ROOT}/+/to/{self.user}", qos=1)
        self._connected.set()

    def _on_message(self, client: Any, userdata: Any, msg: Any) -> None:
        parts = msg.topic.split("/")
        if len(parts) < 5 or not msg.payload:
            return
        sender = parts[2]
        try:
            signed = json.loads(msg.payload)
            if not isinstance(signed, dict):
                raise ValueError("not an object")
        except ValueError:
            self.refused.append(f"{sender}: not JSON")
            return
        if parts[3] == "lobby":
            self._lobby.put((sender, signed))
            return
        key = self.trusted.get(sender)
        if signed.get("type") == "join" and isinstance(signed.get("key"), str):
            key = signed["key"]  # a joining table presents its key, self-signed (the ACL binds the user)
        if key is None:
            self.refused.append(f"{sender}: not a table of this match")
            return
        try:
            body = verify(key, signed)
        except SignatureError as exc:
            self.refused.append(f"{sender}: {exc}")
            return
        self.inbox.put((sender, body))

    def send(self, to: str, body: dict[str, Any]) -> None:
        """Sign ``body`` and publish it to ``to``'s inbox (QoS 1)."""
        signed = self.key.sign({**body, "from": self.user, "to": to, "t": time.time()})
        self._client.publish(inbox_topic(self.user, to), json.dumps(signed, separators=(",", ":")), qos=1)

    def announce(self, code: str, body: dict[str, Any]) -> None:
        """The host's signed lobby message, retained so a table that joins later finds it."""
        signed = self.key.sign({**body, "type": "lobby", "code": code, "key": self.key.public, "from": self.user})
        self._client.publish(lobby_topic(self.user, code), json.dumps(signed), qos=1, retain=True).wait_for_publish(5)

    def withdraw(self, code: str) -> None:
        """Clear the lobby message (the match is full or over)."""
        self._client.publish(lobby_topic(self.user, code), b"", qos=1, retain=True).wait_for_publish(5)

    def find(self, code: str, timeout: float) -> tuple[str, dict[str, Any]]:
        """The host of ``code`` (its user and lobby message), trusted from now on."""
        self._client.subscribe(f"{ROOT}/+/lobby/{code}", qos=1)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WireError(say("no match with code {code} on this broker (is the host table running?)", code=code))
            try:
                sender, signed = self._lobby.get(timeout=left)
            except queue.Empty:
                continue
            key = signed.get("key")
            try:
                body = verify(str(key), signed)
            except SignatureError as exc:
                self.refused.append(f"lobby of {sender}: {exc}")
                continue
            if body.get("code") == code and body.get("from") == sender:
                self.trusted[sender] = str(key)
                return sender, body

    def receive(self, timeout: float) -> tuple[str, dict[str, Any]] | None:
        try:
            return self.inbox.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        self._client.loop_stop()
        self._client.disconnect()
