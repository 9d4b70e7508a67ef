"""What the referee is made of, and the few helpers every part of it uses.

:class:`~tablesense.referee.core.Referee` judges table snapshots
(:mod:`.core`) with what is set up here: the match, its rules, the typed
:class:`~tablesense.referee.state.MatchState` (``self.state``), and the
output helpers every part uses (``_say``, ``_reject``, ``_notice``). The
parts are composed, each reading the referee through the protocol it
declares (:mod:`.facts` declares what they all read): the journal
(``self.journal``, :class:`~tablesense.referee.journaling.TableJournal`:
start, replay, the entries, a hand's deal and its end), the buttons
(``self.buttons``, :class:`~tablesense.referee.buttons.TableButtons`), the
coach (``self.coaching``, :class:`~tablesense.referee.coaching.TableCoach`)
and the public display state (``self.display``,
:class:`~tablesense.referee.view.TableDisplay`); no method is declared here
for a part to fill in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tablesense.games.common import OptionError, message_of, say
from tablesense.games.game import Game, Match
from tablesense.games.registry import UnknownGame, find_game
from tablesense.referee.buttons import TableButtons
from tablesense.referee.coaching import TableCoach
from tablesense.referee.journaling import Store, TableJournal
from tablesense.referee.public import HIDDEN_ZONES
from tablesense.referee.rules import Rejection, TableRules, rules_for
from tablesense.referee.spec import Emit, MatchSpec, RefereeError, Timing
from tablesense.referee.state import Banner, BoardsKind, DealMode, MatchState, Notice, Phase
from tablesense.referee.view import TableDisplay
from tablesense.referee.words import engine_sentence, localize, pretty_sentence, redact_sentence
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry


def _default_names(n: int) -> list[str]:
    return [f"Seat {i + 1}" for i in range(n)]


class RefereeBase:
    """State of one refereed match; see :mod:`tablesense.referee.core`."""

    # the composed parts, made by the Referee over itself (the journal here)
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
        store: Store | None = None,
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
        try:
            mode = DealMode(deal)
        except ValueError:
            raise ValueError(
                "deal must be 'engine' (the host deals) or 'table' (read from the racks)"
            ) from None
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
        sink: Emit = emit or (lambda kind, **data: None)
        lang = spec.lang or "en"

        def publish(kind: str, /, **data: Any) -> Any:
            # one language per table: every Sentence leaves translated
            return sink(kind, **localize(data, lang))

        self._emit: Emit = publish
        self.match: Match = self._new_match()
        try:
            self.rules: TableRules = rules_for(self.game)(geometry, spec.seat_names, self.match)
        except ValueError as exc:
            raise RefereeError(message_of(exc)) from None
        self.state = MatchState(deal_mode=mode)
        """Everything about the match that changes as it is played."""
        self.journal = TableJournal(self, store)
        """The journal's part (:mod:`.journaling`): entries, start, replay, deals and ends."""
        self.journal.set_deal_mode(mode)
        self.cells = list(geometry.cells)
        self._open_cells = frozenset(
            c.id for c in geometry.cells.values() if c.zone not in HIDDEN_ZONES
        )
        """Cells whose piece the whole table sees (not racks, not the boneyard)."""
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

    def _per_deal(self, hand: str, round: str) -> str:
        """Of two texts naming a deal, this game's (:meth:`Game.per_deal`)."""
        return self.game.per_deal(hand, round)

    def _target(self) -> Any:
        return getattr(self.match, "target", None)

    def _finished(self) -> list[Any]:
        return list(self.match.hands)

    # ------------------------------------------------------------------ public
    def start(self, now: float = 0.0) -> None:
        """Begin a new match (:meth:`.journaling.TableJournal.start`)."""
        self.journal.start(now)

    def replay(self, entries: Sequence[dict[str, Any]], now: float = 0.0) -> None:
        """Rebuild the match from journal entries (:meth:`.journaling.TableJournal.replay`)."""
        self.journal.replay(entries, now)

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
        st = self.state
        if now is not None:
            st.now = now
        self.buttons.press(seat, button, st.now)

    def referee_press(self, now: float | None = None) -> None:
        """The referee button (:meth:`.buttons.TableButtons.referee_press`)."""
        st = self.state
        if now is not None:
            st.now = now
        self.buttons.referee_press(st.now)

    def public_pieces(self) -> set[str] | None:
        """The pieces everyone at the table may know about right now; None
        when everything is (between hands, the match over: the finished hand
        is shown whole). See :mod:`tablesense.referee.public`."""
        st = self.state
        if st.phase in (Phase.BETWEEN, Phase.OVER):
            return None
        hand = self.hand
        face_up = (
            {p for c, p in st.sensed.pieces.items() if c in self._open_cells}
            if st.sensed is not None
            else set()
        )
        if hand is None:
            # a hand just finished is public; a new deal being read is not,
            # but a piece on no cell at all is nobody's secret yet ("missing: 3-4")
            if st.phase is not Phase.DEALING:
                return None
            on_table = set(st.sensed.pieces.values()) if st.sensed is not None else set()
            return face_up | (self._all_pieces() - on_table)
        return face_up | st.shown | self.game.face_up(hand)

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
        st = self.state
        if st.correction is not None and st.correction.instruction == rejection.instruction:
            return
        st.correction = rejection
        self._emit("move_rejected", **self._rejection_data(rejection), hand_no=st.hand_no)
        self._say(rejection.instruction, "error")

    def _notice(self, rejection: Rejection) -> None:
        """A rejected button press: shown for a while, the table is not involved."""
        st = self.state
        st.notice = Notice(rejection, st.now + self.timing.notice)
        self._emit("move_rejected", **self._rejection_data(rejection), hand_no=st.hand_no)
        self._say(rejection.instruction, "error")

    def _clear(self) -> None:
        st = self.state
        if st.correction is not None:
            st.correction = None
            self._emit("correction_cleared", reason="the table matches again")
            self._say(None)

    def _say(self, text: str | None, level: str = "info", about: str | None = None) -> None:
        """Put ``text`` on the display (None: clear it); made public first.
        ``about="result"`` marks the banner that announces the hand's result
        (``view.result``): the display page then shows the result once, in
        the banner, instead of again in its result panel."""
        st = self.state
        if text is not None:
            text = self.public_text(text)
        new = None if text is None else Banner(text, level, about)
        if new == st.message:
            return
        st.message = new
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

    def _standing(self) -> Banner | None:
        """The banner the table's state calls for when nothing else is being
        said (a notice or a question ran out): always with a next step, or
        nothing at all."""
        st = self.state
        if st.correction is not None:
            return Banner(st.correction.instruction, "error")
        if st.paused and st.sensed is not None and st.sensed.boards_offline:
            return Banner(self._offline_text(st.sensed.boards_offline), "error")
        if st.phase is Phase.DEALING:
            return Banner(say("shuffle and deal: lay each player's pieces on their rack"))
        if st.phase is Phase.OVER and self.match.winner is not None:
            return Banner(say("match over: {team} win", team=self.display.team_names()[self.match.winner]))
        return None

    def _restore(self) -> None:
        """Back to the standing banner (or none)."""
        standing = self._standing()
        if standing is None:
            self._say(None)
        else:
            self._say(standing.text, standing.level)

    def _to_play(self) -> int | None:
        hand = self.hand
        return None if hand is None else self.game.to_play(hand)
