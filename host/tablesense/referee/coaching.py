"""The coach at the table: a suggested move for one seat, on request, and a
review of the costliest moves after each hand.

Who may see what (why the data travel as they do):

- **The suggestion is private.** It names a tile of the asking seat's rack
  and the seat's plan, so it travels as a ``coach`` event whose whole content
  is under the :data:`~tablesense.outputs.events.PRIVATE_KEY` (``private``):
  :func:`~tablesense.outputs.events.public_event` strips it for every public
  channel (``/ws``, ``/events``, ``/api/history``, ``/api/view``, the
  display page), which keep only ``seat`` and ``hand_no`` (that a seat asked,
  which everyone at the table saw it do). The table's own devices read the
  private part: the seat's keyed table-top page (:mod:`.sit`), the seat's
  keyed page of ``play --coach`` (:mod:`tablesense.web.seat_page`, on the
  player's phone) and the cell LEDs (the ``coach`` layer of
  :mod:`tablesense.outputs.cell_leds`), which light the tile's cell on that
  seat's rack and, for a dominoes play, the line cell it goes to: only the
  seat to play may ask, and the table sees that cell filled a moment later.
  A Kems hint's board card stays off the LEDs (every seat may race for it).
- **A refusal is public** (the coach is off, not your turn): it names no
  tile, and a table with only LEDs has nowhere else to say it.
- **The review is public**, about moves everyone saw made. A better move's
  tile is named only if the table saw it in that hand (laid on the line or
  announced); a tile that stayed in a rack reads "a tile not shown", since in
  some variants (``brazilian-points`` going out) the racks are never turned
  up. The game record's ``x-review`` names every tile: the record holds the
  whole deal anyway.

The review is computed when the hand ends, journaled (a ``review`` entry:
a resumed match keeps its reviews without recomputing them) and written
into the record under each hand's ``x-review`` key, which ``tablesense
rules replay`` ignores (the record format lets a writer add ``x-`` fields).
"""

from __future__ import annotations

import random
from typing import Any, Protocol, cast

from tablesense.games.common import say
from tablesense.i18n import N_
from tablesense.referee.facts import RefereeFacts
from tablesense.referee.rules import DELAY_NOW, Rejection
from tablesense.referee.state import Phase

#: ``{seat}`` as :func:`~tablesense.referee.words.engine_sentence` rewrites
#: the coach's "seat {seat} ..." (the catalogs hold both).
COACH_NAMED = (
    N_("{seat} chose to {played}; to {better} was worth about {loss} points more"),
    N_("call contre on {target}"),
)

#: Sampled worlds per coach evaluation: about 7 ms median, 110 ms at worst
#: per suggestion and 0.2-0.3 s per hand's review on the 2-core test machine
#: (docs/players.md, "The coach").
COACH_WORLDS = 40


class _Journal(Protocol):
    def commit(self, entry: dict[str, Any]) -> None: ...


class CoachedReferee(RefereeFacts, Protocol):
    """What the coach reads of the referee it is part of (and the two things
    it asks of it: to judge the table now, to journal an entry)."""

    @property
    def journal(self) -> _Journal: ...

    def _emit(self, kind: str, /, **data: Any) -> Any: ...

    def _notice(self, rejection: Rejection) -> None: ...

    def _per_deal(self, hand: str, round: str) -> str: ...

    def _finished(self) -> list[Any]: ...

    def engine_text(self, message: object) -> str: ...

    def _evaluate_now(self, now: float) -> None: ...


class TableCoach:
    """The coach's part of the referee (``referee.coaching``), off until
    :meth:`turn` turns it on: the suggestion on a seat's request
    (:meth:`press`) and the review of each finished hand, journaled
    (:meth:`review_finished`, :meth:`apply_review`), as the display and each
    seat read it (:meth:`review_view`, :meth:`review_private`) and in the
    game record (:meth:`annotate`)."""

    def __init__(self, referee: CoachedReferee) -> None:
        self.ref = referee
        self.engine: Any = None
        """The game's coach (``Game.coach``): None while the coach is off."""
        self.reviews: dict[int, list[Any]] = {}
        """Finished hand index -> the coach's review (its costliest moves)."""
        self.review_hand: tuple[int, int] | None = None
        """The last review shown: (finished hand index, hand number)."""

    @property
    def on(self) -> bool:
        return self.engine is not None

    def turn(self, on: bool) -> None:
        """Turn the coach on or off for this table (``play --coach``,
        ``demo --coach``). A tournament table never turns it on."""
        self.engine = self.ref.game.coach(worlds=COACH_WORLDS) if on else None

    # ------------------------------------------------------------ suggestion
    def press(self, seat: int, now: float) -> None:
        """A long press of ``seat``'s button (or its page's "Suggest a move")."""
        ref = self.ref
        who = ref.rules.seat_label(seat)
        if self.engine is None:
            self._refuse(seat, say("{seat}: the coach is off at this table", seat=who))
            return
        if ref.state.phase is not Phase.PLAY or ref.hand is None or ref.hand.is_over:
            self._refuse(
                seat,
                ref._per_deal(
                    hand=say("{seat}: the coach suggests a move while a hand is played", seat=who),
                    round=say("{seat}: the coach suggests a move while a round is played", seat=who),
                ),
            )
            return
        if ref.state.laying_out:
            # a host deal not on the racks yet: a hint about pieces the seat
            # cannot see yet would only confuse
            self._refuse(seat, say("{seat}: the coach answers once the deal is laid out", seat=who))
            return
        ref._evaluate_now(now)  # a move the table already shows counts first
        hand = ref.hand
        if ref.game.has_turns:
            if seat != ref.game.to_play(hand):
                self._refuse(seat, say("{seat}: the coach suggests a move on your turn", seat=who))
                return
            self._private(seat, self._domino_suggestion(seat))
        else:
            self._private(seat, self._kems_suggestion(seat))

    def _refuse(self, seat: int, text: str) -> None:
        self.ref._notice(Rejection("coach_unavailable", text, (), DELAY_NOW, seat=seat))

    def _rng(self, seat: int) -> random.Random:
        ref = self.ref
        return random.Random(f"tablesense-coach:{ref.spec.seed}:{ref.state.hand_no}:{ref.state.accepted}:{seat}")

    def _rack_cell(self, seat: int, piece: str | None) -> list[str]:
        """The cell of ``seat``'s rack that holds ``piece`` (never any other cell)."""
        s = self.ref.state.sensed
        if piece is None or s is None:
            return []
        return [c for c in self.ref.geometry.seats[seat].rack if s.pieces.get(c) == piece]

    def _domino_suggestion(self, seat: int) -> dict[str, Any]:
        from tablesense.games.coach import move_words
        from tablesense.games.dominoes import Play, move_to_json

        sug = self.engine.suggest(self.ref.hand, seat, self._rng(seat))
        piece = str(sug.move.tile) if isinstance(sug.move, Play) else None
        return {
            "kind": "suggestion",
            "text": self.ref.engine_text(sug.text),
            "move": move_to_json(sug.move),
            "piece": piece,
            "cells": self._rack_cell(seat, piece),
            **self._target(sug.move),
            "options": [
                {"text": move_words(m), "points": round(v, 1)} for m, v in sug.values[:3]
            ],
        }

    def _target(self, move: Any) -> dict[str, Any]:
        """Where a suggested play goes: its arm (``end``: left, right, or
        center for the opening) and the line cell it is laid on
        (``target``). Lighting that cell tells the table no more than the
        seat to play shows a moment later; only a play has one."""
        from tablesense.referee.rules import DominoRules

        if type(move).__name__ != "Play":
            return {}
        rules = cast("DominoRules", self.ref.rules)  # asked by the dominoes suggestion only
        end = rules.end_of(move) if self.ref.hand.line else None
        cell = rules.target_cell(end)
        return {"end": end or "center", "target": [cell] if cell else []}

    def _kems_suggestion(self, seat: int) -> dict[str, Any]:
        from tablesense.games.kems import event_to_json
        from tablesense.referee.words import pretty_sentence

        advice = self.engine.suggest(self.ref.hand, seat, self._rng(seat))
        action = advice.action
        return {
            "kind": "suggestion",
            "text": pretty_sentence(self.ref.engine_text(advice.text), self.ref.game),
            "move": None if action is None else event_to_json(action),
            "piece": advice.give,
            "take": advice.take,
            "cells": self._rack_cell(seat, advice.give),
            "options": [],
        }

    def _private(self, seat: int, data: dict[str, Any]) -> None:
        """Publish the coach's answer for ``seat``'s own devices only."""
        self.ref._emit("coach", seat=seat, hand_no=self.ref.state.hand_no, private={"seat": seat, **data})

    # ---------------------------------------------------------------- review
    def review_finished(self) -> None:
        """After a dominoes hand: review it, journal the review (a resumed
        match keeps it) and show it (``view.review``)."""
        ref = self.ref
        if self.engine is None or not ref.game.reviews_hands:
            return
        done = ref._finished()
        if not done:
            return
        index = len(done) - 1
        rng = random.Random(f"tablesense-review:{ref.spec.seed}:{index}")
        mistakes = self.engine.review(done[-1], rng)
        ref.journal.commit(
            {
                "type": "review",
                "hand": index,
                "hand_no": ref.state.last_hand_no,
                "lines": [m.to_json() for m in mistakes],
            }
        )

    def apply_review(self, entry: dict[str, Any]) -> None:
        """A journal ``review`` entry: the hand's costliest moves."""
        from tablesense.games.coach import Mistake

        index = int(entry["hand"])
        self.reviews[index] = [Mistake.from_json(x) for x in entry.get("lines") or []]
        self.review_hand = (index, entry.get("hand_no") or index + 1)

    def _last_review(self) -> tuple[int, Any, set[str]] | None:
        """The last review's hand number, its finished hand and the tiles the table saw in it."""
        if self.review_hand is None:
            return None
        index, hand_no = self.review_hand
        done = self.ref._finished()
        if index >= len(done):
            return None
        return hand_no, self.reviews[index], _shown_in(done[index])

    def review_view(self) -> dict[str, Any] | None:
        """The last review as the display shows it (public: see the module
        docstring for which tiles it names)."""
        last = self._last_review()
        if last is None:
            return None
        hand_no, mistakes, shown = last
        return {"hand_no": hand_no, "lines": [self.ref.engine_text(m.sentence(shown)) for m in mistakes]}

    def review_private(self) -> list[dict[str, Any]]:
        """The last review as each seat may read it: its own moves' tiles
        named (it held them), the others' as the display shows them."""
        last = self._last_review()
        if last is None:
            return []
        hand_no, mistakes, shown = last
        return [
            {
                "seat": seat,
                "hand_no": hand_no,
                "lines": [
                    self.ref.engine_text(m.sentence(None if m.seat == seat else shown))
                    for m in mistakes
                ],
            }
            for seat in range(len(self.ref.spec.seat_names))
        ]

    def annotate(self, record: dict[str, Any]) -> dict[str, Any]:
        """``record`` with each reviewed hand's ``x-review`` (in place)."""
        hands = record.get("hands") or []
        for index, mistakes in self.reviews.items():
            if index < len(hands):
                hands[index]["x-review"] = [m.to_json() for m in mistakes]
        return record


def _shown_in(hand: Any) -> set[str]:
    """The tiles the whole table saw during a hand: laid on the line or
    announced (a tile left in a rack may never be turned up)."""
    return {str(lp.tile) for lp in hand.line} | {
        str(m.tile) for m in hand.moves if type(m).__name__ == "Announce"
    }
