"""What the coach said to each seat, kept for that seat's own page.

The coach's suggestion travels as the private part of a ``coach`` event
(:mod:`tablesense.referee.coaching`): no public channel carries it. A page
that belongs to one seat (the table-top page of ``demo --sit``, the seat page
of ``play --coach``) reads it from here, keyed by the seat: the latest hint,
until any move or a new hand makes it stale, and the last hand's review as
that seat may read it (``hand_ended``'s private ``reviews``: its own moves'
tiles named, the others' as the display shows them).
"""

from __future__ import annotations

import threading
from typing import Any

from tablesense.outputs.events import TableEvent

__all__ = ["HINT_FIELDS", "CoachHints"]

#: The parts of a hint a seat's page draws: the sentence and the best
#: options, the piece to play and where it goes (``end``: left, right or
#: center; Kems: the board card to ``take``).
HINT_FIELDS = ("piece", "end", "take")


class CoachHints:
    """Each seat's latest hint and last review, from the bus (call
    :meth:`follow` for every event). Thread-safe: the bus calls it in the
    referee's thread, pages read from theirs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hints: dict[int, dict[str, Any]] = {}
        self._reviews: dict[int, dict[str, Any]] = {}

    def follow(self, ev: TableEvent) -> None:
        private = ev.data.get("private")
        if ev.kind == "coach":
            seat = private.get("seat") if isinstance(private, dict) else None
            if not isinstance(seat, int) or not isinstance(private, dict):
                return
            hint: dict[str, Any] = {
                "text": str(private.get("text") or ""),
                "options": list(private.get("options") or []),
                "hand_no": ev.data.get("hand_no"),
            }
            hint.update({k: str(private[k]) for k in HINT_FIELDS if private.get(k) is not None})
            with self._lock:
                self._hints[seat] = hint
            return
        if ev.kind in ("move_accepted", "hand_started", "hand_ended", "match_started"):
            with self._lock:
                self._hints.clear()
        if ev.kind == "match_started":
            with self._lock:
                self._reviews.clear()
        if ev.kind == "hand_ended" and isinstance(private, dict):
            for item in private.get("reviews") or []:
                if isinstance(item, dict) and isinstance(item.get("seat"), int):
                    with self._lock:
                        self._reviews[item["seat"]] = {
                            "hand_no": ev.data.get("hand_no"),
                            "lines": [str(x) for x in item.get("lines") or []],
                        }

    def copy(self) -> CoachHints:
        """A snapshot that a live stream goes on feeding with its own events:
        a subscriber is handed an event before the bus's listeners have seen
        it, so a page that read the shared hints at that moment could miss
        the hint its event brought. Taken after subscribing, the copy may
        already hold an event's effect that the stream then brings again;
        following it twice, in order, ends in the same state."""
        twin = CoachHints()
        with self._lock:
            twin._hints = {k: dict(v) for k, v in self._hints.items()}
            twin._reviews = {k: {**v, "lines": list(v["lines"])} for k, v in self._reviews.items()}
        return twin

    def hint(self, seat: int) -> dict[str, Any] | None:
        with self._lock:
            hint = self._hints.get(seat)
            return dict(hint) if hint is not None else None

    def review(self, seat: int) -> dict[str, Any] | None:
        with self._lock:
            review = self._reviews.get(seat)
            return None if review is None else {**review, "lines": list(review["lines"])}
