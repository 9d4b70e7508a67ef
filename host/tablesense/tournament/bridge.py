"""The director's side of MQTT: ingest table outboxes, acknowledge, announce rounds.

paho-mqtt's network thread only sorts what arrives: a heartbeat is noted in
memory, a live progress message goes to the :class:`LiveBoard` (when the
bridge has one), and everything else is offered to the :class:`Intake`, a
token bucket and a bounded queue per table checked before a byte is parsed
(a flooding table is shed, and slows only itself). An outbox message the
intake takes is answered at once with a ``queued`` notice (naming the hash
of its bytes), so its table does not send it again while its ack is due.

Two stages then serve the tables in turn. The checker takes what queued
(one message per table in turn, a batch at most ``BATCH_MAX``) and runs the
database-free checks (:mod:`.checks`: parse, digests, signature, the replay
of every record) — in a pool of worker processes when ``check_workers`` is
set, so a batch's replays run on every core while the previous batch is
being stored. The storer writes each batch in one transaction
(:meth:`.ingestion.Ingestion.store`) and publishes the acknowledgements
*after* the commit, so the director never acknowledges what it has not
stored ("acts only on what it acknowledged").

The director's default client id is derived from its broker password (stable
across restarts for its persistent session, not guessable without the
password); the generated broker config binds ids to users anyway.
On every (re)connection the bridge re-subscribes and re-publishes the retained
round assignments, so a broker restarted without its persistence file still
ends up with the current round.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import multiprocessing
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import paho.mqtt.client as mqtt

from . import protocol as proto
from .broker_client import MAX_PASSWORD_FILE_BYTES as MAX_PASSWORD_FILE_BYTES
from .broker_client import PASSWORD_ENV as PASSWORD_ENV
from .broker_client import BrokerURL as BrokerURL
from .broker_client import make_client as make_client
from .broker_client import password_in_url as password_in_url
from .broker_client import read_password_file as read_password_file
from .checks import Checked, check_raw, warm_up
from .intake import LIVE_TOKENS_PER_S, Intake, TokenBucket, message_cost
from .live import LiveBoard
from .service import Ack, Director

log = logging.getLogger(__name__)

#: Most messages stored in one transaction (one commit, one fsync).
BATCH_MAX = 64


def default_check_workers() -> int:
    """Check workers for ``director serve``: one per core, none on a single core
    (there a worker process would only add copying)."""
    import os

    n = os.cpu_count() or 1
    return n if n > 1 else 0


def director_client_id(broker: BrokerURL) -> str:
    """The director's client id: stable for one password, not guessable without it."""
    secret = f"{broker.username}:{broker.password}".encode()
    return "tablesense-director-" + hashlib.sha256(b"tablesense client id:" + secret).hexdigest()[:20]


@dataclass
class BridgeStats:
    received: int = 0
    accepted: int = 0
    duplicates: int = 0
    refused: int = 0
    shed: int = 0
    """Messages dropped unread at the intake (bucket dry or queue full); never acknowledged."""
    refusals: list[tuple[int, str, str]] = field(default_factory=list)


class DirectorBridge:
    """Connects a :class:`Director` to the broker. ``start()`` / ``stop()``; a context manager."""

    def __init__(
        self,
        director: Director,
        broker: BrokerURL,
        *,
        client_id: str | None = None,
        on_ack: Callable[[int, Ack], None] | None = None,
        live: LiveBoard | None = None,
        intake: Intake | None = None,
        check_workers: int = 0,
    ) -> None:
        """``check_workers``: processes that run the checks and replays of
        incoming results (0: the checker thread runs them itself)."""
        self.director = director
        self.broker = broker
        self.stats = BridgeStats()
        self.live = live
        """The tables' live progress, fed from this connection (see :mod:`live`)."""
        self._on_ack = on_ack
        self._intake = intake or Intake()
        # Held while an outbox message is taken in and its ``queued`` notice
        # published, and by every ack before it is published: a batch checked and
        # stored faster than the network thread reached its notice would
        # otherwise answer before it, and the table would see "queued" after
        # its answer.
        self._notice_lock = threading.Lock()
        self._client = make_client(client_id or director_client_id(broker), broker)
        self._client.on_connect = self._on_connect
        self._client.on_message = self._on_message
        self._live_buckets: dict[int, TokenBucket] = {}
        self._check_workers = check_workers
        self._pool: Executor | None = None
        # checked batches waiting for the storer: at most two (one stored, one checked meanwhile)
        self._checked: queue.Queue[list[_Item] | None] = queue.Queue(maxsize=2)
        self._worker = threading.Thread(target=self._work, name="director-check", daemon=True)
        self._storer = threading.Thread(target=self._store_work, name="director-store", daemon=True)
        self._watcher = threading.Thread(target=self._watch, name="director-watch", daemon=True)
        self._stopping = threading.Event()
        self.quiet: set[int] = set()
        self._quiet_lock = threading.Lock()
        self._started = time.time()
        self._connected = threading.Event()
        self._assignments: dict[int, dict[str, Any]] = {}
        self._lock = threading.Lock()

    # --------------------------------------------------------------- life

    def start(self) -> DirectorBridge:
        self._started = time.time()
        if self._check_workers > 0:
            # forkserver: workers start from a clean process, not a copy of this threaded one
            self._pool = ProcessPoolExecutor(self._check_workers, mp_context=multiprocessing.get_context("forkserver"))
            # every worker started and the rules loaded now, in the background, not
            # when the first result arrives (that took the first batch half a second)
            for _ in range(self._check_workers):
                self._pool.submit(warm_up)
        self._worker.start()
        self._storer.start()
        self._watcher.start()
        self._client.connect_async(self.broker.host, self.broker.port, keepalive=5)
        self._client.loop_start()
        return self

    def wait_connected(self, timeout: float = 10.0) -> bool:
        return self._connected.wait(timeout)

    def stop(self) -> None:
        self._stopping.set()
        self._intake.close()
        self._worker.join(timeout=10)
        self._storer.join(timeout=10)
        self._watcher.join(timeout=10)
        self._client.disconnect()
        self._client.loop_stop()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def crash(self) -> None:
        """Die abruptly (tests): unprocessed messages are dropped, no clean disconnect.
        Nothing is lost: those messages were never acknowledged, so tables re-send."""
        self._stopping.set()
        self._intake.close(drop=True)
        self._client.loop_stop()
        sock = self._client.socket()
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()
        self._worker.join(timeout=10)
        self._storer.join(timeout=10)
        self._watcher.join(timeout=10)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> DirectorBridge:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def idle(self) -> bool:
        """True when every received message has been processed."""
        return self._intake.idle()

    # --------------------------------------------------------------- rounds

    def announce_round(self) -> None:
        """Publish (retained) every table's matches of the current round."""
        with self._lock:
            self._assignments = self.director.assignments()
            for table, payload in self._assignments.items():
                self._client.publish(proto.assign_topic(table), json.dumps(payload), qos=1, retain=True)

    def withdraw_round(self) -> None:
        """Clear every table's retained assignment (a rehearsal on the club's broker leaves none)."""
        with self._lock:
            self._assignments = {}
            for t in self.director.tables():
                info = self._client.publish(proto.assign_topic(t.number), b"", qos=1, retain=True)
                with contextlib.suppress(RuntimeError, ValueError):
                    info.wait_for_publish(2)

    # --------------------------------------------------------------- MQTT

    def _on_connect(self, client: mqtt.Client, _ud: Any, _flags: Any, rc: Any, _props: Any = None) -> None:
        if getattr(rc, "is_failure", False):
            log.warning("director: broker refused the connection: %s", rc)
            return
        client.subscribe([
            (f"{proto.TOPIC_ROOT}/tables/+/out", 1),
            (f"{proto.TOPIC_ROOT}/tables/+/status", 1),
            (f"{proto.TOPIC_ROOT}/tables/+/heartbeat", 0),
        ])
        if self.live is not None:
            from .live import LIVE_TOPIC_FILTER

            client.subscribe(LIVE_TOPIC_FILTER, 0)
        with self._lock:
            if not self._assignments:
                # Nothing announced yet: clear any retained assignment another event
                # left on a shared broker, so no table starts a stale match.
                for t in self.director.tables():
                    client.publish(proto.assign_topic(t.number), b"", qos=1, retain=True)
            for table, payload in self._assignments.items():
                client.publish(proto.assign_topic(table), json.dumps(payload), qos=1, retain=True)
        self._connected.set()

    def _on_message(self, _client: mqtt.Client, _ud: Any, msg: mqtt.MQTTMessage) -> None:
        """Sort on the network thread, cheapest checks first; parse nothing here."""
        topic = msg.topic
        table = proto.table_from_topic(topic)
        if table is None:
            return
        leaf = topic.rsplit("/", 1)[-1]
        if leaf == "heartbeat":
            self.director.table_seen(table)  # memory only
            return
        if leaf == "live":
            if self.live is not None and self._live_buckets.setdefault(table, TokenBucket(LIVE_TOKENS_PER_S)).take(
                    message_cost(len(msg.payload))):
                self.live.update(table, bytes(msg.payload))
            return
        if leaf not in ("out", "status"):
            return
        payload = bytes(msg.payload)
        size = len(payload)
        if size > proto.MAX_MESSAGE_BYTES:
            # Never queue an oversized payload (a broker without the generated
            # limit would let a flood of them fill the director's memory):
            # keep its digest and size for the refusal, drop the bytes now.
            payload = _Dropped.of(payload)
        with self._notice_lock:
            if not self._intake.offer(table, topic, payload, size):
                self.stats.shed += 1
            elif leaf == "out" and not isinstance(payload, _Dropped):
                # received and queued: the table waits for the ack instead of re-sending
                self._client.publish(proto.ack_topic(table), proto.queued_notice(hashlib.sha256(payload).hexdigest()),
                                     qos=1)

    def _work(self) -> None:
        """The checker: what queued while the last batch was checked is the next
        batch (one message per table in turn, at most ``BATCH_MAX``); its outbox
        messages are checked (in the pool, when there is one) and the batch
        handed to the storer, in order."""
        try:
            while True:
                item = self._intake.take()
                if item is None:
                    return
                batch = [item]
                while len(batch) < BATCH_MAX:
                    more = self._intake.take(0)
                    if more is None:
                        break
                    batch.append(more)
                try:
                    items = self._check_batch([(table, topic, payload) for table, topic, payload in batch])
                except Exception:  # one bad batch must never stop ingestion
                    log.exception("director: failed to check a batch of messages")
                    for _ in batch:
                        self._intake.done()
                    continue
                self._checked.put(items)
        finally:
            self._checked.put(None)

    def _check_batch(self, batch: list[tuple[int, str, bytes]]) -> list[_Item]:
        """Each message with its checks (outbox messages) or as it came (the rest)."""
        items: list[_Item] = []
        jobs: list[tuple[int, bytes, tuple[int, str | None, str, str]]] = []
        for table, topic, payload in batch:
            if topic.rsplit("/", 1)[-1] != "out" or isinstance(payload, _Dropped):
                items.append(_Item(table, topic, payload))
                continue
            items.append(_Item(table, topic, payload, len(jobs)))
            jobs.append((table, payload, self.director.ingestion.check_args(table)))
        if self._pool is not None and len(jobs) > 1:
            n = self._check_workers
            futures: list[Future[list[Checked]]] = [self._pool.submit(_check_many, jobs[i::n]) for i in range(n)]
            done = [f.result() for f in futures]
            checked = [done[i % n][i // n] for i in range(len(jobs))]
        else:
            checked = _check_many(jobs)
        for item in items:
            if item.job >= 0:
                item.checked = checked[item.job]
        return items

    def _store_work(self) -> None:
        """The storer: each checked batch in one transaction, acknowledged after its commit."""
        while True:
            items = self._checked.get()
            if items is None:
                return
            try:
                self._handle_batch(items)
            except Exception:  # one bad batch must never stop ingestion
                log.exception("director: failed to handle a batch of messages")
            finally:
                for _ in items:
                    self._intake.done()

    def _handle_batch(self, items: list[_Item]) -> None:
        """Checked outbox messages go to :meth:`.ingestion.Ingestion.store` (one
        commit); everything else is handled alone, in arrival order."""
        stored = [it for it in items if it.checked is not None]
        for it in items:
            if it.checked is None:
                self._handle(it.topic, it.payload)
        if not stored:
            return
        acks = self.director.ingestion.store([(it.table, it.checked, len(it.payload)) for it in stored if it.checked])
        for it, ack in zip(stored, acks, strict=True):
            self.stats.received += 1
            self._acknowledge(it.table, ack)

    def _acknowledge(self, table: int, ack: Ack) -> None:
        if ack.status == "accepted":
            self.stats.accepted += 1
        elif ack.status == "duplicate":
            self.stats.duplicates += 1
        else:
            self.stats.refused += 1
            self.stats.refusals.append((table, ack.key, ack.reason))
            if len(self.stats.refusals) > 1000:  # a flood must not grow the director's memory
                del self.stats.refusals[:-1000]
        with self._notice_lock:  # after the message's queued notice, never before it
            self._client.publish(proto.ack_topic(table), json.dumps(ack.to_json()), qos=1)
        if self._on_ack is not None:
            self._on_ack(table, ack)

    def _watch(self, interval: float = 1.0) -> None:
        """Flag tables that went quiet (offline, or silent too long) mid-round, once each."""
        while not self._stopping.wait(interval):
            try:
                self.check_quiet()
                self.director.flush_audit_budget()
            except Exception:  # the watchdog must outlive a database hiccup
                log.exception("director: quiet-table check failed")

    def check_quiet(self, now: float | None = None) -> set[int]:
        """Audit every table newly quiet since the last check; returns the quiet set.

        A director that has just (re)started has heard no heartbeat yet, and
        the tables' retained statuses are still on their way: for a grace of
        ``quiet_after_s`` after ``start()`` nobody is called quiet, then only
        the tables that stayed silent through it."""
        now = time.time() if now is None else now
        grace = float(self.director.options().get("quiet_after_s", 10.0))
        if now - self._started < grace:
            return set()
        with self._quiet_lock:
            now_quiet = set(self.director.quiet_tables(now))
            for t in sorted(now_quiet - self.quiet):
                self.director.audit("director", "table-quiet", table=t, round=self.director.current_round_no())
                log.warning("table %d has gone quiet", t)
            self.quiet = now_quiet
            return now_quiet

    def _handle(self, topic: str, payload: bytes) -> None:
        table = proto.table_from_topic(topic)
        if table is None:
            return
        leaf = topic.rsplit("/", 1)[-1]
        if leaf == "status":
            text = payload.decode(errors="replace").strip()
            self.director.table_seen(table, online=(text == proto.STATUS_ONLINE))
            if text != proto.STATUS_ONLINE:
                self.check_quiet()
            return
        if leaf == "heartbeat":
            self.director.table_seen(table)
            return
        if leaf != "out":
            return
        self.stats.received += 1
        if isinstance(payload, _Dropped):
            ack = self.director.refuse_raw(
                table, f"malformed message: message of {payload.size} bytes is over the limit of {proto.MAX_MESSAGE_BYTES}",
                b"", sha256=payload.sha256, size=payload.size)
        else:
            try:
                message = proto.parse_message(payload)
            except proto.MessageError as exc:
                ack = self.director.refuse_raw(table, f"malformed message: {exc}", payload)
            else:
                ack = self.director.ingest(table, message, len(payload))
        self._acknowledge(table, ack)


@dataclass
class _Item:
    """One message of a batch: an outbox message carries its checks."""

    table: int
    topic: str
    payload: bytes
    job: int = -1
    checked: Checked | None = None


def _check_many(jobs: list[tuple[int, bytes, tuple[int, str | None, str, str]]]) -> list[Checked]:
    """:func:`.checks.check_raw` of several messages (one call to a pool worker)."""
    return [check_raw(payload, table, *args) for table, payload, args in jobs]


class _Dropped(bytes):
    """An oversized payload reduced to its SHA-256 and size (the bytes are gone)."""

    sha256: str
    size: int

    @classmethod
    def of(cls, payload: bytes) -> _Dropped:
        d = cls(b"")
        d.sha256 = hashlib.sha256(payload).hexdigest()
        d.size = len(payload)
        return d


def wait_until(pred: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    """Poll ``pred`` until true or ``timeout`` seconds pass."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(interval)
    return pred()
