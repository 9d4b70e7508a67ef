"""Clocks for the outputs: real time on one timer thread, or a manual clock.

Debouncing, LED blinking and LED frame rate limiting all need "call this
later". They take a :class:`Scheduler`, so tests and the simulation drive time
with :class:`ManualScheduler.advance` instead of sleeping, and the real table
uses one :class:`ThreadScheduler` thread instead of a thread per timer.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["ManualScheduler", "Scheduler", "ThreadScheduler", "TimerHandle"]

log = logging.getLogger(__name__)


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Scheduler(Protocol):
    """The backend's clock: ``now()`` in seconds and ``call_later``."""

    def now(self) -> float: ...

    def call_later(self, delay: float, fn: Callable[[], None]) -> TimerHandle: ...


class _Entry:
    __slots__ = ("when", "order", "fn", "cancelled")

    def __init__(self, when: float, order: int, fn: Callable[[], None]) -> None:
        self.when = when
        self.order = order
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def __lt__(self, other: _Entry) -> bool:
        return (self.when, self.order) < (other.when, other.order)


class ThreadScheduler:
    """Real time: one daemon thread runs every timer of a backend in order.

    One thread rather than a ``threading.Timer`` per edge, because a bouncing
    contact makes tens of edges per press.
    """

    def __init__(self) -> None:
        self._heap: list[_Entry] = []
        self._cond = threading.Condition()
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._stopped = False

    def now(self) -> float:
        return time.monotonic()

    def call_later(self, delay: float, fn: Callable[[], None]) -> TimerHandle:
        entry = _Entry(self.now() + max(0.0, delay), next(self._order), fn)
        with self._cond:
            if self._stopped:
                raise RuntimeError("the clock is stopped")
            heapq.heappush(self._heap, entry)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="outputs-timers", daemon=True
                )
                self._thread.start()
            self._cond.notify()
        return entry

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopped and (not self._heap or self._heap[0].when > self.now()):
                    timeout = None if not self._heap else self._heap[0].when - self.now()
                    self._cond.wait(timeout)
                if self._stopped:
                    return
                entry = heapq.heappop(self._heap)
            if not entry.cancelled:
                try:
                    entry.fn()
                except Exception:
                    log.exception("timer callback failed")

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._heap.clear()
            self._cond.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(2)


class ManualScheduler:
    """A clock that moves only when told (tests and the simulation).

    ``advance(dt)`` runs every callback that falls due, in time order, with
    ``now()`` set to each callback's due time.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._heap: list[_Entry] = []
        self._order = itertools.count()
        self._lock = threading.RLock()

    def now(self) -> float:
        return self._now

    def call_later(self, delay: float, fn: Callable[[], None]) -> TimerHandle:
        with self._lock:
            entry = _Entry(self._now + max(0.0, delay), next(self._order), fn)
            heapq.heappush(self._heap, entry)
            return entry

    def advance(self, dt: float) -> None:
        if dt < 0:
            raise ValueError(f"cannot move the clock back ({dt})")
        with self._lock:
            end = self._now + dt
            while self._heap and self._heap[0].when <= end:
                entry = heapq.heappop(self._heap)
                self._now = max(self._now, entry.when)
                if not entry.cancelled:
                    entry.fn()
            self._now = end

    def pending(self) -> int:
        with self._lock:
            return sum(1 for e in self._heap if not e.cancelled)

    def stop(self) -> None:
        with self._lock:
            self._heap.clear()
