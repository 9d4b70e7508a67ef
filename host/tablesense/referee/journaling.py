"""The referee's journal: a match is a list of entries (``match``,
``hand``, ``move``, ``reorder``, ``undo``, ``void``, ``finish``, and the
coach's ``review`` of a finished hand), each made durable before it changes
anything (:meth:`TableJournal.commit`), and the same entries rebuild the
same game state (:meth:`TableJournal.replay`), which is how a crashed match
resumes. A hand's life is here in one place: its deal
(:meth:`TableJournal.next_hand`), its end (:meth:`TableJournal.finish`) and
what follows it.

The journal is a part composed into the referee (``referee.journal``), as
the buttons, the coach and the display are: it holds the store and the
entries, writes the match's :class:`~tablesense.referee.state.MatchState`,
and reads the rest of the referee through :class:`JournaledReferee`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from tablesense.games.common import HandResult, message_of, say
from tablesense.referee.facts import RefereeFacts
from tablesense.referee.public import public_move
from tablesense.referee.spec import Emit, RefereeError
from tablesense.referee.state import DealMode, Phase
from tablesense.referee.view import TableDisplay, _num, _result_text

#: Makes a journal entry durable before it returns (raises when it cannot).
Store = Callable[[dict[str, Any]], object]


class _Reviewer(Protocol):
    @property
    def on(self) -> bool: ...

    def review_finished(self) -> None: ...

    def review_view(self) -> dict[str, Any] | None: ...

    def review_private(self) -> list[dict[str, Any]]: ...

    def apply_review(self, entry: dict[str, Any]) -> None: ...


class JournaledReferee(RefereeFacts, Protocol):
    """What the journal reads of the referee it is part of, and what it asks
    of it: to publish and say what an entry changed, and the coach to review
    a finished hand."""

    @property
    def display(self) -> TableDisplay: ...

    @property
    def coaching(self) -> _Reviewer: ...

    @property
    def _emit(self) -> Emit: ...

    def _say(self, text: str | None, level: str = "info", about: str | None = None) -> None: ...

    def _restore(self) -> None: ...

    def _per_deal(self, hand: str, round: str) -> str: ...

    def engine_text(self, message: object) -> str: ...

    def _to_play(self) -> int | None: ...

    def _target(self) -> Any: ...

    def _finished(self) -> list[Any]: ...


class TableJournal:
    """The journal's part of the referee (``referee.journal``): start, replay
    and the entries of a match, a hand's deal and its end."""

    def __init__(self, referee: JournaledReferee, store: Store | None = None) -> None:
        self.ref = referee
        self.store: Store = store or (lambda entry: None)
        self.entries: list[dict[str, Any]] = []
        """Every entry of the match so far, the ``match`` one first."""

    def set_deal_mode(self, mode: DealMode) -> None:
        """``engine``: the host deals; ``table``: each deal is read from the
        racks, and the face-down boneyard/stock order is learnt as it shows."""
        self.ref.state.deal_mode = mode
        self.ref.rules.set_table_dealt(mode is DealMode.TABLE)

    def _match_info(self) -> dict[str, Any]:
        ref = self.ref
        return {
            "game": ref.spec.game,
            "variant": ref.spec.variant,
            "seats": ref.spec.seat_names,
            "kinds": ref.spec.seat_kinds,
            "target": ref._target(),
            "table": ref.geometry.name,
        }

    def _deal_rng(self) -> random.Random:
        return random.Random(f"tablesense-deal:{self.ref.spec.seed}:{len(self.ref._finished())}")

    def start(self, now: float = 0.0) -> None:
        """Begin a new match: journal it, announce it, deal the first hand."""
        ref = self.ref
        ref.state.now = now
        self.commit({"type": "match", "spec": ref.spec.to_json(), "deal": ref.state.deal_mode.value})
        ref._emit("match_started", **self._match_info())
        self.next_hand(now)
        ref.display.publish()

    def replay(self, entries: Sequence[dict[str, Any]], now: float = 0.0) -> None:
        """Rebuild the match from journal entries (the first is ``match``);
        nothing is emitted but a ``view`` and a message saying so."""
        ref, st = self.ref, self.ref.state
        st.now = now
        for entry in entries:
            if entry.get("type") == "match":
                self.entries.append(entry)
                self.set_deal_mode(DealMode(str(entry.get("deal") or st.deal_mode)))
                continue
            self._apply(entry)
            self.entries.append(entry)
        if ref.match.is_over:
            st.phase = Phase.OVER
        elif ref.hand is None:
            if st.deal_mode is DealMode.ENGINE:
                self.next_hand(now)
            else:
                st.phase = Phase.DEALING
        else:
            st.phase = Phase.PLAY
            # the table is put back as the journal says (after a power cut
            # pieces may have moved, the demo's table restarts empty): no
            # mistake is called until it has stopped moving
            st.laying_out = True
            st.changed_at = max(st.changed_at, now)
            if ref.hand.is_over:
                # the hand in play is over, its end not journaled yet
                st.finish_at = now
        st.resumed = True
        ref._say(
            ref._per_deal(
                hand=say(
                    "resumed from the journal: hand {n}, {moves} moves so far; "
                    "the table is being checked against it",
                    n=st.hand_no, moves=st.accepted,
                ),
                round=say(
                    "resumed from the journal: round {n}, {moves} moves so far; "
                    "the table is being checked against it",
                    n=st.hand_no, moves=st.accepted,
                ),
            ),
            "info",
        )
        ref.display.publish()

    def next_hand(self, now: float) -> None:
        """Deal the next hand (host-dealt), or wait for the table's deal, or
        end the match."""
        ref, st = self.ref, self.ref.state
        if ref.match.is_over:
            st.phase = Phase.OVER
            return
        if st.deal_mode is DealMode.TABLE:
            st.phase = Phase.DEALING
            ref._say(say("shuffle and deal: lay each player's pieces on their rack"), "info")
            return
        hand = ref.match.new_hand(rng=self._deal_rng())
        entry = {"type": "hand", **ref.game.deal_to_json(hand)}
        # journal first, keep the state only once it is durable
        ref.match.current = None
        self.commit(entry)
        self.after_new_hand(now)

    def after_new_hand(self, now: float) -> None:
        """A hand was dealt (journaled): play, and tell the table."""
        ref, st = self.ref, self.ref.state
        st.phase = Phase.PLAY
        st.correction = None
        # the last hand's result stays in the side panel (``result``); the
        # banner makes way for the new hand
        ref._restore()
        # the host dealt: the players (or the demo's hands) now gather the last
        # hand's pieces and lay out the new deal, which passes through tables
        # that look like swaps and stray tiles
        st.laying_out = st.deal_mode is DealMode.ENGINE
        # its waits count from the deal, not from when the old table last moved
        st.changed_at = max(st.changed_at, now)
        # the deal is for the table's own devices (the lights of a host deal),
        # never for a public display
        ref._emit(
            "hand_started",
            hand_no=st.hand_no,
            to_play=ref._to_play(),
            private={"deal": self.entries[-1].get("deal")},
        )
        misdeal = ref.game.misdeal_reason(ref.hand) if ref.hand is not None else None
        if misdeal is not None:
            ref._say(
                say(
                    "misdeal: {reason}; the cards are dealt again",
                    reason=ref.engine_text(misdeal),
                ),
                "warning",
            )
            self.finish(now)

    def finish(self, now: float) -> None:
        """The hand is over: journal its end, review it, tell the table, then
        the next hand (or the wait before it, or the match's end)."""
        ref, st = self.ref, self.ref.state
        st.finish_at = None
        self.commit({"type": "finish"})
        ref.coaching.review_finished()
        result = st.last_result or {}
        # the coach's review of this hand: public (it names only tiles the
        # table saw), and privately as each seat may read it (its own tiles named)
        review = ref.coaching.review_view() if ref.coaching.on else None
        coached: dict[str, Any] = (
            {} if review is None else {"review": review, "private": {"reviews": ref.coaching.review_private()}}
        )
        ref._emit(
            "hand_ended",
            hand_no=st.hand_no,
            result=result,
            score=[_num(p) for p in ref.match.score],
            record=ref.display.record(),
            counts=ref.display.rack_counts(),
            **coached,
        )
        ref._say(_result_text(result, ref.display.team_names(), ref.game.deal_word), "info", about="result")
        # the finished hand's whole line (the winning tile too) reaches the
        # display before the next hand replaces it
        ref.display.publish()
        if ref.match.is_over:
            st.phase = Phase.OVER
            ref._emit(
                "match_ended",
                winner=ref.match.winner,
                score=[_num(p) for p in ref.match.score],
                record=ref.display.record(),
                teams=ref.display.team_names(),
            )
            ref._say(say("match over: {team} win", team=ref.display.team_names()[ref.match.winner or 0]), "info")
        elif st.deal_mode is DealMode.ENGINE and ref.timing.between_hands > 0:
            st.phase = Phase.BETWEEN
            st.next_hand_at = now + ref.timing.between_hands
        else:
            self.next_hand(now)
        ref.display.publish()

    def commit(self, entry: dict[str, Any]) -> None:
        """Make ``entry`` durable, then apply it. Nothing changes when the
        journal refuses the write."""
        try:
            self.store(entry)
        except Exception as exc:
            raise RefereeError(
                f"the journal refused an entry ({exc}); nothing was changed"
            ) from exc
        self._apply(entry)
        self.entries.append(entry)

    def _apply(self, entry: dict[str, Any]) -> None:
        ref, st = self.ref, self.ref.state
        kind = entry["type"]
        if kind == "match":
            return
        if kind == "hand":
            self._apply_hand(entry)
            st.shown = set()
        elif kind == "move":
            ref.hand.play(ref.game.move_from_json(entry["move"]))
            st.accepted += 1
            # the display's last move: a drawn tile stays with its seat
            st.last_move = public_move(entry["move"])
        elif kind == "reorder":
            self._apply_reorder(entry)
        elif kind == "undo":
            ref.hand.undo()
            st.accepted = max(0, st.accepted - 1)
            st.last_move = None
            st.finish_at = None  # the hand's end waited for the undone move
        elif kind == "void":
            ref.game.void_hand(ref.match, entry.get("reason", "void"))
            self._after_finish(None)
        elif kind == "finish":
            self._after_finish(ref.match.finish_hand())
        elif kind == "review":
            ref.coaching.apply_review(entry)
            return
        else:
            raise RefereeError(f"unknown journal entry type {kind!r}")
        if ref.hand is not None:
            st.shown |= ref.game.face_up(ref.hand)

    def _apply_hand(self, entry: dict[str, Any]) -> None:
        ref = self.ref
        ref.state.hand_no += 1
        # table-dealt: the boneyard is face down, a draw may take any tile
        # and the engine records the order as drawn
        ref.game.start_hand(ref.match, entry, free_draw=ref.state.deal_mode is DealMode.TABLE)

    def _apply_reorder(self, entry: dict[str, Any]) -> None:
        try:
            self.ref.game.apply_reorder(self.ref.hand, entry)
        except ValueError as exc:
            raise RefereeError(message_of(exc)) from None

    def _after_finish(self, result: HandResult | None) -> None:
        st = self.ref.state
        st.finish_at = None
        st.correction = None
        if result is not None:
            st.last_hand_no = st.hand_no
            st.last_result = {"hand_no": st.hand_no, **result.to_json()}
        else:
            st.last_result = {
                "hand_no": st.hand_no,
                "outcome": "void",
                "winner": None,
                "points": [],
            }

    def probe_hand(self, entry: dict[str, Any]) -> None:
        """Raise ValueError when the engine refuses this deal (state unchanged)."""
        ref = self.ref
        current, hand_no = ref.match.current, ref.state.hand_no
        try:
            self._apply_hand(entry)
        finally:
            ref.match.current = current
            ref.state.hand_no = hand_no
