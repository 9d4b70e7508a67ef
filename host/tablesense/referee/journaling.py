"""The referee's journal side: a match is a list of entries (``match``,
``hand``, ``move``, ``reorder``, ``undo``, ``void``, ``finish``, and the
coach's ``review`` of a finished hand), each made
durable before it changes anything (:meth:`JournalMixin._commit`), and the
same entries rebuild the same game state (:meth:`JournalMixin.replay`),
which is how a crashed match resumes. A hand's life is here in one place:
its deal (:meth:`JournalMixin._next_hand`), its end
(:meth:`JournalMixin._finish`) and what follows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tablesense.games.common import HandResult, say
from tablesense.referee.base import RefereeBase
from tablesense.referee.public import public_move
from tablesense.referee.spec import RefereeError
from tablesense.referee.state import Phase
from tablesense.referee.view import _num, _result_text


class JournalMixin(RefereeBase):
    """Start, replay and the journal entries of a match."""

    def start(self, now: float = 0.0) -> None:
        """Begin a new match: journal it, announce it, deal the first hand."""
        self.now = now
        self._commit({"type": "match", "spec": self.spec.to_json(), "deal": self.deal_mode})
        self._emit("match_started", **self._match_info())
        self._next_hand(now)
        self.display.publish()

    def replay(self, entries: Sequence[dict[str, Any]], now: float = 0.0) -> None:
        """Rebuild the match from journal entries (the first is ``match``);
        nothing is emitted but a ``view`` and a message saying so."""
        self.now = now
        for entry in entries:
            if entry.get("type") == "match":
                self.entries.append(entry)
                self._set_deal_mode(str(entry.get("deal") or self.deal_mode))
                continue
            self._apply(entry)
            self.entries.append(entry)
        if self.match.is_over:
            self.phase = Phase.OVER
        elif self.hand is None:
            if self.deal_mode == "engine":
                self._next_hand(now)
            else:
                self.phase = Phase.DEALING
        else:
            self.phase = Phase.PLAY
            # the table is put back as the journal says (after a power cut
            # pieces may have moved, the demo's table restarts empty): no
            # mistake is called until it has stopped moving
            self.laying_out = True
            self.changed_at = max(self.changed_at, now)
            if self._hand_over_pending():
                self.finish_at = now
        self.resumed = True
        self._say(
            self._per_deal(
                hand=say(
                    "resumed from the journal: hand {n}, {moves} moves so far; "
                    "the table is being checked against it",
                    n=self.hand_no, moves=self.accepted,
                ),
                round=say(
                    "resumed from the journal: round {n}, {moves} moves so far; "
                    "the table is being checked against it",
                    n=self.hand_no, moves=self.accepted,
                ),
            ),
            "info",
        )
        self.display.publish()

    def _next_hand(self, now: float) -> None:
        if self.match.is_over:
            self.phase = Phase.OVER
            return
        if self.deal_mode == "table":
            self.phase = Phase.DEALING
            self._say(say("shuffle and deal: lay each player's pieces on their rack"), "info")
            return
        hand = self.match.new_hand(rng=self._deal_rng())
        entry = self._hand_entry(hand)
        # journal first, keep the state only once it is durable
        self.match.current = None
        self._commit(entry)
        self._after_new_hand(now)

    def _hand_entry(self, hand: Any) -> dict[str, Any]:
        return {"type": "hand", **self.game.deal_to_json(hand)}

    def _after_new_hand(self, now: float) -> None:
        self.phase = Phase.PLAY
        self.correction = None
        # the last hand's result stays in the side panel (``result``); the
        # banner makes way for the new hand
        self._restore()
        # the host dealt: the players (or the demo's hands) now gather the last
        # hand's pieces and lay out the new deal, which passes through tables
        # that look like swaps and stray tiles
        self.laying_out = self.deal_mode == "engine"
        # its waits count from the deal, not from when the old table last moved
        self.changed_at = max(self.changed_at, now)
        # the deal is for the table's own devices (the lights of a host deal),
        # never for a public display
        self._emit(
            "hand_started",
            hand_no=self.hand_no,
            to_play=self._to_play(),
            private={"deal": self.entries[-1].get("deal")},
        )
        misdeal = self.game.misdeal_reason(self.hand) if self.hand is not None else None
        if misdeal is not None:
            self._say(
                say(
                    "misdeal: {reason}; the cards are dealt again",
                    reason=self.engine_text(misdeal),
                ),
                "warning",
            )
            self._finish(now)

    def _finish(self, now: float) -> None:
        """The hand is over: journal its end, review it, tell the table, then
        the next hand (or the wait before it, or the match's end)."""
        self.finish_at = None
        self._commit({"type": "finish"})
        self.coaching.review_finished()
        result = self.last_result or {}
        # the coach's review of this hand: public (it names only tiles the
        # table saw), and privately as each seat may read it (its own tiles named)
        review = self.coaching.review_view() if self.coaching.on else None
        coached: dict[str, Any] = (
            {} if review is None else {"review": review, "private": {"reviews": self.coaching.review_private()}}
        )
        self._emit(
            "hand_ended",
            hand_no=self.hand_no,
            result=result,
            score=[_num(p) for p in self.match.score],
            record=self.display.record(),
            counts=self.display.rack_counts(),
            **coached,
        )
        self._say(_result_text(result, self.display.team_names(), self._hand_word()), "info", about="result")
        # the finished hand's whole line (the winning tile too) reaches the
        # display before the next hand replaces it
        self.display.publish()
        if self.match.is_over:
            self.phase = Phase.OVER
            self._emit(
                "match_ended",
                winner=self.match.winner,
                score=[_num(p) for p in self.match.score],
                record=self.display.record(),
                teams=self.display.team_names(),
            )
            self._say(say("match over: {team} win", team=self.display.team_names()[self.match.winner or 0]), "info")
        elif self.deal_mode == "engine" and self.timing.between_hands > 0:
            self.phase = Phase.BETWEEN
            self.next_hand_at = now + self.timing.between_hands
        else:
            self._next_hand(now)
        self.display.publish()

    def _commit(self, entry: dict[str, Any]) -> None:
        """Make ``entry`` durable, then apply it. Nothing changes when the
        journal refuses the write."""
        try:
            self._store(entry)
        except Exception as exc:
            raise RefereeError(
                f"the journal refused an entry ({exc}); nothing was changed"
            ) from exc
        self._apply(entry)
        self.entries.append(entry)

    def _apply(self, entry: dict[str, Any]) -> None:
        kind = entry["type"]
        if kind == "match":
            return
        if kind == "hand":
            self._apply_hand(entry)
            self._shown = set()
        elif kind == "move":
            self.hand.play(self._move_from_json(entry["move"]))
            self.accepted += 1
            # the display's last move: a drawn tile stays with its seat
            self.last_move = public_move(entry["move"])
        elif kind == "reorder":
            self._apply_reorder(entry)
        elif kind == "undo":
            self.hand.undo()
            self.accepted = max(0, self.accepted - 1)
            self.last_move = None
            self.finish_at = None  # the hand's end waited for the undone move
        elif kind == "void":
            self.game.void_hand(self.match, entry.get("reason", "void"))
            self._after_finish(None)
        elif kind == "finish":
            self._after_finish(self.match.finish_hand())
        elif kind == "review":
            self.coaching.apply_review(entry)
            return
        else:
            raise RefereeError(f"unknown journal entry type {kind!r}")
        if self.hand is not None:
            self._shown |= self.game.face_up(self.hand)

    def _apply_hand(self, entry: dict[str, Any]) -> None:
        self.hand_no += 1
        # table-dealt: the boneyard is face down, a draw may take any tile
        # and the engine records the order as drawn
        self.game.start_hand(self.match, entry, free_draw=self.deal_mode == "table")

    def _apply_reorder(self, entry: dict[str, Any]) -> None:
        hand = self.hand
        if "boneyard" in entry:
            from tablesense.games.dominoes import Tile

            # Journals written before the engine's free draw: the order is now
            # learnt by the draw that follows (the hand of a table-dealt match
            # takes any boneyard tile), so the entry only has to agree.
            tiles = sorted(Tile.parse(t) for t in entry["boneyard"])
            if tiles != sorted(hand.boneyard):
                raise RefereeError("a boneyard reorder must keep the same tiles")
        if "stock" in entry:
            from tablesense.games.kems import Card

            hand.stock[:] = [Card.parse(c) for c in entry["stock"]]
            hand.initial_stock = tuple(Card.parse(c) for c in entry["initial"])

    def _after_finish(self, result: HandResult | None) -> None:
        self.finish_at = None
        self.correction = None
        if result is not None:
            self.last_hand_no = self.hand_no
            self.last_result = {"hand_no": self.hand_no, **result.to_json()}
        else:
            self.last_result = {
                "hand_no": self.hand_no,
                "outcome": "void",
                "winner": None,
                "points": [],
            }

    def _probe_hand(self, entry: dict[str, Any]) -> None:
        """Raise ValueError when the engine refuses this deal (state unchanged)."""
        current, hand_no = self.match.current, self.hand_no
        try:
            self._apply_hand(entry)
        finally:
            self.match.current = current
            self.hand_no = hand_no

    def _move_from_json(self, obj: dict[str, Any]) -> Any:
        return self.game.move_from_json(obj)

    def _move_to_json(self, move: Any) -> dict[str, Any]:
        return self.game.move_to_json(move)
