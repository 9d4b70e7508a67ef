"""The session: link -> referee -> journal -> event bus, and the match's pace.

A :class:`Session` owns one :class:`~tablesense.referee.core.Referee` and is the
only thread that touches it. Everything else reaches it through a queue:
table states from the link (only the latest one matters: the snapshot is the
truth), seat and referee buttons from GPIO or the demo's hands, board status
changes. Each :meth:`Session.step` drains the queue, lets the referee judge,
then asks the computer seats for their moves and publishes them as
``suggestion`` events (any person, or the demo's virtual hands, then places
the piece), and paints the cell LEDs.

Computer players decide from a seeded generator derived from the match seed,
the hand and the move number, so the same position always gets the same
decision, whatever the timing: a demo match is reproducible, and a match
resumed from the journal after a crash continues exactly as it would have.
"""

from __future__ import annotations

import copy
import logging
import queue
import random
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from tablesense.referee.core import Referee, RefereeError
from tablesense.referee.hot import hot_cells
from tablesense.referee.layout import Sensed
from tablesense.referee.state import DealMode, Phase

log = logging.getLogger(__name__)

RGB = tuple[int, int, int]
RED: RGB = (90, 0, 0)
BLUE: RGB = (0, 0, 90)
GREEN: RGB = (0, 60, 0)
WHITE: RGB = (20, 20, 20)


class Session:
    """Drives one match; see the module docstring."""

    def __init__(
        self,
        referee: Referee,
        source: Any,
        bus: Any,
        *,
        bots: Mapping[int, Any] | None = None,
        seed: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        paint_leds: bool = True,
        idle_polls: int = 2,
    ) -> None:
        self.referee = referee
        self.source = source
        self.bus = bus
        self.bots = dict(bots or {})
        self.seed = seed if seed is not None else referee.spec.seed
        self.clock = clock
        self.paint_leds = paint_leds
        self.idle_polls = idle_polls
        self._inbox: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self._latest: Any = None
        self._lock = threading.Lock()
        self._unsubscribe: Callable[[], None] | None = None
        self._suggested: tuple[Any, ...] | None = None
        self._expect: int | None = None
        self._idle = 0
        self._setup_for: int | None = None
        self._suggest_cells: tuple[str, ...] = ()
        self._leds: dict[str, RGB] | None = None
        self.hands_done = 0
        self.hold: Callable[[], bool] | None = None
        """While it answers True the computer seats wait (``demo --sit``: the
        seated people's pages are not all open yet, or a hand's countdown
        runs); the deal is laid out all the same."""
        self.stall_refreshes = 8
        """Kems: after this many refreshes in a row with no swap, a seat swaps
        anyway (computer players that all wait would otherwise wait forever)."""

    def next_match(self, referee: Referee, bots: Mapping[int, Any] | None = None) -> None:
        """Drive the next match on the same table link and display (``play
        --director`` plays match after match): the per-match state starts afresh,
        the object stays the one the seat buttons and keyboard call."""
        self.detach()
        self.__init__(  # type: ignore[misc]  # same link, bus, clock and LED mode
            referee, self.source, self.bus, bots=bots, seed=self.seed, clock=self.clock,
            paint_leds=self.paint_leds, idle_polls=self.idle_polls,
        )

    # -- inputs (any thread) ---------------------------------------------------
    def attach(self) -> None:
        """Start listening to the table source."""
        self._unsubscribe = self.source.subscribe(self._on_state, self._on_status)
        self._on_state(self.source.state())

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _on_state(self, state: Any) -> None:
        with self._lock:
            self._latest = state
        self._inbox.put(("state",))

    def _on_status(self, status: Any) -> None:
        self._inbox.put(("status", status))

    def press(self, seat: int, button: str = "main") -> None:
        """A seat button (thread-safe)."""
        self._inbox.put(("press", seat, button))

    def referee_press(self) -> None:
        self._inbox.put(("referee",))

    # -- the loop ----------------------------------------------------------------
    def step(self, timeout: float = 0.05) -> None:
        """Handle what arrived (waiting up to ``timeout`` for something), let
        the referee judge, drive the computer seats, paint the LEDs."""
        items: list[tuple[Any, ...]] = []
        try:
            items.append(self._inbox.get(timeout=timeout))
            while True:
                items.append(self._inbox.get_nowait())
        except queue.Empty:
            pass
        try:
            self._handle(items)
        except RefereeError as exc:
            # the journal refused a write: nothing was accepted; say so and go on
            log.error("%s", exc)
            self.bus.publish("message", text=f"{exc}: check the disk", level="error")
        self._drive_bots()
        if self.paint_leds:
            self._paint()
        self._hint_hot()

    def _handle(self, items: list[tuple[Any, ...]]) -> None:
        ref = self.referee
        now = self.clock()
        fed = False
        for item in items:
            kind = item[0]
            if kind == "state" and not fed:
                with self._lock:
                    state = self._latest
                if state is not None:
                    ref.update(state, now)
                fed = True
            elif kind == "status":
                st = item[1]
                self.bus.publish(
                    "board_status",
                    board=getattr(st, "board", None),
                    online=bool(getattr(st, "online", False)),
                    message=str(getattr(st, "message", "")),
                )
            elif kind == "press":
                ref.press(item[1], item[2], now)
            elif kind == "referee":
                ref.referee_press(now)
        ref.tick(now)

    def run(self, stop: threading.Event, until: Callable[[Session], bool] | None = None) -> None:
        """Step until ``stop`` is set or ``until(self)`` is true."""
        while not stop.is_set():
            self.step()
            if until is not None and until(self):
                return

    # -- computer seats ------------------------------------------------------------
    def _quiet(self) -> bool:
        ref = self.referee
        s = ref.state.sensed
        if s is None or ref.state.phase is not Phase.PLAY or ref.hand is None or ref.state.paused:
            return False
        if ref.state.finish_at is not None or ref.state.correction is not None or ref.buttons.menu is not None:
            return False
        return ref.rules.layout().matches(s)

    def _rng(self, *parts: Any) -> random.Random:
        return random.Random(":".join(str(p) for p in (self.seed, *parts)))

    def _drive_bots(self) -> None:
        ref = self.referee
        self._maybe_setup()
        if self.hold is not None and self.hold():
            return
        if self.bots and ref.state.finish_at is not None:
            self._maybe_double()
            return
        if not self.bots or not self._quiet():
            return
        if self._expect is not None and ref.state.accepted < self._expect:
            return
        drive = self._drive_dominoes if ref.game.has_turns else self._drive_kems
        drive()

    def _maybe_setup(self) -> None:
        """Engine-dealt hands: ask for the deal to be laid out (the demo's hands
        do it; at a real table the lights show where each piece goes)."""
        ref = self.referee
        if ref.state.deal_mode is not DealMode.ENGINE or ref.state.phase is not Phase.PLAY or ref.hand is None:
            return
        # a resumed match is laid out again too (the demo's virtual table
        # restarts empty): the whole layout at once, not piece by asked piece
        if ref.state.hand_no == self._setup_for or (ref.accepted_in_hand() > 0 and not ref.state.resumed):
            return
        s = ref.state.sensed
        if s is None:
            return
        self._setup_for = ref.state.hand_no
        if ref.rules.layout().matches(s):
            return
        self.bus.publish("suggestion", kind="setup", hand_no=ref.state.hand_no, cells=setup_cells(ref, s))

    def _suggest(self, **data: Any) -> None:
        self._suggest_cells = tuple(
            c for c in (data.get("from_cell"), data.get("to_cell"), data.get("take_cell")) if c
        )
        self.bus.publish("suggestion", hand_no=self.referee.state.hand_no, **data)

    def _cell_of(self, piece: str) -> str | None:
        s = self.referee.state.sensed
        assert s is not None
        return next((c for c, p in s.pieces.items() if p == piece), None)

    def _drive_dominoes(self) -> None:
        ref = self.referee
        hand = ref.hand
        seat = hand.to_play
        if hand.is_over or seat not in self.bots:
            return
        key = (ref.state.hand_no, ref.state.accepted)
        if key == self._suggested:
            return
        self._suggested = key
        rng = self._rng("bot", ref.state.hand_no, ref.accepted_in_hand(), seat)
        move = self.bots[seat].choose(hand, seat, rng)
        name = type(move).__name__
        rules = ref.rules
        if name == "Play":
            end = rules.end_of(move)  # type: ignore[attr-defined]
            target = rules.target_cell(end) if hand.line else rules.line.center  # type: ignore[attr-defined]
            if target is None:
                # the arm ran out of cells on this table: try the other end
                alt = [
                    m
                    for m in hand.legal_moves(seat)
                    if type(m).__name__ == "Play" and rules.target_cell(rules.end_of(m)) is not None  # type: ignore[attr-defined]
                ]
                if not alt:
                    ref._say("the line has no free cell left on this table", "error")
                    return
                move = alt[0]
                target = rules.target_cell(rules.end_of(move))  # type: ignore[attr-defined]
            self._suggest(
                kind="play",
                seat=seat,
                piece=str(move.tile),
                end=move.end,
                from_cell=self._cell_of(str(move.tile)),
                to_cell=target,
            )
        elif name == "Draw":
            rack = ref.geometry.seats[seat].rack
            s = ref.state.sensed
            assert s is not None
            free = [c for c in rack if c not in s.pieces]
            self._suggest(
                kind="draw",
                seat=seat,
                piece=str(move.tile),
                from_cell=self._cell_of(str(move.tile)),
                to_cell=free[0] if free else None,
            )
        elif name == "Pass":
            self._suggest(kind="pass", seat=seat)
        elif name == "Announce":
            self._suggest(
                kind="announce",
                seat=seat,
                piece=str(move.tile),
                from_cell=self._cell_of(str(move.tile)),
            )

    def _maybe_double(self) -> None:
        """Right after a Kems call the caller's partner may say double."""
        ref = self.referee
        rnd = ref.hand
        if rnd is None or not ref.game.may_call_double(rnd):
            return
        partner = rnd.partner_of(rnd.events[-1].seat)
        key = (ref.state.hand_no, ref.state.accepted, "double")
        if partner not in self.bots or key == self._suggested:
            return
        self._suggested = key
        rng = self._rng("double", ref.state.hand_no, ref.accepted_in_hand())
        action = self.bots[partner].choose(rnd, partner, rng)
        if action is not None and type(action).__name__ == "Call" and action.kind == "double":
            self._suggest(kind="call", seat=partner, call="double", target=None)
            self._expect = ref.state.accepted + 1

    def _drive_kems(self) -> None:
        ref = self.referee
        rnd = ref.hand
        if rnd.is_over:
            return
        key = (ref.state.hand_no, ref.state.accepted, self._idle)
        if key == self._suggested:
            return
        self._suggested = key
        rng = self._rng("kems", ref.state.hand_no, ref.accepted_in_hand(), self._idle)
        order = list(range(rnd.seats))
        rng.shuffle(order)
        scratch = copy.deepcopy(rnd)
        swaps: list[dict[str, Any]] = []
        trailing = 0
        for event in reversed(rnd.events):
            if type(event).__name__ != "Refresh":
                break
            trailing += 1
        stalled = trailing >= self.stall_refreshes
        for seat in order:
            bot = self.bots.get(seat)
            if bot is None:
                continue
            if stalled:
                # nobody has wanted a card for several boards: a seat shakes
                # the game up with a swap of its choice, as players do
                bot = ref.game.player("random")
            action = bot.choose(scratch, seat, rng)
            if action is None:
                continue
            if type(action).__name__ == "Call":
                if swaps:
                    break  # the swaps already chosen go first; the call comes next poll
                self._idle = 0
                self._suggest(kind="call", seat=action.seat, call=action.kind, target=action.target)
                self._expect = ref.state.accepted + 1
                return
            if not scratch.is_legal(action) or action.take == action.give:
                continue
            slot = scratch.board.index(action.take)
            cell_from = self._cell_of(str(action.give))
            if cell_from is None or cell_from in {sw["from_cell"] for sw in swaps}:
                continue
            if str(action.take) not in {str(c) for c in rnd.board}:
                continue  # a card laid in this same poll: wait for it to land
            scratch.apply(action)
            swaps.append(
                {
                    "seat": seat,
                    "piece": str(action.give),
                    "take": str(action.take),
                    "from_cell": cell_from,
                    "to_cell": ref.geometry.kems_slots[slot],
                    "take_cell": ref.geometry.kems_slots[slot],
                }
            )
        if swaps:
            self._idle = 0
            group = f"{ref.state.hand_no}.{ref.state.accepted}"
            for i, sw in enumerate(swaps):
                self._suggest(kind="swap", group=group, index=i, size=len(swaps), **sw)
            self._expect = ref.state.accepted + len(swaps)
            return
        self._idle += 1
        if self._idle > self.idle_polls:
            self._idle = 0
            coming = [str(c) for c in rnd.stock[:4]]
            self._suggest(
                kind="refresh",
                cards=coming,
                old=[str(c) for c in rnd.board],
                slots=list(ref.geometry.kems_slots),
            )
            self._expect = ref.state.accepted + 1
            self._suggested = (ref.state.hand_no, ref.state.accepted, "refresh")

    # -- the boards' hot cells --------------------------------------------------------
    def _hint_hot(self) -> None:
        """Tell the boards which cells a legal move can touch (a source that
        cannot take the hint, a virtual or direct one, is left alone)."""
        send = getattr(self.source, "set_hot_cells", None)
        if send is None:
            return
        cells = hot_cells(self.referee)
        if cells != getattr(self, "_hot", None):
            self._hot = cells
            try:
                send(cells)
            except Exception as exc:  # noqa: BLE001 - a hint must never stop the match
                log.warning("hot cells not sent: %s", exc)

    # -- LEDs ------------------------------------------------------------------------
    def _paint(self) -> None:
        ref = self.referee
        colors: dict[str, RGB] = {}
        seat = ref.game.to_play(ref.hand) if ref.hand is not None else None
        if seat is not None:
            for c in ref.geometry.seats[seat].rack:
                colors[c] = WHITE
        if self._expect is None or ref.state.accepted < self._expect:
            for c in self._suggest_cells:
                colors[c] = BLUE
        problem = ref.state.correction or (ref.state.notice.rejection if ref.state.notice else None)
        if problem is not None:
            for c in problem.cells:
                if c in ref.geometry.cells:
                    colors[c] = RED
        if colors != self._leds:
            self._leds = colors
            try:
                self.source.set_leds(colors)
            except Exception as exc:  # noqa: BLE001 - a board going away must never stop the match
                log.warning("LED frame not sent: %s", exc)


def setup_cells(ref: Referee, sensed: Sensed) -> dict[str, str]:
    """Where each piece should lie for the referee's layout, keeping pieces
    that already lie in their group where they are."""
    layout = ref.rules.layout()
    out: dict[str, str] = {c: p for c, p in layout.exact.items() if p is not None}
    for group, pieces in layout.groups.values():
        placed = {c: p for c, p in sensed.pieces.items() if c in group.cells and p in pieces}
        out.update(placed)
        rest = sorted(pieces - set(placed.values()))
        free = [c for c in group.cells if c not in placed]
        for cell, piece in zip(free, rest, strict=False):
            out[cell] = piece
    return out
