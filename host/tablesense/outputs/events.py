"""The table's event stream: one bus, many subscribers.

Everything the players see (cell LEDs, seat LEDs, the display page, a phone, a
spectator screen, the tournament's live page) is driven from one stream of
:class:`TableEvent` objects published by the referee and the link. Each output is
just another subscriber, so adding a second display changes nothing upstream.

Design points (why, not only what):

- Publishing never blocks the referee: every subscriber owns a bounded queue;
  when a slow subscriber's queue is full its *oldest* event is dropped and
  counted (``Subscription.dropped``). ``view`` events carry the whole display
  state, so losing an old one never leaves a page wrong.
- Late subscribers (a page opened mid-match) first receive the latest ``view``
  (and the latest ``board_status`` per board), so they can draw at once.
- Event data is copied through JSON at publish time: a subscriber can never see
  a later mutation by the publisher, and a non-JSON value is refused at its
  source with a clear message instead of breaking a WebSocket far away.
- Subscribers are consumed either synchronously (``get(timeout)``, iteration) or
  from asyncio (``async for ev in sub``); the bus is thread-safe and the asyncio
  side is woken with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "EVENT_KINDS",
    "PRIVATE_KEY",
    "PRIVATE_KINDS",
    "BusClosed",
    "EventBus",
    "Subscription",
    "TableEvent",
    "public_event",
]

log = logging.getLogger(__name__)

#: The kinds the referee and link publish (CONTRACTS section 6). Other kinds are
#: allowed (rooms may add their own), these are the documented ones.
EVENT_KINDS: tuple[str, ...] = (
    "match_started",
    "hand_started",
    "move_accepted",
    "move_rejected",
    "correction_cleared",
    "suggestion",
    "call",
    "hand_ended",
    "match_ended",
    "board_status",
    "message",
    "view",
)


#: Kinds that never leave the table's own devices (LEDs, the demo's virtual
#: hands): a computer seat's next move names the piece it holds.
PRIVATE_KINDS: frozenset[str] = frozenset({"suggestion"})

#: The data key that holds what only one seat (or the table's own devices) may
#: know: a drawn tile, the deal, the full text of a refused pass. Public
#: channels drop it (:func:`public_event`).
PRIVATE_KEY = "private"


def public_event(ev: TableEvent) -> TableEvent | None:
    """The event as a public channel (the display page, ``/ws``, ``/events``,
    ``/api/history``, a phone, a spectator screen) may carry it: None for a
    private kind, else the event without its :data:`PRIVATE_KEY` data.

    The publisher puts everything a seat must not see from another seat under
    that key, so this filter is the single place where private and public
    part (the events are still the same stream, in the same order).
    """
    if ev.kind in PRIVATE_KINDS:
        return None
    if PRIVATE_KEY not in ev.data:
        return ev
    data = {k: v for k, v in ev.data.items() if k != PRIVATE_KEY}
    return TableEvent(ev.kind, data, ev.seq, ev.ts)


class BusClosed(RuntimeError):
    """Raised when publishing to (or subscribing to) a closed bus."""


@dataclass(frozen=True)
class TableEvent:
    """One thing that happened at the table.

    ``seq`` increases by one per event on a bus (gaps seen by a subscriber mean
    it dropped events because it was too slow); ``ts`` is the bus clock's time
    (seconds, ``time.time`` by default) when it was published.
    """

    kind: str
    data: dict[str, Any]
    seq: int
    ts: float

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON-able dict (the form sent to web clients)."""
        return {"kind": self.kind, "data": self.data, "seq": self.seq, "ts": self.ts}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> TableEvent:
        """Rebuild an event from :meth:`to_json` output (e.g. a recorded stream)."""
        try:
            return cls(
                kind=str(obj["kind"]),
                data=dict(obj["data"]),
                seq=int(obj["seq"]),
                ts=float(obj["ts"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a table event: {obj!r} ({exc})") from None


# --------------------------------------------------------------------------- subscription


class Subscription:
    """A subscriber's queue of events.

    Obtain from :meth:`EventBus.subscribe`. Use ``get(timeout)`` from a thread, or
    ``async for event in sub`` from asyncio. ``close()`` is idempotent and
    detaches from the bus; a closed subscription's ``get`` returns ``None`` and
    its iterators stop.
    """

    def __init__(
        self,
        bus: EventBus,
        kinds: frozenset[str] | None,
        maxsize: int,
    ) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be >= 1, got {maxsize}")
        self._bus = bus
        self.kinds = kinds
        self.maxsize = maxsize
        self._queue: deque[TableEvent] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self.dropped = 0
        # asyncio waiters: (loop, future) pairs woken from the publishing thread.
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    # -- producer side (called by the bus, under no bus lock) ------------------

    def wants(self, kind: str) -> bool:
        return self.kinds is None or kind in self.kinds

    def _push(self, event: TableEvent) -> None:
        with self._cond:
            if self._closed:
                return
            if len(self._queue) >= self.maxsize:
                self._queue.popleft()
                self.dropped += 1
            self._queue.append(event)
            self._cond.notify_all()
            waiters, self._waiters = self._waiters, []
        self._wake(waiters)

    def _end(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            waiters, self._waiters = self._waiters, []
        self._wake(waiters)

    @staticmethod
    def _wake(waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]) -> None:
        for loop, fut in waiters:
            # A closed loop raises RuntimeError: nobody is waiting there any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_resolve, fut)

    # -- consumer side ----------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def pending(self) -> int:
        """How many events wait in the queue."""
        with self._cond:
            return len(self._queue)

    def get(self, timeout: float | None = None) -> TableEvent | None:
        """The next event, waiting up to ``timeout`` seconds (None = forever).

        Returns ``None`` on timeout or when the subscription (or bus) is closed
        and nothing is left in the queue.
        """
        with self._cond:
            self._cond.wait_for(lambda: bool(self._queue) or self._closed, timeout)
            if not self._queue:
                return None
            return self._queue.popleft()

    def get_nowait(self) -> TableEvent | None:
        """The next event if one is queued, else ``None``."""
        with self._cond:
            return self._queue.popleft() if self._queue else None

    def drain(self) -> list[TableEvent]:
        """Every queued event, oldest first, without waiting."""
        with self._cond:
            items = list(self._queue)
            self._queue.clear()
            return items

    def __iter__(self) -> Iterator[TableEvent]:
        """Blocking iteration until the subscription is closed."""
        while True:
            ev = self.get()
            if ev is None:
                return
            yield ev

    async def aget(self, timeout: float | None = None) -> TableEvent | None:
        """Asyncio counterpart of :meth:`get` (never blocks the event loop)."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            with self._cond:
                if self._queue:
                    return self._queue.popleft()
                if self._closed:
                    return None
                fut: asyncio.Future[None] = loop.create_future()
                self._waiters.append((loop, fut))
            try:
                if deadline is None:
                    await fut
                else:
                    remaining = deadline - loop.time()
                    if remaining <= 0:
                        return None
                    await asyncio.wait_for(fut, remaining)
            except TimeoutError:
                with self._cond:
                    self._waiters = [w for w in self._waiters if w[1] is not fut]
                    if self._queue:
                        return self._queue.popleft()
                return None
            except asyncio.CancelledError:
                with self._cond:
                    self._waiters = [w for w in self._waiters if w[1] is not fut]
                raise

    def __aiter__(self) -> AsyncIterator[TableEvent]:
        return self._aiter()

    async def _aiter(self) -> AsyncIterator[TableEvent]:
        while True:
            ev = await self.aget()
            if ev is None:
                return
            yield ev

    def close(self) -> None:
        """Detach from the bus; idempotent. Events already queued can still be read."""
        if self._closed:
            return
        self._bus._unsubscribe(self)
        self._end()

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        kinds = "all" if self.kinds is None else sorted(self.kinds)
        return f"<Subscription kinds={kinds} pending={self.pending()} dropped={self.dropped}>"


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


# --------------------------------------------------------------------------- bus

Listener = Callable[[TableEvent], None]


@dataclass
class _Replay:
    """What a late subscriber is told first: the latest view and board states."""

    view: TableEvent | None = None
    boards: dict[Any, TableEvent] = field(default_factory=dict)

    def events(self) -> list[TableEvent]:
        evs = sorted(self.boards.values(), key=lambda e: e.seq)
        if self.view is not None:
            evs.append(self.view)
        return evs


class EventBus:
    """A thread-safe publish/subscribe hub for :class:`TableEvent`.

    ``publish(kind, **data)`` may be called from any thread. Subscribers are
    queues (:meth:`subscribe`) or inline listeners (:meth:`add_listener`, called
    in the publisher's thread: keep them quick; an exception in a listener is
    logged and never reaches the publisher). ``history`` keeps the last
    ``history_size`` events for diagnostics and tests.
    """

    def __init__(
        self,
        *,
        history_size: int = 500,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._lock = threading.RLock()
        self._subs: list[Subscription] = []
        self._listeners: list[Listener] = []
        self._seq = 0
        self._clock = clock
        self._history: deque[TableEvent] = deque(maxlen=history_size)
        self._replay = _Replay()
        self._closed = False

    # -- publishing ------------------------------------------------------------

    def publish(self, kind: str, /, **data: Any) -> TableEvent:
        """Publish one event to every subscriber and listener; returns it.

        Raises ``TypeError`` when ``data`` is not JSON-able (the message names the
        kind), ``ValueError`` on an empty kind, :class:`BusClosed` after close().
        """
        if not kind or not isinstance(kind, str):
            raise ValueError(f"event kind must be a non-empty string, got {kind!r}")
        try:
            copied = json.loads(json.dumps(data, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise TypeError(f"event {kind!r} data is not JSON-able: {exc}") from None
        with self._lock:
            if self._closed:
                raise BusClosed(f"cannot publish {kind!r}: the event bus is closed")
            self._seq += 1
            event = TableEvent(kind, copied, self._seq, float(self._clock()))
            self._history.append(event)
            if kind == "view":
                self._replay.view = event
            elif kind == "board_status":
                self._replay.boards[copied.get("board")] = event
            # Delivery happens under the bus lock so that every subscriber sees
            # events in seq order even with several publishing threads. Pushing
            # is O(1) and never blocks (bounded queues drop their oldest).
            subs = [s for s in self._subs if s.wants(kind)]
            listeners = list(self._listeners)
            for sub in subs:
                sub._push(event)
            for fn in listeners:
                try:
                    fn(event)
                except Exception:  # a broken output must never stop the referee
                    log.exception("event listener %r failed on %s", fn, kind)
        return event

    def publish_event(self, event: TableEvent) -> TableEvent:
        """Re-publish a recorded event's kind and data (a new seq and ts)."""
        return self.publish(event.kind, **event.data)

    # -- subscribing -----------------------------------------------------------

    def subscribe(
        self,
        kinds: Iterable[str] | None = None,
        *,
        replay: bool = True,
        maxsize: int = 1000,
    ) -> Subscription:
        """A new queue subscriber.

        ``kinds`` limits the kinds delivered (None = all). With ``replay`` (the
        default) the latest ``board_status`` per board and the latest ``view``
        are queued first, so a late display can draw at once.
        """
        kind_set = None if kinds is None else frozenset(kinds)
        sub = Subscription(self, kind_set, maxsize)
        with self._lock:
            if self._closed:
                raise BusClosed("cannot subscribe: the event bus is closed")
            if replay:
                for ev in self._replay.events():
                    if sub.wants(ev.kind):
                        sub._push(ev)
            self._subs.append(sub)
        return sub

    def add_listener(self, fn: Listener, *, replay: bool = False) -> Callable[[], None]:
        """Call ``fn(event)`` in the publisher's thread for every event.

        Returns a function that removes the listener (idempotent).
        """
        with self._lock:
            if replay:
                for ev in self._replay.events():
                    try:
                        fn(ev)
                    except Exception:
                        log.exception("event listener %r failed on replay of %s", fn, ev.kind)
            self._listeners.append(fn)

        def remove() -> None:
            with self._lock:
                if fn in self._listeners:
                    self._listeners.remove(fn)

        return remove

    def _unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            if sub in self._subs:
                self._subs.remove(sub)

    # -- state -----------------------------------------------------------------

    @property
    def history(self) -> list[TableEvent]:
        """The most recent events, oldest first (a copy)."""
        with self._lock:
            return list(self._history)

    def latest(self, kind: str) -> TableEvent | None:
        """The most recent event of ``kind`` still in the history (``view`` always)."""
        with self._lock:
            if kind == "view":
                return self._replay.view
            for ev in reversed(self._history):
                if ev.kind == kind:
                    return ev
        return None

    @property
    def view(self) -> dict[str, Any] | None:
        """The data of the latest ``view`` event (the whole display state)."""
        ev = self.latest("view")
        return None if ev is None else ev.data

    @property
    def seq(self) -> int:
        """The seq of the last published event (0 before any)."""
        return self._seq

    @property
    def subscriber_count(self) -> int:
        with self._lock:
            return len(self._subs)

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """End every subscription (their readers see the end) and refuse new events.

        Idempotent.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            subs, self._subs = self._subs, []
            self._listeners.clear()
        for sub in subs:
            sub._end()

    def __enter__(self) -> EventBus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<EventBus seq={self._seq} subscribers={self.subscriber_count}>"
