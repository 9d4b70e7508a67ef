"""The remote match over MQTT: topics, the broker's ACL lines, the short
code, and signed messages between the tables (docs/remote.md, "Messages").

A table's identity on the wire is its broker user (``table-N``): the ACL
lets a user write only under ``tablesense/remote/<user>/`` and read only the
lobby and its own inbox, so the topic a message arrives on names its sender.
Every message is also signed with the sender's table key (Ed25519, the same
:class:`~tablesense.tournament.security.TableKey` a table signs its results
with); the host's key comes with its signed lobby message, a joining table's
with its ``join``.

Which table opened a code is checked by the joining table, not taken on
trust (docs/remote.md, "Who opened the code"): a code the host table drew
is :func:`code_of` the host's match key, so a lobby whose key does not give
the code is refused; a code the tournament director drew comes with the
host table's registered key in the joining table's assignment, and the
host's lobby carries that key's endorsement of its match key.
"""

from __future__ import annotations

import base64
import hashlib
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


class HostRefused(WireError):
    """A table opened the code but is not its host table (its key does not
    give the code, or lacks the endorsement of the host table the director
    named), and the host table has not opened it: ``play --remote`` exits 3."""


#: What the host table's registered key signs to endorse its match key (``endorsed`` in the lobby).
ENDORSE_TYPE = "remote-host"
#: How long :meth:`Wire.find` keeps listening after the host's lobby came, for a second one.
SETTLE_S = 0.5


def code_of(public_key: str) -> str:
    """The short code a host table's match key names: six symbols of
    SHA-256 over the raw public key. A table that learned the code cannot
    open it under its own key without drawing keys until one hashes to it
    (31^6, about 8.9 x 10^8 tries on average), and the host's lobby is
    on the broker before the code is ever read out."""
    digest = hashlib.sha256(b"tablesense remote code\0" + base64.b64decode(public_key)).digest()
    n = int.from_bytes(digest[:16], "big")
    out = []
    for _ in range(CODE_LENGTH):
        n, r = divmod(n, len(CODE_ALPHABET))
        out.append(CODE_ALPHABET[r])
    return "".join(out)


def endorse(table_key: TableKey, code: str, match_key: str) -> dict[str, Any]:
    """The host table's registered key vouching for the match key it hosts ``code`` with
    (a tournament's remote match: the director drew the code, so it names no key)."""
    return table_key.sign({"type": ENDORSE_TYPE, "code": code, "key": match_key})


def lobby_problem(code: str, sender: str, body: dict[str, Any], host_key: str | None) -> str | None:
    """Why ``sender``'s lobby under ``code`` is not the host table's (None: it is).
    ``host_key``: the host table's registered key, from the director's
    assignment; without it the code itself must name the lobby's key."""
    key = body.get("key")
    if not isinstance(key, str):
        return str(say("{table} opened match {code} without a key", table=sender, code=code))
    if host_key is None:
        try:
            named = code_of(key)
        except ValueError:
            named = ""
        if named != code:
            return str(say("{table} opened match {code}, but the code does not name its key: it is not the table "
                           "that drew the code", table=sender, code=code))
        return None
    endorsed = body.get("endorsed")
    try:
        vouched = verify(host_key, endorsed) if isinstance(endorsed, dict) else None
    except SignatureError:
        vouched = None
    if vouched is None or vouched.get("type") != ENDORSE_TYPE or vouched.get("code") != code or vouched.get("key") != key:
        return str(say("{table} opened match {code}, but without the endorsement of the host table the director "
                       "named: it is not that table", table=sender, code=code))
    return None


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
        self.impostors: list[str] = []
        """Why each lobby :meth:`find` refused was not the host's (a sentence each)."""
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

    def announce(self, code: str, body: dict[str, Any], endorsed_by: TableKey | None = None) -> None:
        """The host's signed lobby message, retained so a table that joins later
        finds it; ``endorsed_by``: the table's registered key, when the director drew the code."""
        if endorsed_by is not None:
            body = {**body, "endorsed": endorse(endorsed_by, code, self.key.public)}
        signed = self.key.sign({**body, "type": "lobby", "code": code, "key": self.key.public, "from": self.user})
        self._client.publish(lobby_topic(self.user, code), json.dumps(signed), qos=1, retain=True).wait_for_publish(5)

    def withdraw(self, code: str) -> None:
        """Clear the lobby message (the match is full or over)."""
        self._client.publish(lobby_topic(self.user, code), b"", qos=1, retain=True).wait_for_publish(5)

    def find(self, code: str, timeout: float, host_key: str | None = None) -> tuple[str, dict[str, Any]]:
        """The host of ``code`` (its user and lobby message), trusted from now on.

        Every lobby under the code is checked (:func:`lobby_problem`, with
        ``host_key`` the director's word on the host table): another table's
        is refused and said in :attr:`impostors`; the host's is taken once no
        second one came within :data:`SETTLE_S`. HostRefused when only
        refused tables opened the code, or two tables passed the check;
        WireError when nobody opened it within ``timeout``."""
        self._client.subscribe(f"{ROOT}/+/lobby/{code}", qos=1)
        deadline = time.monotonic() + timeout
        found: dict[str, tuple[str, dict[str, Any]]] = {}
        settle_until = deadline
        while True:
            now = time.monotonic()
            left = deadline - now
            if found:
                left = min(left, settle_until - now)
            if left <= 0:
                break
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
            if body.get("code") != code or body.get("from") != sender:
                continue
            problem = lobby_problem(code, sender, body, host_key)
            if problem is not None:
                if problem not in self.impostors:
                    self.impostors.append(problem)
                continue
            if not found:
                settle_until = time.monotonic() + SETTLE_S
            found[sender] = (str(key), body)
        if len(found) > 1:
            raise HostRefused(say("{n} tables opened match {code} as its host ({tables}): refused; ask the host "
                                  "table for a new code", n=len(found), code=code,
                                  tables=", ".join(sorted(found))))
        if found:
            ((sender, (key, body)),) = found.items()
            self.trusted[sender] = key
            return sender, body
        if self.impostors:
            raise HostRefused(say("not joining: {reason}", reason=self.impostors[-1]))
        raise WireError(say("no match with code {code} on this broker (is the host table running?)", code=code))

    def receive(self, timeout: float) -> tuple[str, dict[str, Any]] | None:
        try:
            return self.inbox.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        self._client.loop_stop()
        self._client.disconnect()
