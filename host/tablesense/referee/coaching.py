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
from typing import Any, cast

from tablesense.games.common import say
from tablesense.i18n import N_
from tablesense.referee.base import RefereeBase
from tablesense.referee.rules import DELAY_NOW, Rejection

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


class CoachMixin(RefereeBase):
    """The coach's part of the referee (off until :meth:`set_coach`)."""

    def set_coach(self, on: bool) -> None:
        """Turn the coach on or off for this table (``play --coach``,
        ``demo --coach``). A tournament table never turns it on."""
        if not on:
            self.coach = None
            return
        self.coach = self.game.coach(worlds=COACH_WORLDS)

    # ------------------------------------------------------------ suggestion
    def _coach_press(self, seat: int, now: float) -> None:
        """A long press of ``seat``'s button (or its page's "Suggest a move")."""
        who = self.rules.seat_label(seat)
        if self.coach is None:
            self._coach_refuse(seat, say("{seat}: the coach is off at this table", seat=who))
            return
        if self.phase != "play" or self.hand is None or self.hand.is_over:
            self._coach_refuse(
                seat,
                self._per_deal(
                    hand=say("{seat}: the coach suggests a move while a hand is played", seat=who),
                    round=say("{seat}: the coach suggests a move while a round is played", seat=who),
                ),
            )
            return
        if self.laying_out:
            # a host deal not on the racks yet: a hint about pieces the seat
            # cannot see yet would only confuse
            self._coach_refuse(
                seat, say("{seat}: the coach answers once the deal is laid out", seat=who)
            )
            return
        self._evaluate_now(now)  # a move the table already shows counts first
        hand = self.hand
        if self.game.has_turns:
            if seat != self.game.to_play(hand):
                self._coach_refuse(
                    seat, say("{seat}: the coach suggests a move on your turn", seat=who)
                )
                return
            self._coach_private(seat, self._domino_suggestion(seat))
        else:
            self._coach_private(seat, self._kems_suggestion(seat))

    def _coach_refuse(self, seat: int, text: str) -> None:
        self._notice(Rejection("coach_unavailable", text, (), DELAY_NOW, seat=seat))

    def _coach_rng(self, seat: int) -> random.Random:
        return random.Random(
            f"tablesense-coach:{self.spec.seed}:{self.hand_no}:{self.accepted}:{seat}"
        )

    def _rack_cell(self, seat: int, piece: str | None) -> list[str]:
        """The cell of ``seat``'s rack that holds ``piece`` (never any other cell)."""
        s = self.sensed
        if piece is None or s is None:
            return []
        return [c for c in self.geometry.seats[seat].rack if s.pieces.get(c) == piece]

    def _domino_suggestion(self, seat: int) -> dict[str, Any]:
        from tablesense.games.coach import move_words
        from tablesense.games.dominoes import Play, move_to_json

        sug = self.coach.suggest(self.hand, seat, self._coach_rng(seat))
        piece = str(sug.move.tile) if isinstance(sug.move, Play) else None
        return {
            "kind": "suggestion",
            "text": self.engine_text(sug.text),
            "move": move_to_json(sug.move),
            "piece": piece,
            "cells": self._rack_cell(seat, piece),
            **self._coach_target(sug.move),
            "options": [
                {"text": move_words(m), "points": round(v, 1)} for m, v in sug.values[:3]
            ],
        }

    def _coach_target(self, move: Any) -> dict[str, Any]:
        """Where a suggested play goes: its arm (``end``: left, right, or
        center for the opening) and the line cell it is laid on
        (``target``). Lighting that cell tells the table no more than the
        seat to play shows a moment later; only a play has one."""
        from tablesense.referee.rules import DominoRules

        if type(move).__name__ != "Play":
            return {}
        rules = cast("DominoRules", self.rules)  # asked by the dominoes suggestion only
        end = rules.end_of(move) if self.hand.line else None
        cell = rules.target_cell(end)
        return {"end": end or "center", "target": [cell] if cell else []}

    def _kems_suggestion(self, seat: int) -> dict[str, Any]:
        from tablesense.games.kems import event_to_json
        from tablesense.referee.words import pretty_sentence

        advice = self.coach.suggest(self.hand, seat, self._coach_rng(seat))
        action = advice.action
        return {
            "kind": "suggestion",
            "text": pretty_sentence(self.engine_text(advice.text), self.game),
            "move": None if action is None else event_to_json(action),
            "piece": advice.give,
            "take": advice.take,
            "cells": self._rack_cell(seat, advice.give),
            "options": [],
        }

    def _coach_private(self, seat: int, data: dict[str, Any]) -> None:
        """Publish the coach's answer for ``seat``'s own devices only."""
        self._emit(
            "coach",
            seat=seat,
            hand_no=self.hand_no,
            private={"seat": seat, **data},
        )

    # ---------------------------------------------------------------- review
    def _review_finished(self) -> None:
        """After a dominoes hand: review it, journal the review (a resumed
        match keeps it) and show it (``view.review``)."""
        if self.coach is None or not self.game.reviews_hands:
            return
        done = self._finished()
        if not done:
            return
        index = len(done) - 1
        rng = random.Random(f"tablesense-review:{self.spec.seed}:{index}")
        mistakes = self.coach.review(done[-1], rng)
        self._commit(
            {
                "type": "review",
                "hand": index,
                "hand_no": self.last_hand_no,
                "lines": [m.to_json() for m in mistakes],
            }
        )

    def _apply_review(self, entry: dict[str, Any]) -> None:
        """A journal ``review`` entry: the hand's costliest moves."""
        from tablesense.games.coach import Mistake

        index = int(entry["hand"])
        self.reviews[index] = [Mistake.from_json(x) for x in entry.get("lines") or []]
        self.review_hand = (index, entry.get("hand_no") or index + 1)

    def _review_view(self) -> dict[str, Any] | None:
        """The last review as the display shows it (public: see the module
        docstring for which tiles it names)."""
        if self.review_hand is None:
            return None
        index, hand_no = self.review_hand
        done = self._finished()
        if index >= len(done):
            return None
        hand = done[index]
        shown = _shown_in(hand)
        return {
            "hand_no": hand_no,
            "lines": [self.engine_text(m.sentence(shown)) for m in self.reviews[index]],
        }

    def _review_private(self) -> list[dict[str, Any]]:
        """The last review as each seat may read it: its own moves' tiles
        named (it held them), the others' as the display shows them."""
        if self.review_hand is None:
            return []
        index, hand_no = self.review_hand
        done = self._finished()
        if index >= len(done):
            return []
        hand = done[index]
        shown = _shown_in(hand)
        mistakes = self.reviews[index]
        return [
            {
                "seat": seat,
                "hand_no": hand_no,
                "lines": [
                    self.engine_text(m.sentence(None if m.seat == seat else shown))
                    for m in mistakes
                ],
            }
            for seat in range(len(self.spec.seat_names))
        ]

    def coached_record(self, record: dict[str, Any]) -> dict[str, Any]:
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
