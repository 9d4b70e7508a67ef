"""The ``tracking`` Kems player: tracks every card seen, plays for its team,
calls contre on evidence."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from tablesense.games.kems import Call, Card, SeatView, Swap, partner_of, team_of
from tablesense.games.kems_players.base import ViewPlayer, best_count, holds_four
from tablesense.games.kems_players.knowledge import Knowledge, Tracker, four_probability

__all__ = ["TrackingPlayer"]


@dataclass
class TrackingPlayer(ViewPlayer):
    """Tracks seen cards, plays for its team, and calls contre on evidence.

    ``contre_at``: the estimated probability (see :func:`four_probability`)
    above which it calls contre; a right contre scores 1 and a wrong one
    gives 1 to the other team, so anything over 0.5 pays on average.
    """

    contre_at: float = 0.5
    noise: float = 0.03
    name: str = "tracking"
    _trackers: dict[int, Tracker] = field(default_factory=dict, repr=False, compare=False)

    def _play(self, view: SeatView, rng: random.Random) -> Swap | Call | None:
        seat = view.seat
        know = self._trackers.setdefault(seat, Tracker()).update(view)
        n = view.seats
        me = team_of(seat, n)
        opponents = [s for s in range(n) if team_of(s, n) != me]
        best_t, best_p = None, 0.0
        for t in opponents:
            p = four_probability(know, t, self.noise)
            if p > best_p:
                best_t, best_p = t, p
        if best_t is not None and best_p >= self.contre_at:
            return Call(seat, "contre", best_t)
        if holds_four(view.hand):
            return None
        return self._swap(view, know, opponents, rng)

    def _swap(
        self, view: SeatView, know: Knowledge, opponents: list[int], rng: random.Random
    ) -> Swap | None:
        best: tuple[float, Swap] | None = None
        for base, swap in self.swap_scores(view, know, opponents):
            score = base + rng.random() * 1e-3
            if best is None or score > best[0]:
                best = (score, swap)
        return best[1] if best is not None and best[0] > 0 else None

    def swap_scores(
        self, view: SeatView, know: Knowledge, opponents: list[int]
    ) -> list[tuple[float, Swap]]:
        """The swaps this player considers, with their scores before the tie-breaking
        noise: it makes the best one when its score is positive. Public so that
        another player can ask what ``tracking`` would do in an opponent's place
        (the reasoner's opponent model)."""
        seat = view.seat
        hand = list(view.hand)
        mine = Counter(c.rank for c in hand)
        partner = partner_of(seat, view.seats)
        wanted_by_opp: Counter[str] = Counter()
        for t in opponents:
            for r, c in Counter(c.rank for c in know.held[t]).items():
                if c >= 2:
                    wanted_by_opp[r] += c
        partner_ranks = Counter(c.rank for c in know.held[partner])
        partner_wants = {r for r, c in partner_ranks.items() if c >= 2}
        unseen = Counter(c.rank for c in know.unseen)
        board = Counter(c.rank for c in view.board)
        held_elsewhere: Counter[str] = Counter()
        for s in range(view.seats):
            if s != seat:
                held_elsewhere.update(c.rank for c in know.held[s])

        def value(rank: str) -> float:
            """How promising collecting ``rank`` is for this seat."""
            reachable = (
                board[rank]
                + 0.5 * unseen[rank]
                + 0.25 * sum(1 for c in know.in_stock if c.rank == rank)
            )
            v = 10 * mine[rank] + 3 * reachable - 6 * held_elsewhere[rank]
            if rank in partner_wants:
                v -= 8
            return v

        def hand_value(cards: Sequence[Card]) -> float:
            counts = Counter(c.rank for c in cards)
            rank, top = max(counts.items(), key=lambda kv: (kv[1], value(kv[0])))
            return 100 * top + value(rank) * 0.01

        def give_cost(card: Card) -> float:
            """Cost of laying ``card`` on the board: feeding an opponent's rank
            is bad, feeding the partner's rank is good."""
            cost = 5.0 * wanted_by_opp[card.rank]
            if card.rank in partner_wants:
                cost -= 3.0
            return cost

        now = hand_value(hand)
        out: list[tuple[float, Swap]] = []
        for take in view.board:
            for i, give in enumerate(hand):
                after = hand[:i] + [take] + hand[i + 1 :]
                gain = hand_value(after) - now
                if best_count(after) <= best_count(hand):
                    # not progress for this seat; a denial of an opponent's
                    # rank at no cost to our best count is still worth it
                    deny = wanted_by_opp[take.rank] >= 3 and best_count(after) == best_count(hand)
                    if not deny or give.rank in wanted_by_opp:
                        continue
                    gain = 1.0
                out.append((gain - give_cost(give), Swap(seat, give, take)))
        return out
