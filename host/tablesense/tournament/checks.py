"""The pure half of ingesting an outbox message: everything that needs no database.

Parsing, the digests, the signature and the replay of every game record are
most of a result's cost (a record replays in a few milliseconds) and depend
only on the message, the table's public key and the event's game. They are
done here, once per message, by :func:`check_message` — in a worker process
when the director has cores to spare (:class:`.ingestion.CheckPool`), so
that the one thread that writes the database does only the database's part.

Everything here is picklable: a :class:`Checked` travels back from a worker.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from .protocol import MessageError, check_ids, message_key, parse_message
from .security import SignatureError, canonical, verify


@dataclass(frozen=True)
class Replayed:
    """One game record replayed: its score per side and winning side, or why it does not replay."""

    score: tuple[float, ...] = ()
    winner: int | None = None
    error: str = ""
    """`` (hand 2, move 7): ...`` when the record does not replay (the refusal's tail)."""


def replay_one(record: dict[str, Any]) -> Replayed:
    """Replay one record with the rules engine (the expensive step)."""
    from tablesense.games.common import IllegalStepError
    from tablesense.games.record import replay

    try:
        rr = replay(record)
    except Exception as exc:  # noqa: BLE001 - RecordFormatError, IllegalStepError or a malformed record: all refuse the result
        where = f" (hand {exc.hand}, move {exc.move})" if isinstance(exc, IllegalStepError) else ""
        return Replayed(error=f"{where}: {exc}")
    return Replayed(tuple(float(x) for x in rr.score), rr.winner)


@dataclass(frozen=True)
class Checked:
    """What the database-free checks found about one message of a table."""

    digest: str
    """SHA-256 of the whole signed message (what its ack names); of the raw bytes when unreadable."""
    key: str = "?"
    message: dict[str, Any] | None = None
    body: dict[str, Any] | None = None
    """The signed body, once its signature checked out."""
    body_digest: str = ""
    refusal: str = ""
    """Why the message is refused before the database is read ("" when it is not)."""
    forged: bool = False
    """The signature failed: the director reads the table's key again before calling it forged."""
    unreadable: bool = False
    """The bytes were not a message (refused by raw digest and size)."""
    replays: tuple[Replayed | None, ...] = ()
    """A result's records replayed in order (None: not a record of the event's game)."""


def check_raw(raw: bytes, table: int, event_id: int, public_key: str | None, game: str, variant: str) -> Checked:
    """Parse ``raw`` strictly, then :func:`check_message`."""
    try:
        message = parse_message(raw)
    except MessageError as exc:
        return Checked(hashlib.sha256(raw).hexdigest(), refusal=f"malformed message: {exc}", unreadable=True)
    return check_message(message, table, event_id, public_key, game, variant)


def check_message(message: dict[str, Any], table: int, event_id: int, public_key: str | None,
                  game: str, variant: str) -> Checked:
    """The cheap checks first (ids, key, topic, event), then the signature, then
    the replay of a result's records; no database."""
    try:
        whole, signed = _canonical_pair(message)
        d = hashlib.sha256(whole).hexdigest()
    except (TypeError, ValueError):
        d, signed = "", b""
    try:
        check_ids(message)
        key = message_key(message)
    except (KeyError, ValueError, TypeError) as exc:
        return Checked(d, message=message, refusal=f"malformed message: {exc}")
    if message.get("table") != table:
        return Checked(d, key, message, refusal=f"table {message.get('table')!r} published on table-{table}'s topic")
    if message.get("event") != event_id:
        return Checked(d, key, message, refusal=f"message for event {message.get('event')!r}, this is event {event_id}")
    if public_key is None:
        return Checked(d, key, message, refusal=f"table {table} is not part of this event")
    if not d:
        return Checked(d, key, message, refusal="malformed message: not JSON data")
    try:
        body = verify(public_key, message, signed)
    except SignatureError as exc:
        return Checked(d, key, message, refusal=f"forged: {exc}", forged=True)
    return Checked(d, key, message, body, hashlib.sha256(signed).hexdigest(), replays=replay_records(body, game, variant))


def _canonical_pair(message: dict[str, Any]) -> tuple[bytes, bytes]:
    """The canonical bytes of the whole message and of its body (without ``sig``),
    each value encoded once: exactly :func:`.security.canonical` of each."""
    if not all(isinstance(k, str) for k in message):
        return canonical(message), canonical({k: v for k, v in message.items() if k != "sig"})
    enc = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode
    parts = {k: f"{enc(k)}:{enc(v)}" for k, v in message.items()}
    order = sorted(parts)
    whole = "{" + ",".join(parts[k] for k in order) + "}"
    body = "{" + ",".join(parts[k] for k in order if k != "sig") + "}"
    return whole.encode(), body.encode()


def warm_up() -> int:
    """Load what :func:`check_raw` needs (the rules of every game, the record
    reader) in this process: a pool worker calls it when the director starts,
    so the first result of the evening does not wait for a worker to start
    and import the rules. Returns the process id (which worker answered)."""
    import os

    from tablesense.games import record  # noqa: F401 - imported for its side effect: the games' rules loaded

    return os.getpid()


def replay_records(body: dict[str, Any], game: str, variant: str) -> tuple[Replayed | None, ...]:
    """A result's records replayed (the rest of the checks, against the match, come later)."""
    records = body.get("records")
    if body.get("kind") != "result" or not isinstance(records, list):
        return ()
    return tuple(replay_one(r) if isinstance(r, dict) and r.get("game") == game and r.get("variant") == variant else None
                 for r in records)
