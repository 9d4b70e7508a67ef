"""The dominoes coach: a suggested move for one seat, and a review after the hand.

Both come from the ``search`` player's evaluation
(:meth:`~tablesense.games.dominoes_players.search.SearchPlayer.evaluate`), computed
from what the seat may know at that moment — never from the other hands, so
the coach cannot leak a hidden tile even to the seat it helps.

- :meth:`DominoCoach.suggest` answers "what would you play?" for the seat to
  play. The :class:`Suggestion` names that seat (``for_seat``): whoever shows
  it (the seat's own device, or its rack LEDs) must show it to that seat
  only; it is never part of the public table state or the record.
- :meth:`DominoCoach.review` replays a finished hand and, at every decision
  that had a choice, compares the move made with the best one by expected
  points (the side's points minus the best other side's, per hand). The
  moves that cost the most become :class:`Mistake` lines in plain words;
  :func:`annotate_record` stores them in the game record under the
  ``x-review`` key of each hand (the record format lets a writer add ``x-``
  fields; ``replay`` ignores them).

Expected points are estimates from sampled worlds: a small "loss" is noise,
so the review only lists moves that cost at least ``min_loss`` points.

Every text is a :class:`~tablesense.games.common.Sentence` (English that
remembers its template), so the referee translates it into the table's
language when it publishes it, and names seats ("seat {seat}", 0-based here)
the way the table does. :meth:`Mistake.sentence` can leave unnamed a tile the
table has not seen (``shown``): the public review of a hand must not reveal a
tile that stayed hidden in a rack.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from tablesense.games.common import Sentence, say
from tablesense.games.dominoes import (
    Announce,
    DominoHand,
    DominoMove,
    Draw,
    Pass,
    Play,
    move_from_json,
    move_to_json,
)
from tablesense.games.dominoes_players.search import SearchPlayer

__all__ = [
    "DominoCoach",
    "KemsAdvice",
    "KemsCoach",
    "Mistake",
    "Suggestion",
    "annotate_record",
    "kems_words",
    "move_words",
]


def move_words(m: DominoMove, shown: Collection[str] | None = None) -> Sentence:
    """A move in plain words ("lay 3-5 on the left end"); with ``shown`` (the
    tiles the whole table has seen), a tile not among them stays unnamed."""
    if isinstance(m, Play):
        if shown is not None and str(m.tile) not in shown:
            if m.end == "left":
                return say("lay a tile not shown on the left end")
            if m.end == "right":
                return say("lay a tile not shown on the right end")
            return say("lay a tile not shown")
        if m.end == "left":
            return say("lay {tile} on the left end", tile=str(m.tile))
        if m.end == "right":
            return say("lay {tile} on the right end", tile=str(m.tile))
        return say("lay {tile}", tile=str(m.tile))
    if isinstance(m, Draw):
        return say("draw")
    if isinstance(m, Pass):
        return say("pass")
    assert isinstance(m, Announce)
    if shown is not None and str(m.tile) not in shown:
        return say("announce a double")
    return say("announce {tile}", tile=str(m.tile))


@dataclass(frozen=True)
class Suggestion:
    """A private hint: show it to ``for_seat`` only."""

    for_seat: int
    move: DominoMove
    text: Sentence
    values: tuple[tuple[DominoMove, float], ...]
    """Every candidate with its expected points (best first)."""


@dataclass(frozen=True)
class Mistake:
    """One costly move of a finished hand."""

    move_index: int
    seat: int
    played: DominoMove
    better: DominoMove
    loss: float
    """Expected points the side gave away with ``played``."""

    @property
    def text(self) -> Sentence:
        """The line in plain words, every tile named (the record's, a seat's own)."""
        return self.sentence(None)

    def sentence(self, shown: Collection[str] | None) -> Sentence:
        """The line with only the tiles in ``shown`` named (None: all)."""
        return say(
            "seat {seat} chose to {played}; to {better} was worth about {loss} points more",
            seat=self.seat,
            played=move_words(self.played, shown),
            better=move_words(self.better, shown),
            loss=round(self.loss, 1),
        )

    def to_json(self) -> dict[str, Any]:
        """The ``x-review`` entry: moves in the record's own form (``move`` is
        the index in the hand's ``moves``), the loss, and the line in English."""
        return {
            "move": self.move_index,
            "seat": self.seat,
            "played": move_to_json(self.played),
            "better": move_to_json(self.better),
            "loss": round(self.loss, 2),
            "text": str(self.text),
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Mistake:
        """Back from :meth:`to_json` (a journal's review entry); ValueError
        when it is not one."""
        try:
            return cls(
                int(obj["move"]),
                int(obj["seat"]),
                move_from_json(obj["played"]),
                move_from_json(obj["better"]),
                float(obj["loss"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a review line: {obj!r} ({exc})") from None


@dataclass
class DominoCoach:
    """Suggestions and reviews from the search player's evaluation.

    ``worlds``: sampled worlds per evaluated decision (no time budget, so a
    review is the same for a seed); ``top``: how many mistakes a review
    keeps; ``min_loss``: the smallest loss worth a line."""

    worlds: int = 40
    top: int = 3
    min_loss: float = 0.5

    def _player(self) -> SearchPlayer:
        # the coach speaks of points per hand: where the search player can
        # also value moves by the chance to win the match, it is asked for
        # the hand's points (a review in "percent of a match" says little)
        extra: dict[str, Any] = {"objective": "hand"} if hasattr(SearchPlayer, "objective") else {}
        return SearchPlayer(worlds=self.worlds, budget_ms=None, **extra)

    def suggest(self, hand: DominoHand, seat: int, rng: random.Random) -> Suggestion:
        """The move the coach would make for ``seat`` (it must be its turn)."""
        best, values = self._player().evaluate(hand, seat, rng)
        ranked = tuple(sorted(values, key=lambda mv: -mv[1]))
        return Suggestion(seat, best, move_words(best), ranked)

    def review(self, hand: DominoHand, rng: random.Random) -> list[Mistake]:
        """The costliest moves of a finished (or running) hand, worst first."""
        replay = hand.clone()
        played = replay.moves
        for _ in played:
            replay.undo()
        player = self._player()
        found: list[Mistake] = []
        for k, m in enumerate(played):
            seat = m.seat
            if (
                not isinstance(m, Announce)
                and seat == replay.to_play
                and not replay.is_over
                and len([x for x in replay.legal_moves(seat) if not isinstance(x, Announce)]) > 1
                and not isinstance(m, Draw)
            ):
                _, values = player.evaluate(replay, seat, rng)
                best, best_v = max(values, key=lambda mv: mv[1])
                mine = next((v for mm, v in values if _same(mm, m)), None)
                if mine is not None and best_v - mine >= self.min_loss:
                    found.append(Mistake(k, seat, m, best, best_v - mine))
            replay.apply(m)
        found.sort(key=lambda x: -x.loss)
        return found[: self.top]


@dataclass(frozen=True)
class KemsAdvice:
    """A private Kems hint for ``for_seat``: a swap (``give`` from the
    seat's hand, ``take`` from the board), a call, or wait (``action`` None)."""

    for_seat: int
    action: Any
    text: Sentence

    @property
    def give(self) -> str | None:
        return str(self.action.give) if hasattr(self.action, "give") else None

    @property
    def take(self) -> str | None:
        return str(self.action.take) if hasattr(self.action, "take") else None


@dataclass
class KemsCoach:
    """The Kems coach: what the ``player`` (by name, ``reasoner`` by
    default: the strongest measured) would do now in the seat's place.

    It asks the Kems players' public API only (``make_player(name)``,
    ``choose(round, seat, rng)``), and a player reads only
    ``round.view(seat)``: the seat's own cards, the board, the public
    history and its partner's sign, so the hint knows what the seat knows."""

    player: str = "reasoner"

    def suggest(self, rnd: Any, seat: int, rng: random.Random) -> KemsAdvice:
        from tablesense.games.kems_players import make_player

        action = make_player(self.player).choose(rnd, seat, rng)
        return KemsAdvice(seat, action, kems_words(action))


def kems_words(action: Any) -> Sentence:
    """A Kems action in plain words ("take 7S from the board, then give 7H"; None: wait)."""
    if action is None:
        return say("wait: no card on the board is worth a swap now")
    if hasattr(action, "give"):
        # the order the table teaches for a swap: take first, then give (issue 31)
        return say("take {take} from the board, then give {give}", give=str(action.give), take=str(action.take))
    kind = getattr(action, "kind", "")
    if kind == "kems":
        return say("call Kems: your partner shows four of a kind")
    if kind == "double":
        return say("call Double Kems: you hold four of a kind too")
    assert kind == "contre", kind
    return say("call contre on seat {target}", target=action.target)


def _same(a: DominoMove, b: DominoMove) -> bool:
    if isinstance(a, Play) and isinstance(b, Play):
        return a.tile == b.tile and (a.end == b.end or a.end is None or b.end is None)
    return type(a) is type(b)


def annotate_record(record: dict[str, Any], reviews: Sequence[Sequence[Mistake]]) -> dict[str, Any]:
    """Store each hand's review under its ``x-review`` key (in place; returns
    the record). ``reviews[i]`` belongs to ``record["hands"][i]``."""
    hands = record.get("hands", [])
    if len(reviews) != len(hands):
        raise ValueError(f"{len(reviews)} reviews for {len(hands)} hands")
    for h, mistakes in zip(hands, reviews, strict=True):
        h["x-review"] = [m.to_json() for m in mistakes]
    return record
