"""Public pages rendered once per change of the event and served as the same bytes.

A thousand spectators reloading ``/standings`` during a final must not cost a
thousand standings computations, template renders or even database reads:
:class:`PageCache` reads the event's data version (the newest audit entry's
id, see :meth:`.audit.AuditTrail.data_version`) at most once per
``VERSION_TTL_S``, and keeps each rendered page (per path, language and
login state) until that version changes. A change shows within
``VERSION_TTL_S``; a render runs once however many requests wait for it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")

#: How stale the cache's idea of "the current data" may be (one indexed read per this).
VERSION_TTL_S = 0.5


class PageCache:
    """Values and rendered pages, each kept until the event's data changes."""

    def __init__(self, data_version: Callable[[], int], *, ttl_s: float = VERSION_TTL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._data_version = data_version
        self._ttl = ttl_s
        self._clock = clock
        self._version = (-1, -float("inf"))  # (version, when read)
        self._version_lock = threading.Lock()
        self._values: dict[Any, tuple[int, Any]] = {}
        self._locks: dict[Any, threading.Lock] = {}
        self._locks_lock = threading.Lock()
        self.renders = 0
        """How many values were computed (a test's and a benchmark's witness)."""

    def version(self) -> int:
        """The data version, read from the database at most once per TTL."""
        with self._version_lock:
            v, at = self._version
            now = self._clock()
            if now - at < self._ttl:
                return v
        fresh = self._data_version()
        with self._version_lock:
            self._version = (fresh, self._clock())
        return fresh

    def cached(self, key: Any) -> Any | None:
        """The value for ``key`` if it is of the current version (no computing)."""
        hit = self._values.get(key)
        return hit[1] if hit is not None and hit[0] == self.version() else None

    def get(self, key: Any, compute: Callable[[], _T]) -> _T:
        """``compute()`` once per data version for ``key``; callers waiting meanwhile get the same value."""
        version = self.version()
        hit = self._values.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]  # type: ignore[no-any-return]
        with self._locks_lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            hit = self._values.get(key)
            if hit is not None and hit[0] == version:
                return hit[1]  # type: ignore[no-any-return]
            value = compute()
            self.renders += 1
            self._values[key] = (version, value)
            return value
