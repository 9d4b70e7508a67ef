"""The referee: table snapshots and seat buttons in, accepted moves or
explained rejections out.

The referee is a pure object. It is fed

- :meth:`Referee.update` with every new :class:`~tablesense.table.state.TableState`
  (the snapshot is the truth; the link's events only make new snapshots),
- :meth:`Referee.press` / :meth:`Referee.referee_press` with seat and referee
  buttons, and
- :meth:`Referee.tick` with the time, so that waits can run out,

and it answers by calling two injected functions: ``store(entry)``, which must
make a journal entry durable before it returns (the referee calls it BEFORE it
changes the game state or tells anyone), and ``emit(kind, **data)`` for table
events (``move_accepted``, ``move_rejected``, ``view``...). Time is always
passed in, never read, so tests drive it.

How a move is recognised: the game's :class:`~tablesense.referee.rules.TableRules`
builds the layout the current game state wants, and the layout each legal move
would produce; a stable snapshot equal to one of those is that move. A snapshot
that fits nothing is explained (one plain instruction, the cells involved) once
it has lasted long enough for the situation (a piece merely lifted may be on
its way; a piece on a wrong cell is shown sooner). The game state never changes
on a bad move: the players are guided back until the table matches again.

The journal is event-sourced: the entries (``match``, ``hand``, ``move``,
``reorder``, ``undo``, ``void``, ``finish``) rebuild the same game state
(:meth:`Referee.replay`), which is how a crashed match resumes.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from tablesense.games.common import IllegalPlayError, say
from tablesense.referee.base import RefereeBase, _default_names
from tablesense.referee.buttons import TableButtons
from tablesense.referee.coaching import TableCoach
from tablesense.referee.journaling import Store
from tablesense.referee.layout import Sensed
from tablesense.referee.public import public_move
from tablesense.referee.rules import DELAY_NOW, Rejection, TableMove
from tablesense.referee.sensing import sense
from tablesense.referee.spec import Emit, MatchSpec, RefereeError, Timing
from tablesense.referee.state import Phase, Recognition
from tablesense.referee.view import TableDisplay, _num, _result_text
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry

__all__ = [
    "Emit",
    "MatchSpec",
    "Referee",
    "RefereeBase",
    "RefereeError",
    "Timing",
    "_default_names",
    "_num",
    "_result_text",
    "sense",
]


class Referee(RefereeBase):
    """Referees one match on one table; see the module docstring.

    Here, the judging of table snapshots, over the match's typed state
    (``self.state``, a :class:`~tablesense.referee.state.MatchState`). The
    parts are composed, each over the referee it reads through a narrow
    protocol: ``self.journal``, the
    :class:`~tablesense.referee.journaling.TableJournal` (start, replay, the
    entries, a hand's deal and its end), ``self.buttons``, the
    :class:`~tablesense.referee.buttons.TableButtons` (seat and referee
    buttons, and what a press leaves open), ``self.coaching``, the
    :class:`~tablesense.referee.coaching.TableCoach` (suggestions on request,
    the review after a hand), and ``self.display``, the
    :class:`~tablesense.referee.view.TableDisplay` (the public display state,
    the game record, the words for moves and teams).
    """

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
        super().__init__(spec, geometry, registry, emit=emit, store=store, timing=timing, deal=deal)
        self.coaching = TableCoach(self)
        self.display = TableDisplay(self)
        self.buttons = TableButtons(self)

    # ------------------------------------------------------------------ inputs
    def update(self, state: Mapping[str, Any], now: float) -> None:
        """A new table snapshot arrived.

        Only a complete state (:attr:`TableState.complete`) is judged: while a
        board resyncs after a lost frame, or has not read every cell since it
        restarted, its cells may be stale for a few tenths of a second, and a
        move or a mistake read from them would be a false one. Such a state
        is set aside and the referee waits (timers still run); an offline
        board still pauses play as before.
        """
        online: Mapping[int, bool] = getattr(state, "boards_online", {}) or {}
        if getattr(state, "complete", True) is False and all(online.values()):
            self.state.waiting_sync = True
            self.tick(now)
            return
        self.feed(sense(state, self.registry, self.cells), now)

    def feed(self, sensed: Sensed, now: float) -> None:
        """A new snapshot already in the referee's terms (tests, the demo)."""
        st = self.state
        if st.waiting_sync or st.sensed is None or sensed.key() != st.sensed.key():
            # after a resync the table counts as just changed: waits start again
            st.waiting_sync = False
            st.sensed = sensed
            st.changed_at = now
            st.sensed_no += 1
        self.tick(now)

    def tick(self, now: float) -> None:
        """Let waits run out (call a few times a second)."""
        st = self.state
        st.now = now
        if st.notice is not None and now >= st.notice.until:
            st.notice = None
            if st.correction is None:
                self._emit("correction_cleared", reason="notice expired")
            # the refused press is not shown for good: back to what is next
            self._restore()
            self.display.publish()
        self.buttons.expire(now)
        if st.finish_at is not None and now >= st.finish_at and st.phase is Phase.PLAY:
            self.journal.finish(now)
        if st.phase is Phase.BETWEEN and st.next_hand_at is not None and now >= st.next_hand_at:
            st.next_hand_at = None
            self.journal.next_hand(now)
            self.display.publish()
        self._evaluate(now)

    # ------------------------------------------------------------------ judging
    def _evaluate(self, now: float) -> None:
        st = self.state
        s = st.sensed
        if s is None or st.waiting_sync or st.phase in (Phase.IDLE, Phase.OVER):
            return
        if s.boards_offline:
            text = self._offline_text(s.boards_offline)
            if not st.paused or st.message is None or st.message.text != text:
                # a second board going down (or coming back) changes the banner
                st.paused = True
                self._say(text, "error")
            return
        if st.paused:
            st.paused = False
            self._say(say("all boards are back: play resumes"), "info")
        if st.phase is Phase.DEALING:
            self._try_table_deal(now)
            return
        if self.hand is None:
            return
        if st.finish_at is not None:
            return  # a Kems call waits for a double; the round is over
        stable = now - st.changed_at
        layout = self.rules.layout()
        if layout.matches(s):
            st.laying_out = False
            self._clear()
            if st.resumed:
                # the table agrees with the journal: the resume banner has done its work
                st.resumed = False
                if st.notice is None and self.buttons.menu is None:
                    self._restore()
            return
        if self.buttons.try_announce(s, layout, stable):
            return
        if st.hold is not None and s.key() != st.hold:
            st.hold = None
        memo_key = (st.sensed_no, len(self.journal.entries), st.hold is None, st.laying_out)
        if st.memo is not None and st.memo.key == memo_key:
            moves, rejection = st.memo.moves, st.memo.rejection
        else:
            moves = self.rules.recognise(s) if st.hold is None else []
            rejection = None if moves else self.rules.explain(s, layout)
            st.memo = Recognition(memo_key, moves, rejection)
        if moves:
            wait = max(
                self.timing.slide if m.settle == "slide" else self.timing.settle for m in moves
            )
            if st.laying_out:
                # the deal's first move may come before the deal ever showed
                # (the opener lays 6-6 straight on the centre): taken once the
                # table has stopped moving, not half-way through the dealing
                wait = max(wait, self.timing.error)
            if stable >= wait:
                for m in moves:
                    if not self._accept(m, now):
                        break
            return
        if rejection is None:
            self._clear()
            return
        delay = self.timing.delay(rejection.delay)
        if st.laying_out:
            # a deal being laid out is only guided once it has stopped moving
            delay = max(delay, self.timing.missing)
        if stable >= delay:
            self._reject(rejection)
        elif st.correction is not None and st.correction.instruction != rejection.instruction:
            # the table changed: the old instruction may be wrong now; wait quietly
            pass

    def _evaluate_now(self, now: float) -> None:
        """A move the table already shows counts first (before a button, or the coach's answer)."""
        st = self.state
        s = st.sensed
        if s is None or st.waiting_sync or st.finish_at is not None:
            return
        moves = self.rules.recognise(s)
        for m in moves:
            if not self._accept(m, now):
                break


    def _hold_table(self) -> None:
        """Take no move from the table as it is now (after an undo it still
        shows the undone move); judging resumes once it changes."""
        st = self.state
        st.hold = st.sensed.key() if st.sensed is not None else None

    def _accept(self, tm: TableMove, now: float) -> bool:
        st = self.state
        move = tm.move
        hand = self.hand
        if tm.note.startswith("free-stock:"):
            self.journal.commit(self.game.stock_reorder(hand, tm.note.split(":", 1)[1].split(",")))
        try:
            hand.check(move)
        except IllegalPlayError as exc:
            self._reject(Rejection("illegal", self.engine_text(exc), (), DELAY_NOW))
            return False
        entry = {"type": "move", "move": self.game.move_to_json(move)}
        self.journal.commit(entry)
        was_correcting = st.correction is not None
        st.correction = None
        st.notice = None
        st.laying_out = False
        public = public_move(entry["move"])
        extra: dict[str, Any] = {}
        if public != entry["move"]:
            # a drawn tile: only its seat (and the journal) knows which
            extra["private"] = {"seat": getattr(move, "seat", None), "move": entry["move"]}
        self._emit(
            "move_accepted",
            hand_no=st.hand_no,
            move=public,
            text=self.public_text(self.display.move_text(move)),
            seat=getattr(move, "seat", None),
            index=st.accepted,
            cells=self._cells_of_move(move),
            **extra,
        )
        if was_correcting:
            self._emit("correction_cleared", reason="move accepted")
        self._say(None)
        self._after_move(now)
        self.display.publish()
        return True

    def _cells_of_move(self, move: Any) -> list[str]:
        """Where the moved pieces lie now (the last-move LEDs)."""
        s = self.state.sensed
        if s is None:
            return []
        names = [
            str(getattr(move, k))
            for k in ("tile", "give", "take")
            if getattr(move, k, None) is not None
        ]
        if type(move).__name__ == "Refresh":
            return list(self.geometry.kems_slots)
        if type(move).__name__ == "Announce":
            return []
        return [c for c, p in sorted(s.pieces.items()) if p in names]

    def _after_move(self, now: float) -> None:
        hand = self.hand
        if hand.is_over:
            if self.game.may_call_double(hand):
                self.state.finish_at = now + self.timing.double_window
                # not yet checked: a false Kems must not read as a success meanwhile
                caller = getattr(hand.events[-1], "seat", None) if hand.events else None
                self._say(
                    say("{seat} called Kems, not checked yet: the partner may still call double",
                        seat=self.rules.seat_label(caller))
                    if caller is not None
                    else say("Kems called, not checked yet: the partner may still call double"),
                    "info",
                )
            else:
                self.journal.finish(now)

    def _try_table_deal(self, now: float) -> None:
        """Table-dealt games: start the hand once the racks hold a deal."""
        st = self.state
        s = st.sensed
        if s is None or s.problems or now - st.changed_at < self.timing.error:
            return
        deal = self.rules.table_deal(s, random.Random(f"stock:{st.hand_no}"))
        if deal is None:
            return
        entry = {"type": "hand", **deal}
        try:
            self.journal.probe_hand(entry)
        except (ValueError, IllegalPlayError) as exc:
            self._say(say("waiting for the deal: {reason}", reason=self.engine_text(exc)), "info")
            return
        self.journal.commit(entry)
        self.journal.after_new_hand(now)
        self.display.publish()
