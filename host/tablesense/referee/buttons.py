"""The referee's buttons: a seat button (dominoes: pass, announce a double;
Kems: Kems, double, contre and its target) and the referee button's
undo / void menu, confirmed by any seat button.

A refused press is a *notice*: shown for a while, it never touches the
table's correction.
"""

from __future__ import annotations

from typing import Any

from tablesense.games.common import IllegalPlayError, say
from tablesense.referee.base import RefereeBase
from tablesense.referee.rules import DELAY_NOW, Rejection, TableMove
from tablesense.referee.spec import RefereeError
from tablesense.referee.state import MenuQuestion, SeatWindow
from tablesense.referee.view import _num


class ButtonsMixin(RefereeBase):
    """Seat and referee buttons."""

    def press(self, seat: int, button: str = "main", now: float | None = None) -> None:
        """A seat button: ``main`` (dominoes: pass; Kems: Kems / double / the
        target of a contre), ``call`` (dominoes: announce a double; Kems:
        contre, then the target seat's button) or ``coach`` (a long press of
        the seat button, or the seat's page: the coach's suggestion for that
        seat, :mod:`.coaching`)."""
        if now is not None:
            self.now = now
        now = self.now
        if not 0 <= seat < len(self.spec.seat_names):
            return
        if button == "coach":
            # a long press asks the coach; it never confirms the referee's menu
            self.coaching.press(seat, now)
            return
        if self.menu is not None:
            self._confirm_menu(seat, now)
            return
        if self.phase != "play" or self.hand is None:
            if self.phase == "dealing":
                text = self._per_deal(
                    hand=say("no hand is being played yet: first shuffle and deal (each player's pieces on their rack)"),
                    round=say("no round is being played yet: first shuffle and deal (each player's cards on their rack)"),
                )
            elif self.phase == "between":
                text = self._per_deal(
                    hand=say("the next hand is being dealt: wait for the lights"),
                    round=say("the next round is being dealt: wait for the lights"),
                )
            elif self.phase == "over":
                text = say("the match is over: start a new one to play again")
            else:
                text = self._per_deal(
                    hand=say("no hand is being played right now: wait for the deal"),
                    round=say("no round is being played right now: wait for the deal"),
                )
            self._notice(Rejection("no_hand", text, (), DELAY_NOW, seat=seat))
            return
        # a move the table already shows counts before the button
        self._evaluate_now(now)
        # turns: pass and draw; no turns (Kems): the seat buttons call
        press = self._press_dominoes if self.game.has_turns else self._press_kems
        press(seat, button, now)

    def _evaluate_now(self, now: float) -> None:
        s = self.sensed
        if s is None or self.waiting_sync or self.finish_at is not None:
            return
        moves = self.rules.recognise(s)
        for m in moves:
            if not self._accept(m, now):
                break

    def _press_dominoes(self, seat: int, button: str, now: float) -> None:
        from tablesense.games.dominoes import Pass

        hand = self.hand
        if hand.is_over:
            return
        if button == "call":
            self.announce = SeatWindow(seat, now + self.timing.confirm)
            self._say(
                say(
                    "{seat} announces a double: lift it from your rack for a moment, then put it back",
                    seat=self.rules.seat_label(seat),
                ),
                "info",
            )
            return
        if seat != hand.to_play:
            self._notice(
                Rejection(
                    "out_of_turn",
                    say(
                        "it is {turn}'s turn, not {seat}'s",
                        turn=self.rules.seat_label(hand.to_play), seat=self.rules.seat_label(seat),
                    ),
                    (),
                    DELAY_NOW,
                    seat=seat,
                )
            )
            return
        if self.correction is not None:
            self._notice(
                Rejection(
                    "correction_pending",
                    say("first: {instruction}", instruction=self.correction.instruction),
                    self.correction.cells,
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
            who = self.rules.seat_label(seat)
            kind = "pass_with_playable"
            public = say("{who} cannot pass: a tile on {who}'s rack can be played (its cell is lit)", who=who)
            cells: list[str] = []
            s = self.sensed
            for m in hand.legal_moves(seat):
                if type(m).__name__ == "Play" and s is not None:
                    cell = next((c for c, p in s.pieces.items() if p == str(m.tile)), None)
                    target = self.rules.target_of(m)
                    cells = [c for c in (cell, target) if c]
                    break
                if type(m).__name__ == "Draw":
                    kind = "must_draw"
                    public = say("{who} cannot pass: draw a tile from the boneyard first", who=who)
                    cells = list(self.geometry.boneyard[:1])
                    break
            self._notice(
                Rejection(
                    kind,
                    public,
                    tuple(cells),
                    DELAY_NOW,
                    seat=seat,
                    detail=self.engine_text(exc),
                )
            )
            return
        self._accept(TableMove(move, self.rules.layout()), now)

    def _press_kems(self, seat: int, button: str, now: float) -> None:
        from tablesense.games.kems import Call

        rnd = self.hand
        if self.contre is not None and seat != self.contre.seat:
            caller = self.contre.seat
            self.contre = None
            self._call(Call(caller, "contre", seat), now)
            return
        if button == "call":
            if rnd.is_over:
                return
            self.contre = SeatWindow(seat, now + self.timing.contre_window)
            self._say(
                say(
                    "{seat} calls contre: press the button of the seat you name",
                    seat=self.rules.seat_label(seat),
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
        rnd = self.hand
        try:
            rnd.check(call)
        except IllegalPlayError as exc:
            self._notice(
                Rejection("illegal_call", self.engine_text(exc), (), DELAY_NOW, seat=call.seat)
            )
            return
        self._emit("call", seat=call.seat, call=call.kind, target=call.target)
        self._accept(TableMove(call, self.rules.layout()), now)

    def referee_press(self, now: float | None = None) -> None:
        """The referee button: first press offers to undo the last move, the
        second to void the hand (where the variant allows), the third cancels.
        A seat button confirms."""
        if now is not None:
            self.now = now
        if self.phase != "play" or self.hand is None:
            self.menu = None
            self._notice(
                Rejection(
                    "no_hand",
                    self._per_deal(
                        hand=say("referee: no hand is being played, nothing to undo or void"),
                        round=say("referee: no round is being played, nothing to undo or void"),
                    ),
                    (),
                    DELAY_NOW,
                )
            )
            return
        # only what can be done is offered: no "undo" before the first move
        options = ["undo"] if self.display.last_move_text() is not None else []
        if self.game.can_void:
            options.append("void")
        if not options:
            self._notice(
                Rejection(
                    "nothing_to_change",
                    self._per_deal(
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
            self._say(say("referee: cancelled"), "info")
            return
        self.menu = MenuQuestion(nxt, self.now + self.timing.confirm)
        if nxt == "undo":
            what = self.display.last_move_text()
            self._say(
                say("referee: undo the last move ({what})? press any seat button to confirm", what=what),
                "warning",
            )
        else:
            self._say(
                self._per_deal(
                    hand=say("referee: void this hand (it is dealt again)? press any seat button to confirm"),
                    round=say("referee: void this round (it is dealt again)? press any seat button to confirm"),
                ),
                "warning",
            )

    def _confirm_menu(self, seat: int, now: float) -> None:
        assert self.menu is not None
        action = self.menu.action
        self.menu = None
        hand = self.hand
        if hand is None or self.phase != "play":
            self._say(say("nothing to change: no hand is being played"), "info")
            return
        if action == "undo":
            moves = getattr(hand, "moves", None)
            if moves is None:
                moves = hand.events
            if not moves:
                self._say(
                    self._per_deal(
                        hand=say("nothing to undo in this hand"),
                        round=say("nothing to undo in this round"),
                    ),
                    "info",
                )
                return
            text = self.display.move_text(moves[-1])
            self.finish_at = None
            self._commit({"type": "undo", "by": seat})
            # the table still shows the undone move: do not take it again
            self._hold = self.sensed.key() if self.sensed is not None else None
            self._emit("message", text=say("undone: {move}", move=text), level="warning")
            self._say(
                say("undone: {move}; put the pieces back as the lights show", move=text), "warning"
            )
        else:
            try:
                self._commit(
                    {
                        "type": "void",
                        "reason": f"voided by the referee (confirmed by seat {seat + 1})",
                    }
                )
            except RefereeError as exc:
                self._say(
                    say("cannot void this hand: {reason}", reason=self.engine_text(exc.__cause__ or exc)),
                    "error",
                )
                return
            self._emit(
                "hand_ended",
                hand_no=self.hand_no,
                result=self.last_result,
                score=[_num(p) for p in self.match.score],
                record=self.display.record(),
            )
            self._next_hand(now)
        self.display.publish()
