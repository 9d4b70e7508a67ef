"""People at a remote match's virtual table: what the table-top page needs.

A virtual table of a remote match (``play --remote`` without ``--port``)
may seat people: each seat named in ``--seats`` that is not ``bot`` is played
by a person on the table-top page (``web/tabletop.py``, served by the remote
CLI). The page draws the virtual table itself (the pieces its seat may see,
the cells' lights, the seats' turn lights and buttons); this module gives it
the rest, from the table's :class:`~tablesense.remote.view.TableView` only,
so nothing reaches the page that the table's frames did not carry:

- :func:`turn_lights`: whose turn it is (public: the seat to play, or every
  seat that may open an empty line);
- :func:`banner`: the match's state in a sentence (dealing, waiting for the
  other table, paused, a hand scored, the match over, a refused move);
- :class:`SeatButtons`: the seat header the page presses: a person's *pass*
  button hands a pass (or a draw) to the table's side, which claims it when
  it is one of the seat's legal moves; the turn LEDs read
  :func:`turn_lights`;
- :class:`PageFinder`: before a match, the page's "play another table"
  (``play --remote page``): the person hosts a match (and reads its code
  out) or types the code the other table read out; the page then opens
  the person's seat.

A person plays a tile by lifting it from their rack and laying it on the
line's next cell (the table's sensors see it, the judge claims it); the
table's helper hands (the virtual hands) lay out each deal by its lights,
place the remote seats' pieces and put everything back in the stock after
a hand, as a person at a physical table would. The stock lies face down: a
seat's page may not lift a stock piece (``TableTop`` refuses it).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tablesense.remote.view import TableView
from tablesense.sentence import Sentence, say
from tablesense.table.geometry import TableGeometry

#: How long a refused move stays in the banner.
REFUSED_FOR_S = 6.0


def turn_lights(view: TableView, seats: int, legal: Sequence[Mapping[str, Any]]) -> list[bool]:
    """Each seat's turn light: a seat of this table while the authority's
    legal moves hold one of its moves (so a person is never invited to move
    before the deal lies on every table); another table's seat while it is
    to play (or, before a hand's first tile, may open). Dark between hands
    and while paused."""
    if view.hand == 0 or len(view.records) >= view.hand or view.paused or view.record is not None:
        return [False] * seats
    movers = set(view.openers) if not view.line and view.openers else {view.to_play}
    ours = {m.get("seat") for m in legal}
    return [s in ours if s in view.seats else s in movers for s in range(seats)]


def _score(view: TableView) -> str:
    return " – ".join(f"{p:g}" for p in view.score) if view.score else "0 – 0"


def banner(view: TableView, *, dealt: bool, placing: bool, refused: str | None,
           code: str | None = None) -> Sentence | None:
    """The page's banner for the match's state (None: the page says whose turn it is);
    ``code``: the match's code, said while the other table has not come (a host reads it out)."""
    if view.record is not None:
        return say("match over: {score}", score=_score(view))
    if view.paused:
        return say("paused: {tables} is away; the match resumes where it was when it is back",
                   tables=", ".join(view.paused))
    if view.hand == 0:
        if code:
            return say("waiting for the other table: match code {code}", code=code)
        return say("waiting for the other table")
    if len(view.records) >= view.hand:
        return say("hand {n} scored: {score}", n=view.hand, score=_score(view))
    if not dealt:
        return say("dealing: the lit pieces go to their racks (hand {n})", n=view.hand)
    if placing:
        return say("the other table played: its piece is being placed where it lights")
    if refused:
        return say("not accepted: {reason}", reason=refused)
    return None  # the page says whose turn it is


class SeatButtons:
    """The seat header of a remote match's virtual table (see the module
    docstring): ``press``, ``release_button`` and ``level`` by pin, as the
    table-top page's :class:`~tablesense.sim.hand.TableTop` drives a header."""

    kinds = ("pass",)
    """The buttons a person has at a remote match (the page shows only these)."""

    def __init__(self, geometry: TableGeometry, people: frozenset[int], on_pass: Callable[[int], None],
                 turns: Callable[[], list[bool]]) -> None:
        self._pass = {s.button_pin: s.index for s in geometry.seats if s.button_pin is not None}
        self._leds = {s.turn_led_pin: s.index for s in geometry.seats if s.turn_led_pin is not None}
        self.people = people
        self.on_pass = on_pass
        self.turns = turns

    def press(self, pin: int) -> None:
        seat = self._pass.get(pin)
        if seat is None:
            raise ValueError(say("at a remote match a seat's pass button is its only button"))
        if seat not in self.people:
            raise ValueError(say("a computer plays that seat"))
        self.on_pass(seat)

    def release_button(self, pin: int) -> None:
        return None

    def level(self, pin: int) -> bool:
        seat = self._leds.get(pin)
        flags = self.turns()
        return seat is not None and seat < len(flags) and flags[seat]


class Refusals:
    """The last refused move of this table, shown for :data:`REFUSED_FOR_S`."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._seen = 0
        self._last: tuple[str, float] | None = None

    def current(self, rejections: Sequence[str]) -> str | None:
        with self._lock:
            if len(rejections) > self._seen:
                self._seen = len(rejections)
                self._last = (rejections[-1], self.clock())
            if self._last is None or self.clock() - self._last[1] > REFUSED_FOR_S:
                return None
            return self._last[0]


def page_banner(side: Any, refusals: Refusals, translate: Callable[[object], str],
                code: str | None = None) -> Callable[[], dict[str, str] | None]:
    """The ``banner`` callable of the page's TableTop for a
    :class:`~tablesense.remote.match.TableSide`, in the table's language."""

    def current() -> dict[str, str] | None:
        view: TableView = side.view
        judge = side.judge
        level = "warn" if view.paused else "info"
        refused = refusals.current(side.rejections)
        said = banner(view, dealt=judge.dealt_hand >= view.hand, placing=judge.pending_place() is not None,
                      refused=refused, code=code)
        if said is None:
            return None
        if refused and view.record is None and not view.paused:
            level = "error"
        return {"text": translate(said), "level": level}

    return current


class PageFinder:
    """The table-top page's "play another table" before a match
    (``play --remote page``; the page is ``web/tabletop_find.py``).

    The page asks (:meth:`host`, :meth:`join` with a typed code); the table's
    process takes each ask in turn (:meth:`next`), looks the code up on the
    broker and answers: :meth:`refuse` with the sentence why (no match
    under that code, a table that is not the code's host), :meth:`searching`
    while it looks, :meth:`ready` with the people's seat addresses once the
    table plays a match. The page reads :meth:`view` and then opens the
    person's seat. Thread-safe: the page's requests and the table's loop
    run on different threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._asks: queue.Queue[tuple[str, str | None]] = queue.Queue()
        self._state = "choose"
        self._role: str | None = None
        self._code: str | None = None
        self._error: Sentence | str | None = None
        self._seats: list[dict[str, str]] = []

    def host(self) -> None:
        """The person hosts a match (ValueError once the table has one)."""
        with self._lock:
            self._check_free()
            self._state, self._error = "finding", None
        self._asks.put(("host", None))

    def join(self, text: str) -> str:
        """The person joins the match of the code ``text`` as typed (the code;
        ValueError with the sentence for a code that cannot be one)."""
        from tablesense.remote.wire import WireError, check_code

        try:
            code = check_code(text)
        except WireError as exc:
            raise ValueError(exc.args[0]) from None
        with self._lock:
            self._check_free()
            self._state, self._code, self._error = "finding", code, None
        self._asks.put(("join", code))
        return code

    def _check_free(self) -> None:
        if self._state == "ready":
            raise ValueError(say("this table plays match {code} already", code=self._code))
        if self._state == "finding":
            raise ValueError(say("the table is still looking for the last code: a moment"))

    def next(self, timeout: float) -> tuple[str, str | None] | None:
        """The page's next ask (``("host", None)`` or ``("join", CODE)``), or None."""
        try:
            return self._asks.get(timeout=timeout)
        except queue.Empty:
            return None

    def searching(self, code: str) -> None:
        with self._lock:
            self._state, self._code = "finding", code

    def refuse(self, why: Sentence | str) -> None:
        """The last ask did not lead to a match: the page says why and asks again."""
        with self._lock:
            self._state, self._error = "choose", why

    def ready(self, role: str, code: str, seats: Sequence[tuple[str, str]]) -> None:
        """The table plays match ``code`` as ``role``: each person's (name, seat address)."""
        with self._lock:
            self._state, self._role, self._code, self._error = "ready", role, code, None
            self._seats = [{"name": n, "url": u} for n, u in seats]

    def view(self, translate: Callable[[object], str]) -> dict[str, Any]:
        """What the page draws: ``state`` (choose, finding, ready), the code,
        the role, the last refusal (in the page's language), the seats."""
        with self._lock:
            return {"state": self._state, "role": self._role, "code": self._code,
                    "error": translate(self._error) if self._error is not None else None,
                    "seats": list(self._seats)}
