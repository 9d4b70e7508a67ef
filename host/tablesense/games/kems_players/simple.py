"""The simple Kems players: ``random`` (the floor) and ``greedy``."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from tablesense.games.kems import Call, SeatView, Swap
from tablesense.games.kems_players.base import ViewPlayer, best_count, holds_four

__all__ = ["RandomPlayer", "GreedyPlayer"]


@dataclass
class RandomPlayer(ViewPlayer):
    """A random legal swap with probability ``activity`` per poll; kems on the
    signal. The floor every other player must beat."""

    activity: float = 0.3
    name: str = "random"

    def _play(self, view: SeatView, rng: random.Random) -> Swap | Call | None:
        seat = view.seat
        if holds_four(view.hand) or rng.random() >= self.activity:
            return None
        give = rng.choice(view.hand)
        take = rng.choice(view.board)
        return Swap(seat, give, take)



@dataclass
class GreedyPlayer(ViewPlayer):
    """Collects the rank it holds most of: swaps only when that raises its
    best count (so it never loops), gives away a card of its rarest rank;
    kems/double on the signal."""

    name: str = "greedy"

    def _play(self, view: SeatView, rng: random.Random) -> Swap | Call | None:
        seat = view.seat
        hand = list(view.hand)
        now = best_count(hand)
        if now == 4:
            return None
        counts = Counter(c.rank for c in hand)
        best: tuple[int, float, Swap] | None = None
        for take in view.board:
            for i, give in enumerate(hand):
                after = hand[:i] + [take] + hand[i + 1 :]
                gain = best_count(after)
                if gain <= now:
                    continue
                key = (gain, -counts[give.rank] + rng.random() * 0.1)
                if best is None or key > best[:2]:
                    best = (gain, key[1], Swap(seat, give, take))
        return best[2] if best else None
