"""A table's line to the director over MQTT: what a real table and a headless one share.

:class:`DirectorLink` connects a table to the director's broker under the
table's own user: it publishes the retained ``online`` status (``offline`` is
its last will), keeps the director's retained assignment for this table in
the table's durable outbox (:class:`~tablesense.journal.outbox.TableOutbox`,
one table's rows even in a file several tables share), sends signed messages
through that outbox and re-sends them with back-off until the director's
``ack`` names the message's digest, beats a heartbeat, and publishes the
table's live progress (:mod:`.live`) outside the outbox.

A real table (``play --director``, :mod:`.reporter`) uses it as it is; a
headless table (:class:`~.table_client.HeadlessTable`) adds computer players.
An assignment that names another table is refused and logged, never kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, Self

import paho.mqtt.client as mqtt

from tablesense.games.common import Sentence, say
from tablesense.journal.outbox import TableOutbox, WrongTable

from . import protocol as proto
from .bridge import BrokerURL, make_client
from .live import live_topic
from .live import progress as live_progress
from .security import TableKey, digest

log = logging.getLogger(__name__)


class Display(Protocol):
    """Where the table shows its match (the table's EventBus: ``publish(kind, **data)``)."""

    def publish(self, kind: str, /, **data: Any) -> Any: ...


class Crashed(Exception):
    """Raised inside a table's loop when the table is made to drop off."""


class DirectorLink:
    """See the module docstring. ``start()``, ``send(message)``, ``wait_ack(key)``,
    ``stop()`` (clean: ``offline``), ``crash()`` (no DISCONNECT: the broker
    publishes the last will), ``close()``."""

    def __init__(
        self,
        number: int,
        key: TableKey,
        outbox_path: Path,
        broker: BrokerURL,
        *,
        resend_interval: float = 0.5,
        heartbeat_interval: float = 1.0,
        client_id: str | None = None,
        bus: Display | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.number = number
        self.say: Callable[[str], None] = say or (lambda _line: None)
        """Where the table tells its operator what it does (``tournament table`` prints it)."""
        self.client_id = client_id or f"tablesense-table-{number}"
        self.bus = bus
        self.key = key
        self.broker = broker
        self.resend_interval = resend_interval
        self.heartbeat_interval = heartbeat_interval
        self.outbox_path = outbox_path
        self.outbox = TableOutbox(outbox_path, number, digest)
        self.display: dict[str, Any] = {}
        """The match the table shows (round, match, names...): its live progress names them."""
        self.sent = 0
        self.queued_notices = 0
        """How many of the director's ``queued`` notices named a pending message."""
        self.refused_assignments = 0
        self._client: mqtt.Client | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self.hearing = threading.Event()
        """Set once the broker has confirmed this connection's subscriptions
        (assignments and acks): from then on the director's answers reach it."""
        self._threads: list[threading.Thread] = []
        self._starts = 0
        self._due: dict[str, tuple[float, float]] = {}  # key -> (next send, current interval)
        self.max_resend_interval = 8.0
        self._live_at = 0.0
        self._moves_seen: tuple[Any, Any, Any] | None = None
        self._moved_at = 0.0

    # --------------------------------------------------------------- life

    def start(self) -> Self:
        self._stop.clear()
        self._starts += 1
        c = make_client(self.client_id, self.broker)
        c.will_set(proto.status_topic(self.number), proto.STATUS_OFFLINE, qos=1, retain=True)
        c.on_connect = self._on_connect
        c.on_message = self._on_message
        c.on_subscribe = lambda *_args: self.hearing.set()
        self._client = c
        c.connect_async(self.broker.host, self.broker.port, keepalive=5)
        c.loop_start()
        self._threads = [
            threading.Thread(target=self._guard(self._send_loop), name=f"table-{self.number}-send", daemon=True),
            *self._more_threads(),
        ]
        for t in self._threads:
            t.start()
        return self

    def _more_threads(self) -> list[threading.Thread]:
        """Threads a kind of table adds (a headless table's play loop)."""
        return []

    def stop(self) -> None:
        """Clean stop: publish ``offline`` and disconnect."""
        self._stop.set()
        self._wake.set()
        for t in self._threads:
            t.join(timeout=10)
        c = self._client
        if c is not None:
            c.publish(proto.status_topic(self.number), proto.STATUS_OFFLINE, qos=1, retain=True)
            c.disconnect()
            c.loop_stop()
        self._client = None

    def crash(self) -> None:
        """Drop off abruptly: threads stop, the socket closes without DISCONNECT."""
        self._stop.set()
        self._wake.set()
        c = self._client
        self._client = None
        if c is not None:
            c.loop_stop()
            sock = c.socket()
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.close()
        for t in self._threads:
            t.join(timeout=10)

    def close(self) -> None:
        self.stop()
        self.outbox.close()

    def connected(self) -> bool:
        c = self._client
        return c is not None and c.is_connected()

    def _guard(self, fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                fn()
            except Crashed:
                pass
            except Exception:
                log.exception("table %d: %s failed", self.number, fn.__name__)

        return run

    # --------------------------------------------------------------- MQTT

    def _on_connect(self, client: mqtt.Client, _ud: Any, _flags: Any, rc: Any, _props: Any = None) -> None:
        if getattr(rc, "is_failure", False):
            log.warning("table %d: broker refused the connection: %s", self.number, rc)
            self.say(say("table {table}: the broker at {broker} refused us: {reason}", table=self.number,
                         broker=f"{self.broker.host}:{self.broker.port}", reason=str(rc)))
            return
        a = self.outbox.assignment()
        where = dict(table=self.number, broker=f"{self.broker.host}:{self.broker.port}",
                     user=self.broker.username or say("anonymous"))
        self.say(say("table {table}: connected to {broker} as {user}; waiting for the director's assignment", **where)
                 if not a else
                 say("table {table}: connected to {broker} as {user}; resuming round {round}", round=a.get("round"), **where))
        client.publish(proto.status_topic(self.number), proto.STATUS_ONLINE, qos=1, retain=True)
        self.hearing.clear()
        client.subscribe([(proto.assign_topic(self.number), 1), (proto.ack_topic(self.number), 1)])
        self._due.clear()  # a new connection: re-send everything pending at once
        self._wake.set()

    def _on_message(self, _client: mqtt.Client, _ud: Any, msg: mqtt.MQTTMessage) -> None:
        try:
            data = json.loads(msg.payload)
        except ValueError:
            return
        if msg.topic == proto.assign_topic(self.number):
            if isinstance(data, dict):
                self.take_assignment(data)
        elif msg.topic == proto.ack_topic(self.number) and isinstance(data, dict) and data.get("status") == proto.QUEUED:
            self.queued(str(data.get("raw")))
        elif (
            msg.topic == proto.ack_topic(self.number)
            and isinstance(data, dict)
            and self._keep_reason(data)
            and self.outbox.acked(str(data.get("key")), str(data.get("digest")), str(data.get("status")))
        ):
            status = _ECHO.get(str(data.get("status")), str(data.get("status")))
            if data.get("reason"):
                self.say(say("table {table}: director {status} {key}: {reason}", table=self.number, status=status,
                             key=str(data.get("key")), reason=str(data.get("reason"))))
            else:
                self.say(say("table {table}: director {status} {key}", table=self.number, status=status,
                             key=str(data.get("key"))))
            self._wake.set()

    def queued(self, raw: str) -> bool:
        """The director took the pending message whose published bytes hash to
        ``raw`` into its queue: wait ``QUEUED_WAIT_S`` for its answer before
        sending it again, instead of adding copies to a busy director's queue
        every back-off step (a director that crashed meanwhile lost its queue,
        so the wait is bounded). True when a pending message matched."""
        for key, payload in self.outbox.pending():
            if hashlib.sha256(payload.encode()).hexdigest() == raw:
                _due, interval = self._due.get(key, (0.0, self.resend_interval))
                self._due[key] = (time.monotonic() + proto.QUEUED_WAIT_S, interval)
                self.queued_notices += 1
                return True
        return False

    def take_assignment(self, data: dict[str, Any]) -> bool:
        """Keep the director's assignment (not an older one); one that names another
        table is refused and logged. True when kept."""
        cur = self.outbox.assignment()
        try:
            kept = self.outbox.assign(data)
        except WrongTable as exc:
            self.refused_assignments += 1
            log.warning("table %d: refused: %s", self.number, exc)
            return False
        if kept:
            self._wake.set()
            if data != cur:
                self.say(_assignment_line(self.number, data))
        return kept

    def _keep_reason(self, ack: dict[str, Any]) -> bool:
        """Keep why the director refused a message (the table shows it: "X plays at
        table 2, not at table 1"), before the ack marks it answered. Always True."""
        if ack.get("reason"):
            self.outbox.put(f"reason/{ack.get('key')}", str(ack.get("reason")))
        return True

    def _publish_pending(self) -> None:
        """Re-send what the director has not acknowledged, backing off per message
        (``resend_interval`` doubling up to ``max_resend_interval``) so a busy
        director is not buried under copies."""
        c = self._client
        if c is None or not c.is_connected():
            return
        now = time.monotonic()
        for key, payload in self.outbox.pending():
            due, interval = self._due.get(key, (0.0, self.resend_interval))
            if now < due:
                continue
            c.publish(proto.outbox_topic(self.number), payload, qos=1)
            self.sent += 1
            self._due[key] = (now + interval, min(interval * 2, self.max_resend_interval))

    def _send_loop(self) -> None:
        last_hb = 0.0
        while not self._stop.is_set():
            self._publish_pending()
            now = time.monotonic()
            c = self._client
            if c is not None and c.is_connected() and now - last_hb >= self.heartbeat_interval:
                c.publish(proto.heartbeat_topic(self.number), b"1", qos=0)
                last_hb = now
            self._stop.wait(min(self.resend_interval, 0.2))

    def send(self, message: dict[str, Any]) -> str:
        """Sign ``message``, keep it in the outbox and send it; returns its key."""
        signed = self.key.sign(message)
        key = proto.message_key(signed)
        self.outbox.queue(key, signed)
        self.say(say("table {table}: sent {key} score {score}", table=self.number, key=key, score=message["score"])
                 if "score" in message else say("table {table}: sent {key}", table=self.number, key=key))
        self._due[key] = (time.monotonic() + self.resend_interval, self.resend_interval * 2)
        c = self._client
        if c is not None and c.is_connected():
            c.publish(proto.outbox_topic(self.number), json.dumps(signed), qos=1)
            self.sent += 1
        return key

    def wait_ack(self, key: str) -> str:
        """The director's answer to ``key``; raises :class:`Crashed` when the table stops first."""
        while True:
            st = self.outbox.ack_status(key)
            if st is not None:
                return st
            if self._stop.is_set():
                raise Crashed()
            self._wake.wait(0.2)
            self._wake.clear()

    # --------------------------------------------------------------- live

    def publish_live(self, hand: int, scores: Any, counts: Any, *, force: bool = False, state: str = "playing",
                     view: dict[str, Any] | None = None, turn: int | None = None, moves: int | None = None,
                     problem: str | None = None, player: str | None = None) -> None:
        """The table's public progress for the director's console and spectators (tournament.live):
        QoS 0, outside the outbox, at most five a second unless ``force`` (a hand's end, a new
        problem). The time of the last move is this table's clock when ``moves`` last changed."""
        c = self._client
        now = time.monotonic()
        seen = (self.display.get("match"), hand, moves)
        if seen != self._moves_seen:
            self._moves_seen = seen
            self._moved_at = time.time()
        if c is None or not c.is_connected() or (not force and now - self._live_at < 0.2):
            return
        self._live_at = now
        body = live_progress(self.display.get("round"), self.display.get("match"), hand, scores, counts, state, view,
                             turn=turn, player=player or self._player_at(turn), moves=moves,
                             moved=self._moved_at, problem=problem)
        c.publish(live_topic(self.number), json.dumps(body), qos=0)

    def publish_view(self, view: dict[str, Any]) -> None:
        """A real table's display ``view`` (public by construction: what its screen shows),
        relayed with its progress: hand, score, whose turn, moves, a correction the
        players are asked for or a pause (a board offline). A hand's result, the
        match's end or a new problem always goes."""
        over = bool(view.get("match_over"))
        problem = "correction" if view.get("correction") else ("paused" if view.get("paused") else None)
        seats = view.get("seats") or []
        counts = [int(s.get("count") or 0) for s in seats if isinstance(s, dict)] or None
        turn = view.get("to_play")
        named = [str(s.get("name") or "") for s in seats if isinstance(s, dict)]
        changed = problem != self.display.get("problem")
        self.display["problem"] = problem
        self.publish_live(int(view.get("hand_no") or 0), view.get("scores") or [], counts, view=view,
                          force=over or view.get("result") is not None or changed,
                          state="finished" if over else "playing",
                          turn=turn if isinstance(turn, int) else None,
                          moves=int(view.get("moves") or 0), problem=problem,
                          player=named[turn] if isinstance(turn, int) and 0 <= turn < len(named) else None)

    def _player_at(self, seat: int | None) -> str | None:
        """The name of the player at ``seat`` in the announced seat plan (a headless table's)."""
        for s in self.display.get("seats") or []:
            if isinstance(s, dict) and s.get("seat") == seat:
                return str(s.get("player") or "") or None
        return None


#: The director's answers, as a person reads them (the protocol keeps the English word).
_ECHO = {"accepted": say("accepted"), "duplicate": say("duplicate"), "refused": say("refused")}


def _assignment_line(table: int, a: dict[str, Any]) -> Sentence:
    """What the director asked of this table, in one line (a Sentence: the
    command prints it in its language)."""
    ms = [m for m in a.get("matches", []) if not m.get("done")]
    if not ms:
        return say("table {table}: round {round}: nothing to play here; waiting for the next round", table=table,
                   round=a.get("round"))
    parts = [" v ".join(str(e.get("name")) for e in m.get("entrants", [])) for m in ms]
    matches = parts[0]
    for p in parts[1:]:
        matches = say("{first}; then {then}", first=matches, then=p)
    return say("table {table}: round {round}: {matches}", table=table, round=a.get("round"), matches=matches)
