"""The referee's state and the few helpers every part of it uses.

:class:`~tablesense.referee.core.Referee` judges table snapshots
(:mod:`.core`) over this state: the match, the rules, the waits, and the
output helpers every part uses (``_say``, ``_reject``, ``_notice``). The
journal's side (:mod:`.journaling`: start, replay, the entries, a hand's end
and the next deal) is mixed in and calls nothing it does not define or find
here. The other parts are composed, each reading the referee through the
protocol it declares: the buttons (``self.buttons``,
:class:`~tablesense.referee.buttons.TableButtons`), the coach
(``self.coaching``, :class:`~tablesense.referee.coaching.TableCoach`) and the
public display state (``self.display``,
:class:`~tablesense.referee.view.TableDisplay`); the Referee makes them over
itself, so no method is declared here for them. The state's small types (the
:class:`~tablesense.referee.state.Phase`, the windows) are in :mod:`.state`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from tablesense.games.common import OptionError, message_of, say
from tablesense.games.game import Game, Match
from tablesense.games.registry import UnknownGame, find_game
from tablesense.referee.buttons import TableButtons
from tablesense.referee.coaching import TableCoach
from tablesense.referee.layout import Sensed
from tablesense.referee.public import HIDDEN_ZONES
from tablesense.referee.rules import Rejection, TableMove, TableRules, rules_for
from tablesense.referee.spec import Emit, MatchSpec, RefereeError, Timing
from tablesense.referee.state import BoardsKind, Notice, Phase
from tablesense.referee.view import TableDisplay
from tablesense.referee.words import engine_sentence, localize, pretty_sentence, redact_sentence
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry


def _default_names(n: int) -> list[str]:
    return [f"Seat {i + 1}" for i in range(n)]


class RefereeBase:
    """State of one refereed match; see :mod:`tablesense.referee.core`."""

    # the composed parts, made by the Referee over itself
    coaching: TableCoach
    """The coach (:mod:`.coaching`): off until :meth:`set_coach`."""
    display: TableDisplay
    """The public display state (:mod:`.view`)."""
    buttons: TableButtons
    """Seat and referee buttons (:mod:`.buttons`)."""

    def __init__(
        self,
        spec: MatchSpec,
        geometry: TableGeometry,
        registry: TagRegistry,
        *,
        emit: Emit | None = None,
        store: Callable[[dict[str, Any]], object] | None = None,
        timing: Timing | None = None,
        deal: str = "engine",
    ) -> None:
        try:
            self.game: Game = find_game(spec.game)
        except UnknownGame as exc:
            raise RefereeError(message_of(exc)) from None
        if spec.game not in geometry.games:
            raise RefereeError(
                say("table {table!r} is laid out for {games}, not {game}", table=geometry.name,
                    games=", ".join(geometry.games), game=spec.game)
            )
        if deal not in ("engine", "table"):
            raise ValueError(
                "deal must be 'engine' (the host deals) or 'table' (read from the racks)"
            )
        n = len(geometry.seats)
        if not spec.seat_names:
            spec.seat_names = [s.name for s in geometry.seats] or _default_names(n)
        if len(spec.seat_names) != n:
            raise RefereeError(
                say("table {table!r} has {n} seats; {named} players were named", table=geometry.name, n=n,
                    named=len(spec.seat_names))
            )
        if not spec.seat_kinds:
            spec.seat_kinds = ["human"] * n
        self.spec = spec
        self.geometry = geometry
        self.registry = registry
        self.timing = timing or Timing()
        self.deal_mode = deal
        sink: Emit = emit or (lambda kind, **data: None)
        lang = spec.lang or "en"

        def publish(kind: str, /, **data: Any) -> Any:
            # one language per table: every Sentence leaves translated
            return sink(kind, **localize(data, lang))

        self._emit: Emit = publish
        self._store = store or (lambda entry: None)
        self.match: Match = self._new_match()
        try:
            self.rules: TableRules = rules_for(self.game)(geometry, spec.seat_names, self.match)
        except ValueError as exc:
            raise RefereeError(message_of(exc)) from None
        self._set_deal_mode(deal)
        self.cells = list(geometry.cells)
        self.sensed: Sensed | None = None
        self.changed_at = 0.0
        self.now = 0.0
        self.phase = Phase.IDLE
        self.paused = False
        self.correction: Rejection | None = None
        self.notice: Notice | None = None
        self.message: dict[str, Any] | None = None
        self.last_move: dict[str, Any] | None = None
        self.last_result: dict[str, Any] | None = None
        self.hand_no = 0
        self.finish_at: float | None = None
        self.entries: list[dict[str, Any]] = []
        self.accepted = 0
        self._hold: tuple[Any, ...] | None = None
        self.next_hand_at: float | None = None
        # recognition depends only on the snapshot and the game state: memoised
        self._memo: tuple[Any, list[TableMove], Rejection | None] | None = None
        self._sensed_no = 0
        self.laying_out = False
        """A host-dealt hand whose deal the table has not shown yet: pieces are
        being gathered and dealt, so nothing on the table is a mistake until it
        matches the deal or stays unchanged ``missing``, and a move is taken
        only once it has stood ``error``."""
        self.waiting_sync = False
        """The last table state was incomplete (a board resyncing): nothing is
        judged until a complete one arrives."""
        self.last_hand_no: int | None = None
        """The number of the last hand finished (not voided): ``last_line``."""
        self._open_cells = frozenset(
            c.id for c in geometry.cells.values() if c.zone not in HIDDEN_ZONES
        )
        """Cells whose piece the whole table sees (not racks, not the boneyard)."""
        self.resumed = False
        """Replayed from the journal and the table not yet seen to agree."""
        self._shown: set[str] = set()
        """Kems: the cards that lay face up on the board during this round."""
        self.boards_kind: BoardsKind = "usb"
        """Where the boards are, for what an offline board is told: ``usb``
        (check the cable), ``sim`` (``tablesense sim boards`` in another
        terminal) or ``built-in`` (the demo's own virtual boards); a virtual
        board is never told about a USB cable."""

    # ------------------------------------------------------------------ setup
    def set_coach(self, on: bool) -> None:
        """Turn the coach on or off for this table (``play --coach``,
        ``demo --coach``). A tournament table never turns it on."""
        self.coaching.turn(on)

    def _new_match(self) -> Match:
        spec = self.spec
        try:
            return self.game.new_match(spec.variant, spec.options, seats=len(self.geometry.seats))
        except (OptionError, ValueError) as exc:
            raise RefereeError(say("cannot set up {game} {variant}: {error}", game=spec.game, variant=spec.variant,
                                      error=message_of(exc))) from None

    @property
    def hand(self) -> Any:
        return self.match.current

    def _set_deal_mode(self, deal: str) -> None:
        """``engine``: the host deals; ``table``: each deal is read from the
        racks, and the face-down boneyard/stock order is learnt as it shows."""
        self.deal_mode = deal
        self.rules.set_table_dealt(deal == "table")

    def _match_info(self) -> dict[str, Any]:
        return {
            "game": self.spec.game,
            "variant": self.spec.variant,
            "seats": self.spec.seat_names,
            "kinds": self.spec.seat_kinds,
            "target": self._target(),
            "table": self.geometry.name,
        }

    def _hand_word(self) -> str:
        """What the game calls one deal: a dominoes hand, a Kems round."""
        return self.game.deal_word

    def _per_deal(self, hand: str, round: str) -> str:
        """Of two texts naming a deal, this game's (:meth:`Game.per_deal`)."""
        return self.game.per_deal(hand, round)

    def _target(self) -> Any:
        return getattr(self.match, "target", None)

    def _deal_rng(self) -> random.Random:
        return random.Random(f"tablesense-deal:{self.spec.seed}:{len(self._finished())}")

    def _finished(self) -> list[Any]:
        return list(self.match.hands)

    # ------------------------------------------------------------------ public
    def view(self) -> dict[str, Any]:
        """The whole public display state (:meth:`.view.TableDisplay.view`)."""
        return self.display.view()

    def record(self, limit: int | None = None) -> dict[str, Any]:
        """The match's game record (finished hands; the first ``limit``)."""
        return self.display.record(limit)

    def finished_hands(self) -> list[Any]:
        """Hands (rounds) finished so far, voided ones not included."""
        return self._finished()

    def accepted_in_hand(self) -> int:
        """Moves (or Kems events) accepted in the current hand so far."""
        return self.display.accepted_in_hand()

    def press(self, seat: int, button: str = "main", now: float | None = None) -> None:
        """A seat button (:meth:`.buttons.TableButtons.press`)."""
        if now is not None:
            self.now = now
        self.buttons.press(seat, button, self.now)

    def referee_press(self, now: float | None = None) -> None:
        """The referee button (:meth:`.buttons.TableButtons.referee_press`)."""
        if now is not None:
            self.now = now
        self.buttons.referee_press(self.now)

    def public_pieces(self) -> set[str] | None:
        """The pieces everyone at the table may know about right now; None
        when everything is (between hands, the match over: the finished hand
        is shown whole). See :mod:`tablesense.referee.public`."""
        if self.phase in ("between", "over"):
            return None
        hand = self.hand
        face_up = (
            {p for c, p in self.sensed.pieces.items() if c in self._open_cells}
            if self.sensed is not None
            else set()
        )
        if hand is None:
            # a hand just finished is public; a new deal being read is not,
            # but a piece on no cell at all is nobody's secret yet ("missing: 3-4")
            if self.phase != "dealing":
                return None
            on_table = set(self.sensed.pieces.values()) if self.sensed is not None else set()
            return face_up | (self._all_pieces() - on_table)
        return face_up | self._shown | self.game.face_up(hand)

    def _all_pieces(self) -> set[str]:
        """Every piece of the set in play (28 tiles, or the Kems deck)."""
        return set(self.game.all_pieces(self.match.options))

    def public_text(self, text: str) -> str:
        """``text`` as the display may show it: hidden pieces unnamed, cards
        written as people write them (``10♥``); a Sentence stays one, so it
        is translated when published."""
        return redact_sentence(text, self.public_pieces(), self.game)

    def engine_text(self, message: object) -> str:
        """An engine's refusal in the table's words (seats by name, not by a
        0-based number)."""
        teams = self.display.team_names()
        return engine_sentence(
            message,
            self.rules.seat_label,
            lambda t: teams[t] if 0 <= t < len(teams) else say("team {n}", n=t + 1),
        )

    def _rejection_data(self, rejection: Rejection) -> dict[str, Any]:
        """``move_rejected`` data: the public instruction (pieces a seat holds
        unnamed); the full one, the piece and the fix for that seat's own
        devices (and the demo's hands) under ``private``."""
        full = rejection.to_json()
        public = self.public_pieces()
        piece = rejection.piece
        shown = piece if piece is not None and (public is None or piece in public) else None
        data = {
            **full,
            "instruction": self.public_text(rejection.instruction),
            "piece": shown,
            "fix": full["fix"] if shown is not None else None,
        }
        if full != data or rejection.detail:
            text = rejection.detail or rejection.instruction
            data["private"] = {
                "seat": rejection.seat,
                "instruction": pretty_sentence(text, self.game),
                "piece": piece,
                "fix": full["fix"],
            }
        return data

    # ------------------------------------------------------------------ output
    def _reject(self, rejection: Rejection) -> None:
        if self.correction is not None and self.correction.instruction == rejection.instruction:
            return
        self.correction = rejection
        self._emit("move_rejected", **self._rejection_data(rejection), hand_no=self.hand_no)
        self._say(rejection.instruction, "error")

    def _notice(self, rejection: Rejection) -> None:
        """A rejected button press: shown for a while, the table is not involved."""
        self.notice = Notice(rejection, self.now + self.timing.notice)
        self._emit("move_rejected", **self._rejection_data(rejection), hand_no=self.hand_no)
        self._say(rejection.instruction, "error")

    def _clear(self) -> None:
        if self.correction is not None:
            self.correction = None
            self._emit("correction_cleared", reason="the table matches again")
            self._say(None)

    def _say(self, text: str | None, level: str = "info", about: str | None = None) -> None:
        """Put ``text`` on the display (None: clear it); made public first.
        ``about="result"`` marks the banner that announces the hand's result
        (``view.result``): the display page then shows the result once, in
        the banner, instead of again in its result panel."""
        if text is not None:
            text = self.public_text(text)
        new = None if text is None else {"text": text, "level": level}
        if new is not None and about is not None:
            new["about"] = about
        if new == self.message:
            return
        self.message = new
        if text is not None:
            self._emit("message", text=text, level=level)
        self.display.publish()

    def _offline_text(self, boards: Sequence[int]) -> str:
        offline = sorted(boards)
        if self.boards_kind == "sim":
            if len(offline) == 1:
                return say("virtual board {board} is not answering: play is paused; is tablesense sim boards "
                           "still running in its terminal? Play resumes by itself when the board answers.",
                           board=offline[0])
            return say("virtual boards {boards} are not answering: play is paused; is tablesense sim boards "
                       "still running in its terminal? Play resumes by itself when the boards answer.",
                       boards=", ".join(str(b) for b in offline))
        if self.boards_kind == "built-in":
            if len(offline) == 1:
                return say("virtual board {board} is not answering: play is paused and resumes by itself "
                           "when it answers.", board=offline[0])
            return say("virtual boards {boards} are not answering: play is paused and resumes by itself "
                       "when they answer.", boards=", ".join(str(b) for b in offline))
        if len(offline) == 1:
            return say(
                "board {board} is offline: play is paused; check the USB cable. "
                "Play resumes by itself when the board is back.",
                board=offline[0],
            )
        return say(
            "boards {boards} are offline: play is paused; check the USB cable. "
            "Play resumes by itself when the boards are back.",
            boards=", ".join(str(b) for b in offline),
        )

    def _standing(self) -> tuple[str, str] | None:
        """The banner the table's state calls for when nothing else is being
        said (a notice or a question ran out): always with a next step, or
        nothing at all."""
        if self.correction is not None:
            return self.correction.instruction, "error"
        if self.paused and self.sensed is not None and self.sensed.boards_offline:
            return self._offline_text(self.sensed.boards_offline), "error"
        if self.phase == "dealing":
            return say("shuffle and deal: lay each player's pieces on their rack"), "info"
        if self.phase == "over" and self.match.winner is not None:
            return say("match over: {team} win", team=self.display.team_names()[self.match.winner]), "info"
        return None

    def _restore(self) -> None:
        """Back to the standing banner (or none)."""
        standing = self._standing()
        if standing is None:
            self._say(None)
        else:
            self._say(*standing)

    def _hand_over_pending(self) -> bool:
        """The hand in play is over, its end not journaled yet."""
        hand = self.hand
        return hand is not None and hand.is_over

    def _to_play(self) -> int | None:
        hand = self.hand
        return None if hand is None else self.game.to_play(hand)
