"""The reasoner's opponent model: does that seat hold four of a kind now?

``tracking``'s estimate (:func:`~tablesense.games.kems_players.knowledge.four_probability`)
weighs the hidden cards by a generic "collects greedily" story and misses
most fours made from a dealt pair: an opponent seen taking two nines and
holding them is, by the count of unseen cards, unlikely to hold the other
two. But a player's swaps say more than that. Its hidden cards are exactly
the cards it was dealt and never laid (every card it took or laid was seen),
so a guess of the hidden cards fixes its whole hand at every moment of the
round, and the public history fixes the board it saw. Replaying the round
from that seat with a model of how it plays (``tracking``'s swap policy),
each guess gets a likelihood: every swap it made is one the model would make
there, every refresh (a tick in which nobody acted) a moment where the model
would wait. Guesses are weighted by how many card sets of those ranks the
unseen pool holds (the deal is uniform) and by the misdeal rule (a dealt
hand never held three of a rank).

Measured on tracking-against-tracking rounds: an opponent holding two taken
cards of one rank (and nothing else known) holds four 32 % of the time, which
``tracking``'s estimate puts near 0; the replay separates the dealt pairs
from the single cards (docs/players.md).
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations_with_replacement
from math import comb, prod

from tablesense.games.kems import Card, Refresh, SeatView, Swap, team_of
from tablesense.games.kems_players.base import holds_four
from tablesense.games.kems_players.knowledge import Knowledge, Tracker
from tablesense.games.kems_players.tracking import TrackingPlayer

__all__ = ["policy_four_probability", "policy_likelihood"]


def policy_four_probability(
    view: SeatView,
    know: Knowledge,
    target: int,
    model: TrackingPlayer,
    mismatch: float = 0.1,
) -> float | None:
    """Probability that seat ``target`` holds four of a kind now, from
    ``view``'s seat, if ``target`` plays like ``model``.

    ``mismatch``: the likelihood factor of a swap (or a wait) the model would
    not have made; above 0 so that a player who is not ``model`` (a person)
    only flattens the estimate. Returns None when no guess of the hidden
    cards explains the history at all (the caller falls back on another
    estimate). So does a seat whose history no guess explains without a
    mismatch: it does not play like ``model``.
    """
    held = know.held[target]
    ranks = {c.rank for c in held}
    if len(ranks) != 1:
        return 0.0  # two ranks known (or none: no evidence to call on)
    rank = next(iter(ranks))
    hidden = 4 - len(held)
    if hidden == 0:
        return 1.0
    limit = view.options.misdeal_at or 5
    unseen = [c for c in know.unseen if c.rank == rank]
    if hidden >= limit or len(unseen) < hidden:
        return 0.0  # the four would need a misdealt hand, or cards seen elsewhere
    # the target's dealt cards that it has laid since (public)
    taken: set[Card] = set()
    laid_dealt: list[Card] = []
    for e in view.events:
        if isinstance(e, Swap) and e.seat == target and e.give != e.take:
            if e.give in taken:
                taken.discard(e.give)
            else:
                laid_dealt.append(e.give)
            taken.add(e.take)
    pool = Counter(c.rank for c in know.unseen)
    by_rank: dict[str, list[Card]] = {}
    for c in sorted(know.unseen, key=str):
        by_rank.setdefault(c.rank, []).append(c)
    four = total = best = 0.0
    for guess in combinations_with_replacement(sorted(pool), hidden):
        need = Counter(guess)
        if any(pool[r] < n for r, n in need.items()):
            continue
        dealt = Counter(c.rank for c in laid_dealt) + need
        if max(dealt.values()) >= limit:
            continue
        weight = prod(comb(pool[r], n) for r, n in need.items())
        cards = [c for r, n in need.items() for c in by_rank[r][:n]]
        like = policy_likelihood(view, target, laid_dealt + cards, model, mismatch)
        best = max(best, like)
        weight *= like
        total += weight
        if all(r == rank for r in guess):
            four += weight
    if best <= mismatch:
        # no guess explains the history without a move the model would not
        # make: this seat does not play like the model (a person, another
        # kind of player), so its estimate is not to be trusted
        return None
    return four / total


def policy_likelihood(
    view: SeatView, target: int, dealt: list[Card], model: TrackingPlayer, mismatch: float
) -> float:
    """How well ``model``, dealt ``dealt`` at seat ``target``, explains the
    target's swaps and waits in ``view``'s public history: the product over
    its swaps of 1/(number of equally good swaps) when the model would make
    it, ``mismatch`` when not, and over the refreshes (every seat was polled
    and nobody acted) of 1 when the model would wait, ``mismatch`` when it
    would swap. With ``mismatch=0`` it is positive exactly when the model
    could have played the target's part of the history (0 below 1e-9)."""
    n = view.seats
    opponents = [s for s in range(n) if team_of(s, n) != team_of(target, n)]
    hand = list(dealt)
    laid = view.laid if view.laid else (view.board,)
    board = list(laid[0])
    refreshes = 0
    tracker = Tracker()
    like = 1.0
    for i, e in enumerate(view.events):
        if isinstance(e, Swap) and e.seat == target or isinstance(e, Refresh):
            if holds_four(hand):
                waits = True
                choices: set[tuple[str, str]] = set()
            else:
                seen = SeatView(
                    seat=target,
                    seats=n,
                    hand=tuple(hand),
                    board=tuple(board),
                    events=view.events[:i],
                    stock_count=view.stock_count,
                    signal=False,
                    options=view.options,
                    is_over=False,
                    awaiting_double=False,
                    laid=laid[: refreshes + 1],
                )
                know = tracker.update(seen)
                scores = model.swap_scores(seen, know, opponents)
                top = max((s for s, _ in scores), default=0.0)
                waits = top <= 0.0
                choices = {(w.give.rank, w.take.rank) for s, w in scores if s >= top - 1e-3}
            if isinstance(e, Refresh):
                like *= 1.0 if waits else mismatch
            elif waits or (e.give.rank, e.take.rank) not in choices:
                like *= mismatch
            else:
                like *= 1.0 / len(choices)
            if like < 1e-9:
                return 0.0
        if isinstance(e, Swap) and e.give != e.take:
            if e.take in board:
                board[board.index(e.take)] = e.give
            if e.seat == target and e.give in hand:
                hand[hand.index(e.give)] = e.take
        elif isinstance(e, Refresh):
            refreshes += 1
            if refreshes < len(laid):
                board = list(laid[refreshes])
    return like
