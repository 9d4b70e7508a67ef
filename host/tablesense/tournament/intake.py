"""The director's intake: per-table token buckets and bounded queues, served in turn.

Everything a table publishes arrives on paho's one network thread. Before a
byte of it is parsed, :meth:`Intake.offer` charges the table's token bucket
(one token a message plus one per whole 64 kB, so a flood of large
messages runs dry first) and checks the table's own queue (messages and
bytes) and the total of all queues; whatever does not fit is shed, counted
and never acknowledged, so a genuine table simply re-sends it later. The
worker takes one message from each table with work in turn (round robin), so
a table that floods waits behind itself only: another table's message is at
most one message per busy table away from being answered.

A re-send of a message still waiting in its table's queue is not queued
twice (the one waiting is answered, and the ack names the same key and
digest), so a table that re-sends while the director is busy adds no work.

A shed message costs the director nothing but the count: memory stays under
``TOTAL_QUEUE_BYTES`` plus what paho holds for the message in hand.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field

#: Sustained rate of one table: tokens a second (a real table sends a few
#: messages a minute, and a heartbeat a second outside the bucket).
TOKENS_PER_S = 20.0
#: A table's burst: what it may send at once after a quiet spell (a table
#: back from a broken link empties its outbox at once).
BURST_TOKENS = 60.0
#: A table's live progress (QoS 0, the latest wins): a move every 20 ms at most.
LIVE_TOKENS_PER_S = 50.0
#: A message costs one token plus one for every whole ``TOKEN_BYTES`` it holds.
TOKEN_BYTES = 65536
#: One table's queue: at most this many messages and bytes wait.
TABLE_QUEUE_MESSAGES = 64
TABLE_QUEUE_BYTES = 4 * 1024 * 1024
#: All tables' queues together.
TOTAL_QUEUE_BYTES = 64 * 1024 * 1024


def message_cost(size: int) -> float:
    """Tokens a message of ``size`` bytes costs."""
    return 1.0 + size // TOKEN_BYTES


@dataclass
class TokenBucket:
    """``rate`` tokens a second up to ``burst``; :meth:`take` spends or refuses."""

    rate: float = TOKENS_PER_S
    burst: float = BURST_TOKENS
    tokens: float = BURST_TOKENS
    stamp: float = field(default_factory=time.monotonic)

    def take(self, cost: float, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < cost:
            return False
        self.tokens -= cost
        return True


@dataclass
class _TableQueue:
    bucket: TokenBucket
    items: deque[tuple[str, bytes]] = field(default_factory=deque)
    bytes: int = 0
    shed: int = 0
    waiting: set[bytes] = field(default_factory=set)  # payloads queued now (a re-send of one is not queued again)


class Intake:
    """Bounded, fair queues of (topic, payload) per table; thread-safe.

    ``offer`` never blocks (it runs on the network thread); ``take`` blocks
    the worker until something is queued or :meth:`close` is called.
    """

    def __init__(self, *, rate: float = TOKENS_PER_S, burst: float = BURST_TOKENS) -> None:
        self._rate = rate
        self._burst = burst
        self._tables: dict[int, _TableQueue] = {}
        self._ready: deque[int] = deque()  # tables with queued messages, in serving order
        self._bytes = 0
        self._pending = 0  # queued or being handled
        self._closed = False
        self._cond = threading.Condition()
        self.shed = 0
        """Messages refused for want of tokens or room (never acknowledged: re-sent)."""
        self.coalesced = 0
        """Re-sends of a message that was still queued (answered once, with the queued one)."""

    def _table(self, table: int) -> _TableQueue:
        q = self._tables.get(table)
        if q is None:
            q = self._tables[table] = _TableQueue(TokenBucket(self._rate, self._burst, self._burst))
        return q

    def offer(self, table: int, topic: str, payload: bytes, size: int | None = None) -> bool:
        """Queue one message of ``table``'s unless its bucket is dry or its queue
        (or all queues) full; ``size``: the bytes it arrived with (an oversized
        payload is offered already reduced to its digest)."""
        n = len(payload) if size is None else size
        with self._cond:
            q = self._table(table)
            outbox = topic.endswith("/out")  # a status must keep its order: only outbox messages are merged
            if outbox and payload and payload in q.waiting:
                # A table re-sending while its message still waits here: the one
                # queued will be answered (the ack names the same key and digest).
                self.coalesced += 1
                return True
            kept = len(payload)
            if (self._closed or not q.bucket.take(message_cost(n)) or len(q.items) >= TABLE_QUEUE_MESSAGES
                    or q.bytes + kept > TABLE_QUEUE_BYTES or self._bytes + kept > TOTAL_QUEUE_BYTES):
                q.shed += 1
                self.shed += 1
                return False
            if not q.items:
                self._ready.append(table)
            q.items.append((topic, payload))
            if outbox and payload:
                q.waiting.add(payload)
            q.bytes += kept
            self._bytes += kept
            self._pending += 1
            self._cond.notify()
            return True

    def take(self, timeout: float | None = None) -> tuple[int, str, bytes] | None:
        """The next message in turn (table, topic, payload); None when closed or on timeout.
        Call :meth:`done` once it is handled."""
        with self._cond:
            if not self._cond.wait_for(lambda: bool(self._ready) or self._closed, timeout) or not self._ready:
                return None
            table = self._ready.popleft()
            q = self._tables[table]
            topic, payload = q.items.popleft()
            q.waiting.discard(payload)
            q.bytes -= len(payload)
            self._bytes -= len(payload)
            if q.items:
                self._ready.append(table)
            return table, topic, payload

    def done(self) -> None:
        with self._cond:
            self._pending -= 1

    def idle(self) -> bool:
        """True when nothing is queued or being handled."""
        with self._cond:
            return self._pending == 0

    def queued_bytes(self) -> int:
        with self._cond:
            return self._bytes

    def shed_by_table(self) -> dict[int, int]:
        with self._cond:
            return {t: q.shed for t, q in self._tables.items() if q.shed}

    def close(self, *, drop: bool = False) -> None:
        """Wake the worker for good; ``drop`` forgets what is queued (a crash)."""
        with self._cond:
            self._closed = True
            if drop:
                for q in self._tables.values():
                    self._pending -= len(q.items)
                    q.items.clear()
                    q.waiting.clear()
                    q.bytes = 0
                self._ready.clear()
                self._bytes = 0
            self._cond.notify_all()
