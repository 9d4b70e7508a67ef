"""What a seat knows about where the cards are, from the public history.

:class:`Tracker` follows one seat's view event by event (every swap is
public: the given card lands face up, the taken card leaves the board; every
board a refresh lays is seen) into :class:`Knowledge`; :func:`four_probability`
is ``tracking``'s estimate that a seat holds four of a kind.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from math import comb

from tablesense.games.kems import Card, Refresh, SeatView, Swap, deck

__all__ = ["Knowledge", "Tracker", "track", "four_probability"]


@dataclass
class Knowledge:
    """What one seat knows about where the cards are, from the public history.

    ``held[s]``: cards seat ``s`` is known to hold (it took them and has not
    given them back); ``in_stock``: cards known to be in the stock (they went
    under it at a refresh and have not come back); ``unseen``: cards never
    located, spread over the other seats' unknown slots and the rest of the
    stock; ``took[s]``: the ranks seat ``s`` took, in order; ``gave[s]`` the
    ranks it gave.
    """

    seat: int
    seats: int
    held: list[set[Card]]
    in_stock: set[Card]
    out: set[Card]
    unseen: set[Card]
    history: list[list[tuple[Card, Card]]] = field(default_factory=list)

    def slots(self, s: int) -> int:
        """How many of seat ``s``'s cards are unknown to this seat."""
        return 4 - len(self.held[s])


class Tracker:
    """Follows one seat's knowledge through a round, event by event.

    :meth:`update` reads only the events that are new since the last call
    (the history is re-read from the start when it is not a continuation of
    what was seen, for instance after an undo or in a new round).
    """

    def __init__(self) -> None:
        self._start: tuple[Card, ...] | None = None
        self._events: list[object] = []
        self._reset(0, ())

    def _reset(self, seats: int, start: tuple[Card, ...]) -> None:
        self._held: list[set[Card]] = [set() for _ in range(seats)]
        self._history: list[list[tuple[Card, Card]]] = [[] for _ in range(seats)]
        self._in_stock: set[Card] = set()
        self._out: set[Card] = set()
        self._board: set[Card] = set(start)
        self._refreshes = 0
        self._events = []

    def update(self, view: SeatView) -> Knowledge:
        laid = view.laid if view.laid else (view.board,)
        events = view.events
        seen = len(self._events)
        fresh = (
            self._start is not laid[0]
            or len(self._held) != view.seats
            or seen > len(events)
            or any(a is not b for a, b in zip(self._events, events[:seen], strict=True))
        )
        if fresh:
            self._start = laid[0]
            self._reset(view.seats, laid[0])
            seen = 0
        for e in events[seen:]:
            self._events.append(e)
            if isinstance(e, Swap):
                if e.give != e.take:
                    self._held[e.seat].discard(e.give)
                    self._held[e.seat].add(e.take)
                    self._board.discard(e.take)
                    self._board.add(e.give)
                    self._history[e.seat].append((e.give, e.take))
            elif isinstance(e, Refresh):
                self._refreshes += 1
                k = self._refreshes
                if k < len(laid):
                    if view.options.refresh == "bottom":
                        self._in_stock |= self._board
                    else:
                        self._out |= self._board
                    self._board = set(laid[k])
                    self._in_stock -= self._board
        n = view.seats
        held = [set(h) for h in self._held]
        held[view.seat] = set(view.hand)
        known = set(view.hand) | set(view.board) | self._in_stock | self._out
        for s in range(n):
            known |= held[s]
        unseen = set(deck(view.options.deck)) - known
        return Knowledge(
            view.seat,
            n,
            held,
            set(self._in_stock),
            set(self._out),
            unseen,
            [list(h) for h in self._history],
        )


def track(view: SeatView) -> Knowledge:
    """Replay the public history of ``view`` into :class:`Knowledge`."""
    return Tracker().update(view)


def four_probability(know: Knowledge, target: int, noise: float = 0.03) -> float:
    """Estimated probability that seat ``target`` holds four of a kind now.

    Its known cards fix the rank R (two ranks known: 0). The number ``j`` of R
    cards among its ``m`` unknown cards has a hypergeometric prior (the
    unknown cards are a random draw from the unseen pool); each ``j`` is then
    weighted by how well it explains the seat's visible swaps, assuming it
    collects the rank it holds most of: a take that made the taken rank its
    most-held rank AND raised the seat's best count is likely (1 - noise),
    any other take unlikely (noise). The other unknown cards are taken as distinct ranks.
    """
    held = know.held[target]
    m = know.slots(target)
    ranks = {c.rank for c in held}
    if len(ranks) > 1:
        return 0.0
    if m == 0:
        return 1.0 if len(ranks) == 1 else 0.0
    pool = len(know.unseen)
    if not ranks:
        return 0.0  # nothing known: no grounds for a contre
    rank = next(iter(ranks))
    u = sum(1 for c in know.unseen if c.rank == rank)
    if u < m or pool < m:
        return 0.0
    weights = []
    for j in range(0, min(m, u) + 1):
        prior = comb(u, j) * comb(pool - u, m - j) / comb(pool, m)
        if prior == 0:
            weights.append(0.0)
            continue
        weights.append(prior * _explain(held, know.history[target], rank, j, m - j, noise))
    total = sum(weights)
    return weights[m] / total if total > 0 and len(weights) > m else 0.0


def _explain(
    held: set[Card], swaps: list[tuple[Card, Card]], rank: str, j: int, others: int, noise: float
) -> float:
    """Likelihood of ``swaps`` if the seat's hidden cards are ``j`` of ``rank``
    plus ``others`` cards of distinct other ranks, under greedy collection."""
    hand = [c.rank for c in held] + [rank] * j + [f"?{i}" for i in range(others)]
    like = 1.0
    for give, take in reversed(swaps):
        # undo the swap: the hand before it had `give` instead of `take`
        if take.rank in hand:
            hand.remove(take.rank)
        else:
            hand.remove(hand[-1])
        before = hand + [give.rank]
        after = hand + [take.rank]
        top_before = Counter(before).most_common(1)[0][1]
        top = Counter(after).most_common(1)[0][1]
        good = Counter(after)[take.rank] == top and top > top_before
        like *= (1 - noise) if good else noise
        hand = before
    return like
