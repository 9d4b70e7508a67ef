"""The referee's buttons: a seat button (dominoes: pass, announce a double;
Kems: Kems, double, contre and its target) and the referee button's
undo / void menu, confirmed by any seat button.

A refused press is a *notice*: shown for a while, it never touches the
table's correction. The buttons are a part composed into the referee
(``referee.buttons``): they hold what a press leaves open (a contre waiting
for its target, an announced double waiting to be lifted, the referee's
question) and read the referee through :class:`PressedReferee`.
"""

from __future__ import annotations

from typing import Any, Protocol

from tablesense.games.common import IllegalPlayError, say
from tablesense.referee.facts import RefereeFacts
from tablesense.referee.layout import Layout, Sensed
from tablesense.referee.rules import DELAY_NOW, Rejection, TableMove
from tablesense.referee.spec import Emit, RefereeError
from tablesense.referee.state import MenuQuestion, Phase, SeatWindow
from tablesense.referee.view import TableDisplay, _num


class _Coach(Protocol):
    def press(self, seat: int, now: float) -> None: ...


class _Journal(Protocol):
    def commit(self, entry: dict[str, Any]) -> None: ...

    def next_hand(self, now: float) -> None: ...


class PressedReferee(RefereeFacts, Protocol):
    """What the buttons read of the referee they are part of, and what they
    ask of it: to judge the table now, to accept a move, to hold the table
    as it is, and its journal to journal an entry and to deal next."""

    @property
    def coaching(self) -> _Coach: ...

    @property
    def journal(self) -> _Journal: ...

    @property
    def display(self) -> TableDisplay: ...

    @property
    def _emit(self) -> Emit: ...

    def _notice(self, rejection: Rejection) -> None: ...

    def _reject(self, rejection: Rejection) -> None: ...

    def _say(self, text: str | None, level: str = "info", about: str | None = None) -> None: ...

    def _restore(self) -> None: ...

    def _per_deal(self, hand: str, round: str) -> str: ...

    def engine_text(self, message: object) -> str: ...

    def _evaluate_now(self, now: float) -> None: ...

    def _accept(self, tm: TableMove, now: float) -> bool: ...

    def _hold_table(self) -> None: ...

class TableButtons:
    """Seat and referee buttons (``referee.buttons``)."""

    def __init__(self, referee: PressedReferee) -> None:
        self.ref = referee
        self.contre: SeatWindow | None = None
        """Kems: a contre waiting for the button of the seat it names."""
        self.announce: SeatWindow | None = None
        """Dominoes: an announced double waiting to be lifted from the rack."""
        self.menu: MenuQuestion | None = None
        """The referee button's open question (undo or void)."""

    def press(self, seat: int, button: str, now: float) -> None:
        """A seat button: ``main`` (dominoes: pass; Kems: Kems / double / the
        target of a contre), ``call`` (dominoes: announce a double; Kems:
        contre, then the target seat's button) or ``coach`` (a long press of
        the seat button, or the seat's page: the coach's suggestion for that
        seat, :mod:`.coaching`)."""
        if not 0 <= seat < len(self.ref.spec.seat_names):
            return
        if button == "coach":
            # a long press asks the coach; it never confirms the referee's menu
            self.ref.coaching.press(seat, now)
            return
        if self.menu is not None:
            self._confirm_menu(seat, now)
            return
        if self.ref.state.phase is not Phase.PLAY or self.ref.hand is None:
            if self.ref.state.phase is Phase.DEALING:
                text = self.ref._per_deal(
                    hand=say("no hand is being played yet: first shuffle and deal (each player's pieces on their rack)"),
                    round=say("no round is being played yet: first shuffle and deal (each player's cards on their rack)"),
                )
            elif self.ref.state.phase is Phase.BETWEEN:
                text = self.ref._per_deal(
                    hand=say("the next hand is being dealt: wait for the lights"),
                    round=say("the next round is being dealt: wait for the lights"),
                )
            elif self.ref.state.phase is Phase.OVER:
                text = say("the match is over: start a new one to play again")
            else:
                text = self.ref._per_deal(
                    hand=say("no hand is being played right now: wait for the deal"),
                    round=say("no round is being played right now: wait for the deal"),
                )
            self.ref._notice(Rejection("no_hand", text, (), DELAY_NOW, seat=seat))
            return
        # a move the table already shows counts before the button
        self.ref._evaluate_now(now)
        # turns: pass and draw; no turns (Kems): the seat buttons call
        press = self._press_dominoes if self.ref.game.has_turns else self._press_kems
        press(seat, button, now)

    # ---------------------------------------------------------------- windows
    def expire(self, now: float) -> None:
        """Let what a press left open run out (called by the referee's ``tick``)."""
        if self.menu is not None and now >= self.menu.until:
            self.menu = None
            self.ref._restore()
        if self.contre is not None and now >= self.contre.until:
            seat = self.contre.seat
            self.contre = None
            self.ref._notice(
                Rejection(
                    "contre_cancelled",
                    say("contre cancelled: no target seat was pressed; play on"),
                    (),
                    DELAY_NOW,
                    seat=seat,
                )
            )
        if self.announce is not None and now >= self.announce.until:
            self.announce = None
            self.ref._restore()

    def try_announce(self, s: Sensed, layout: Layout, stable: float) -> bool:
        """An announced double: True once the table answered it (the tile
        lifted from the announcing seat's rack, taken or refused)."""
        if self.announce is None:
            return False
        ref = self.ref
        seat = self.announce.seat
        diff = layout.diff(s)
        lifted = [
            d for d in diff if d.at is None and d.want is not None and d.want.group is not None
        ]
        if len(diff) != 1 or len(lifted) != 1 or lifted[0].want is None:
            return False
        want = lifted[0].want
        assert want.group is not None
        if want.group.key != f"rack:{seat}" or stable < ref.timing.settle:
            return False
        from tablesense.games.dominoes import Announce, Tile

        move = Announce(seat, Tile.parse(lifted[0].piece))
        self.announce = None
        if not ref.hand.is_legal(move):
            try:
                ref.hand.check(move)
            except IllegalPlayError as exc:
                ref._reject(
                    Rejection("illegal_announce", ref.engine_text(exc), (), DELAY_NOW, seat=seat)
                )
            return True
        ref._accept(TableMove(move, layout), ref.state.now)
        ref._say(
            say(
                "{seat} announces {tile}: put it back on the rack",
                seat=ref.rules.seat_label(seat), tile=str(move.tile),
            ),
            "info",
        )
        return True

    def _press_dominoes(self, seat: int, button: str, now: float) -> None:
        from tablesense.games.dominoes import Pass

        hand = self.ref.hand
        if hand.is_over:
            return
        if button == "call":
            self.announce = SeatWindow(seat, now + self.ref.timing.confirm)
            self.ref._say(
                say(
                    "{seat} announces a double: lift it from your rack for a moment, then put it back",
                    seat=self.ref.rules.seat_label(seat),
                ),
                "info",
            )
            return
        if seat != hand.to_play:
            self.ref._notice(
                Rejection(
                    "out_of_turn",
                    say(
                        "it is {turn}'s turn, not {seat}'s",
                        turn=self.ref.rules.seat_label(hand.to_play), seat=self.ref.rules.seat_label(seat),
                    ),
                    (),
                    DELAY_NOW,
                    seat=seat,
                )
            )
            return
        if self.ref.state.correction is not None:
            self.ref._notice(
                Rejection(
                    "correction_pending",
                    say("first: {instruction}", instruction=self.ref.state.correction.instruction),
                    self.ref.state.correction.cells,
                    DELAY_NOW,
                    seat=seat,
                )
            )
            return
        move = Pass(seat)
        try:
            hand.check(move)
        except IllegalPlayError as exc:
            # the engine's reason names the tile that fits: for this seat only
            who = self.ref.rules.seat_label(seat)
            kind = "pass_with_playable"
            public = say("{who} cannot pass: a tile on {who}'s rack can be played (its cell is lit)", who=who)
            cells: list[str] = []
            s = self.ref.state.sensed
            for m in hand.legal_moves(seat):
                if type(m).__name__ == "Play" and s is not None:
                    cell = next((c for c, p in s.pieces.items() if p == str(m.tile)), None)
                    target = self.ref.rules.target_of(m)
                    cells = [c for c in (cell, target) if c]
                    break
                if type(m).__name__ == "Draw":
                    kind = "must_draw"
                    public = say("{who} cannot pass: draw a tile from the boneyard first", who=who)
                    cells = list(self.ref.geometry.boneyard[:1])
                    break
            self.ref._notice(
                Rejection(
                    kind,
                    public,
                    tuple(cells),
                    DELAY_NOW,
                    seat=seat,
                    detail=self.ref.engine_text(exc),
                )
            )
            return
        self.ref._accept(TableMove(move, self.ref.rules.layout()), now)

    def _press_kems(self, seat: int, button: str, now: float) -> None:
        from tablesense.games.kems import Call

        rnd = self.ref.hand
        if self.contre is not None and seat != self.contre.seat:
            caller = self.contre.seat
            self.contre = None
            self._call(Call(caller, "contre", seat), now)
            return
        if button == "call":
            if rnd.is_over:
                return
            self.contre = SeatWindow(seat, now + self.ref.timing.contre_window)
            self.ref._say(
                say(
                    "{seat} calls contre: press the button of the seat you name",
                    seat=self.ref.rules.seat_label(seat),
                ),
                "info",
            )
            return
        last = rnd.events[-1] if rnd.events else None
        if (
            rnd.awaiting_double
            and last is not None
            and getattr(last, "seat", None) == rnd.partner_of(seat)
        ):
            self._call(Call(seat, "double"), now)
            return
        self._call(Call(seat, "kems"), now)

    def _call(self, call: Any, now: float) -> None:
        rnd = self.ref.hand
        try:
            rnd.check(call)
        except IllegalPlayError as exc:
            self.ref._notice(
                Rejection("illegal_call", self.ref.engine_text(exc), (), DELAY_NOW, seat=call.seat)
            )
            return
        self.ref._emit("call", seat=call.seat, call=call.kind, target=call.target)
        self.ref._accept(TableMove(call, self.ref.rules.layout()), now)

    def referee_press(self, now: float) -> None:
        """The referee button: first press offers to undo the last move, the
        second to void the hand (where the variant allows), the third cancels.
        A seat button confirms."""
        if self.ref.state.phase is not Phase.PLAY or self.ref.hand is None:
            self.menu = None
            self.ref._notice(
                Rejection(
                    "no_hand",
                    self.ref._per_deal(
                        hand=say("referee: no hand is being played, nothing to undo or void"),
                        round=say("referee: no round is being played, nothing to undo or void"),
                    ),
                    (),
                    DELAY_NOW,
                )
            )
            return
        # only what can be done is offered: no "undo" before the first move
        options = ["undo"] if self.ref.display.last_move_text() is not None else []
        if self.ref.game.can_void:
            options.append("void")
        if not options:
            self.ref._notice(
                Rejection(
                    "nothing_to_change",
                    self.ref._per_deal(
                        hand=say("referee: nothing to undo yet in this hand"),
                        round=say("referee: nothing to undo yet in this round"),
                    ),
                    (),
                    DELAY_NOW,
                )
            )
            return
        current = self.menu.action if self.menu else None
        if current not in options:
            current = None
        nxt = (
            options[0]
            if current is None
            else (
                options[options.index(current) + 1]
                if options.index(current) + 1 < len(options)
                else None
            )
        )
        if nxt is None:
            self.menu = None
            self.ref._say(say("referee: cancelled"), "info")
            return
        self.menu = MenuQuestion(nxt, now + self.ref.timing.confirm)
        if nxt == "undo":
            what = self.ref.display.last_move_text()
            self.ref._say(
                say("referee: undo the last move ({what})? press any seat button to confirm", what=what),
                "warning",
            )
        else:
            self.ref._say(
                self.ref._per_deal(
                    hand=say("referee: void this hand (it is dealt again)? press any seat button to confirm"),
                    round=say("referee: void this round (it is dealt again)? press any seat button to confirm"),
                ),
                "warning",
            )

    def _confirm_menu(self, seat: int, now: float) -> None:
        assert self.menu is not None
        action = self.menu.action
        self.menu = None
        hand = self.ref.hand
        if hand is None or self.ref.state.phase is not Phase.PLAY:
            self.ref._say(say("nothing to change: no hand is being played"), "info")
            return
        if action == "undo":
            moves = getattr(hand, "moves", None)
            if moves is None:
                moves = hand.events
            if not moves:
                self.ref._say(
                    self.ref._per_deal(
                        hand=say("nothing to undo in this hand"),
                        round=say("nothing to undo in this round"),
                    ),
                    "info",
                )
                return
            text = self.ref.display.move_text(moves[-1])
            self.ref.journal.commit({"type": "undo", "by": seat})  # a pending end is undone with it
            # the table still shows the undone move: do not take it again
            self.ref._hold_table()
            self.ref._emit("message", text=say("undone: {move}", move=text), level="warning")
            self.ref._say(
                say("undone: {move}; put the pieces back as the lights show", move=text), "warning"
            )
        else:
            try:
                self.ref.journal.commit(
                    {
                        "type": "void",
                        "reason": f"voided by the referee (confirmed by seat {seat + 1})",
                    }
                )
            except RefereeError as exc:
                self.ref._say(
                    say("cannot void this hand: {reason}", reason=self.ref.engine_text(exc.__cause__ or exc)),
                    "error",
                )
                return
            self.ref._emit(
                "hand_ended",
                hand_no=self.ref.state.hand_no,
                result=self.ref.state.last_result,
                score=[_num(p) for p in self.ref.match.score],
                record=self.ref.display.record(),
            )
            self.ref.journal.next_hand(now)
        self.ref.display.publish()
