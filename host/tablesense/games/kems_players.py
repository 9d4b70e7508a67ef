"""Computer players for Kems, and the loop that lets them play.

A player answers ``choose(round, seat, rng) -> Swap | Call | None`` (None:
wait). It reads only ``round.view(seat)`` (:class:`~tablesense.games.kems.SeatView`):
its own hand, the board, the public history of swaps and refreshes, the
stock size, and the partner *signal*.

The signal is how the seed's secret sign between partners is modelled: on
the table, a seat that holds four of a kind presses its seat button and only
its partner's light shows it. So ``view.signal`` is True exactly when this
seat's partner really holds four of a kind. The engine never shows a player
the other hands.

Kems has no turns: :func:`play_round` polls every seat once per tick, in a
fresh random order, and applies what each one chooses at once (so the others
see it when their turn in the tick comes). A tick in which nobody acts means
"no player wants to exchange cards with the board": the board is refreshed.

Players:

- :class:`RandomPlayer`: a random legal swap now and then; says ``kems`` (and
  ``double``) on its partner's signal, never contre.
- :class:`GreedyPlayer`: collects the rank it holds most of (a swap only when
  it raises its best count), kems/double on the signal.
- :class:`TrackingPlayer`: tracks every card seen (the boards laid, every
  swap) and where it can be; chooses the rank to collect by what is still
  reachable; never feeds an opponent's rank, feeds its partner's; denies an
  opponent a card it needs; and calls contre when the Bayesian estimate that
  an opponent holds four (hidden cards weighted by how well they explain
  that opponent's visible swaps) passes a threshold.
- :class:`ReasonerPlayer`: tracking's swaps, with the calls decided by their
  expected value (contre once an opponent is a third likely to hold four).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Protocol

from tablesense.games.kems import (
    Call,
    Card,
    KemsMatch,
    KemsOptions,
    KemsRound,
    Refresh,
    SeatView,
    Swap,
    deck,
    partner_of,
    team_of,
)

__all__ = [
    "KemsPlayer",
    "RandomPlayer",
    "GreedyPlayer",
    "TrackingPlayer",
    "ReasonerPlayer",
    "PLAYERS",
    "make_player",
    "Knowledge",
    "track",
    "play_round",
    "play_match",
    "arena",
]


class KemsPlayer(Protocol):
    """What the table and the demo ask of a computer player."""

    name: str

    def choose(self, round: KemsRound, seat: int, rng: random.Random) -> Swap | Call | None: ...


class ViewPlayer:
    """A player that decides from one seat's view alone, so it can never peek
    at hidden hands; a table can build the view with its own source of the
    partner's sign (``round.view(seat, signal=...)``)."""

    def choose(self, round: KemsRound, seat: int, rng: random.Random) -> Swap | Call | None:
        return self.decide(round.view(seat), rng)

    def decide(self, view: SeatView, rng: random.Random) -> Swap | Call | None:
        """Kems or double on the partner's sign first (every player answers a
        sign the same way); otherwise the player's own choice of swap."""
        call = _signal_call(view)
        if call is not None or view.is_over:
            return call
        return self._play(view, rng)

    def _play(self, view: SeatView, rng: random.Random) -> Swap | Call | None:
        """A swap, a contre or None (wait), once no sign asks for a call."""
        raise NotImplementedError


def _signal_call(view: SeatView) -> Call | None:
    """kems on the partner's signal; double right after the partner's kems
    when this seat's partner (the caller) also signals four."""
    if view.awaiting_double:
        kems = view.events[-1]
        mine = isinstance(kems, Call) and kems.seat == view.partner
        return Call(view.seat, "double") if mine and view.signal else None
    if view.is_over:
        return None
    if view.signal:
        return Call(view.seat, "kems")
    return None


def _holds_four(hand: Sequence[Card]) -> bool:
    return len({c.rank for c in hand}) == 1


# --------------------------------------------------------------------------- random


@dataclass
class RandomPlayer(ViewPlayer):
    """A random legal swap with probability ``activity`` per poll; kems on the
    signal. The floor every other player must beat."""

    activity: float = 0.3
    name: str = "random"

    def _play(self, view: SeatView, rng: random.Random) -> Swap | Call | None:
        seat = view.seat
        if _holds_four(view.hand) or rng.random() >= self.activity:
            return None
        give = rng.choice(view.hand)
        take = rng.choice(view.board)
        return Swap(seat, give, take)


# --------------------------------------------------------------------------- greedy


def _best_count(hand: Sequence[Card]) -> int:
    return Counter(c.rank for c in hand).most_common(1)[0][1]


@dataclass
class GreedyPlayer(ViewPlayer):
    """Collects the rank it holds most of: swaps only when that raises its
    best count (so it never loops), gives away a card of its rarest rank;
    kems/double on the signal."""

    name: str = "greedy"

    def _play(self, view: SeatView, rng: random.Random) -> Swap | Call | None:
        seat = view.seat
        hand = list(view.hand)
        now = _best_count(hand)
        if now == 4:
            return None
        counts = Counter(c.rank for c in hand)
        best: tuple[int, float, Swap] | None = None
        for take in view.board:
            for i, give in enumerate(hand):
                after = hand[:i] + [take] + hand[i + 1 :]
                gain = _best_count(after)
                if gain <= now:
                    continue
                key = (gain, -counts[give.rank] + rng.random() * 0.1)
                if best is None or key > best[:2]:
                    best = (gain, key[1], Swap(seat, give, take))
        return best[2] if best else None


# --------------------------------------------------------------------------- tracking


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
        if _holds_four(view.hand):
            return None
        return self._swap(view, know, opponents, rng)

    def _swap(
        self, view: SeatView, know: Knowledge, opponents: list[int], rng: random.Random
    ) -> Swap | None:
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
        best: tuple[float, Swap] | None = None
        for take in view.board:
            for i, give in enumerate(hand):
                after = hand[:i] + [take] + hand[i + 1 :]
                gain = hand_value(after) - now
                if _best_count(after) <= _best_count(hand):
                    # not progress for this seat; a denial of an opponent's
                    # rank at no cost to our best count is still worth it
                    deny = wanted_by_opp[take.rank] >= 3 and _best_count(after) == _best_count(hand)
                    if not deny or give.rank in wanted_by_opp:
                        continue
                    gain = 1.0
                score = gain - give_cost(give) + rng.random() * 1e-3
                if best is None or score > best[0]:
                    best = (score, Swap(seat, give, take))
        return best[1] if best is not None and best[0] > 0 else None


# --------------------------------------------------------------------------- reasoner


@dataclass
class ReasonerPlayer(TrackingPlayer):
    """The ``reasoner`` Kems player: tracking's card sense, with the calls reasoned out.

    It plays the swaps of :class:`~tablesense.games.kems_players.TrackingPlayer`
    (every card seen, the rank chosen by what is still reachable, the partner's
    rank fed, an opponent's rank denied) and decides the calls from their value:

    - **contre** when the estimated probability ``p`` that an opponent holds
      four of a kind (:func:`~tablesense.games.kems_players.four_probability`:
      the hidden cards weighted by how well they explain that opponent's swaps)
      passes a third, not a half. Waiting is not free: an opponent who holds
      four is about to be called by its partner (its sign is lit), which costs
      one point. So a contre is worth ``p - (1 - p) = 2p - 1`` against ``-p``
      for waiting, and pays once ``p > 1/3``. When two opponents may hold four,
      it names the more likely one; a double contre (both opponents) scores
      ``double_points``, which raises the value of the call.
    - **kems, or first the double**: on its partner's sign it says kems at once
      (the partner's four may be contred while it waits) — unless the card that
      completes its own four is on the board right now and no opponent looks
      close to four: then it takes that card first and says kems on its next
      poll, and its partner (who now sees this seat's sign) answers ``double``,
      worth ``double_points`` instead of 1.
    - **double** after its partner's kems when its own sign says the partner
      holds four (as every player does).

    It never bluffs a sign or a call.
    """

    contre_at: float = 1 / 3
    go_double: bool = False
    """Go for the double when one swap away (measured weaker against
    ``tracking``: the completing take shows, and it contres both hands)."""
    double_risk: float = 0.3
    """Skip the double when an opponent is this likely to hold four already."""
    stealth: float | None = None
    """Do not complete four with a take that would let an opponent estimate
    four at this probability or more (it would contre before the partner
    calls); ``None``: always complete."""
    name: str = "reasoner"
    _trackers: dict[int, Tracker] = field(default_factory=dict, repr=False, compare=False)

    def decide(self, view: SeatView, rng: random.Random) -> Swap | Call | None:
        if not self.go_double or view.is_over or view.awaiting_double or not view.signal:
            return super().decide(view, rng)
        # the partner holds four: kems now, or complete our own four first
        know = self._trackers.setdefault(view.seat, Tracker()).update(view)
        if self._threat(view, know) < self.double_risk:
            swap = self._completing_swap(view)
            if swap is not None:
                return swap
        return Call(view.seat, "kems")

    def _threat(self, view: SeatView, know: Knowledge) -> float:
        n = view.seats
        me = team_of(view.seat, n)
        return max(
            (four_probability(know, t, self.noise) for t in range(n) if team_of(t, n) != me),
            default=0.0,
        )

    @staticmethod
    def _completing_swap(view: SeatView) -> Swap | None:
        """The swap that gives this seat four of a kind now, if the board has it."""
        counts = Counter(c.rank for c in view.hand)
        rank, top = counts.most_common(1)[0]
        if top != 3:
            return None
        need = [c for c in view.board if c.rank == rank]
        odd = [c for c in view.hand if c.rank != rank]
        if not need or len(odd) != 1:
            return None
        return Swap(view.seat, odd[0], need[0])

    def _play(self, view: SeatView, rng: random.Random) -> Swap | Call | None:
        seat = view.seat
        know = self._trackers.setdefault(seat, Tracker()).update(view)
        n = view.seats
        me = team_of(seat, n)
        best_t, best_v = None, 0.0
        for t in range(n):
            if team_of(t, n) == me:
                continue
            p = four_probability(know, t, self.noise)
            if p < self.contre_at:
                continue
            # a double contre scores more when the target's partner holds four too
            q = four_probability(know, partner_of(t, n), self.noise)
            value = p * (1 + (view.options.double_points - 1) * q)
            if value > best_v:
                best_t, best_v = t, value
        if best_t is not None:
            return Call(seat, "contre", best_t)
        if len({c.rank for c in view.hand}) == 1:
            return None
        swap = self._swap(view, know, [t for t in range(n) if team_of(t, n) != me], rng)
        if (
            swap is not None
            and self.stealth is not None
            and swap.give.rank != swap.take.rank
            and all(c.rank == swap.take.rank for c in view.hand if c != swap.give)
            and self.exposure(view, know, swap) >= self.stealth
        ):
            return None
        return swap

    def exposure(self, view: SeatView, know: Knowledge, swap: Swap) -> float:
        """What an opponent would estimate (:func:`four_probability`) for this
        seat holding four after ``swap``: its taken cards are public, its
        dealt cards are not."""
        seat = view.seat
        public: set[Card] = set()
        for e in view.events:
            if isinstance(e, Swap) and e.seat == seat and e.give != e.take:
                public.discard(e.give)
                public.add(e.take)
        public.discard(swap.give)
        public.add(swap.take)
        after = [swap.take if c == swap.give else c for c in view.hand]
        hidden = {c for c in after if c not in public}
        held = [set(h) for h in know.held]
        held[seat] = public
        history = [list(h) for h in know.history]
        history[seat] = history[seat] + [(swap.give, swap.take)]
        observer = Knowledge(
            seat, view.seats, held, set(know.in_stock), set(know.out), know.unseen | hidden, history
        )
        return four_probability(observer, seat, self.noise)


PLAYERS: dict[str, type[RandomPlayer] | type[GreedyPlayer] | type[TrackingPlayer]] = {
    "random": RandomPlayer,
    "greedy": GreedyPlayer,
    "tracking": TrackingPlayer,
    "reasoner": ReasonerPlayer,
}


def make_player(name: str) -> RandomPlayer | GreedyPlayer | TrackingPlayer:
    """A player by name (``random``, ``greedy``, ``tracking``, ``reasoner``)."""
    try:
        return PLAYERS[name]()
    except KeyError:
        raise ValueError(f"unknown Kems player {name!r}; players: {', '.join(PLAYERS)}") from None


# --------------------------------------------------------------------------- loop


def play_round(
    rnd: KemsRound, players: Sequence[KemsPlayer], rng: random.Random, max_ticks: int = 400
) -> bool:
    """Let ``players`` (one per seat) play ``rnd`` until its first call.

    Each tick polls every seat once in a random order; a tick where nobody
    acts refreshes the board. After a ``kems`` the caller's partner is polled
    once more (for a ``double``). Returns False when ``max_ticks`` pass
    without a call (the round is left open).
    """
    seats = list(range(rnd.seats))
    for _ in range(max_ticks):
        if rnd.is_over:
            break
        rng.shuffle(seats)
        acted = False
        for s in seats:
            event = players[s].choose(rnd, s, rng)
            if event is None:
                continue
            rnd.play(event)
            acted = True
            if rnd.is_over:
                break
        if not acted and not rnd.is_over:
            rnd.play(Refresh())
    if rnd.awaiting_double:
        caller = rnd.events[-1]
        assert isinstance(caller, Call)
        p = rnd.partner_of(caller.seat)
        event = players[p].choose(rnd, p, rng)
        if event is not None:
            rnd.play(event)
    return rnd.is_over


def play_match(
    players: Sequence[KemsPlayer],
    rng: random.Random,
    options: KemsOptions | None = None,
    max_rounds: int = 200,
    max_ticks: int = 400,
) -> KemsMatch:
    """A whole match between ``players`` (one per seat); stops at the target
    or after ``max_rounds`` rounds (stalled rounds are abandoned and dealt again)."""
    match = KemsMatch(options, seats=len(players))
    for _ in range(max_rounds):
        if match.is_over:
            break
        rnd = match.new_round(rng)
        if play_round(rnd, players, rng, max_ticks):
            match.finish_round()
        else:
            match.abandon_round()
    return match


@dataclass
class ArenaResult:
    """Matches between two strategies, each playing both team positions."""

    a: str
    b: str
    matches: int
    a_wins: int
    b_wins: int
    unfinished: int
    rounds: int
    outcomes: Counter[str]

    @property
    def a_rate(self) -> float:
        return self.a_wins / self.matches if self.matches else 0.0


def arena(
    a: str, b: str, matches: int, seed: int, seats: int = 4, options: KemsOptions | None = None
) -> ArenaResult:
    """Play ``matches`` matches of strategy ``a`` (one team) against ``b``
    (the other team(s)), ``a`` taking team 0 in even matches and team 1 in odd
    ones. Deterministic for a given seed."""
    rng = random.Random(seed)
    a_wins = b_wins = unfinished = rounds = 0
    outcomes: Counter[str] = Counter()
    for i in range(matches):
        a_team = i % 2
        players = [
            make_player(a) if team_of(s, seats) == a_team else make_player(b) for s in range(seats)
        ]
        match = play_match(players, rng, options)
        rounds += len(match.rounds)
        for r in match.results:
            outcomes[r.label or r.outcome] += 1
        if match.winner is None:
            unfinished += 1
        elif match.winner == a_team:
            a_wins += 1
        else:
            b_wins += 1
    return ArenaResult(a, b, matches, a_wins, b_wins, unfinished, rounds, outcomes)


def _main(argv: Sequence[str] | None = None) -> int:
    """``python -m tablesense.games.kems_players``: the win-rate table of
    docs/players.md (the only I/O in this module)."""
    import argparse

    parser = argparse.ArgumentParser(description="Kems players against each other")
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seats", type=int, default=4, choices=(4, 6, 8))
    parser.add_argument("--target", type=int, default=10)
    args = parser.parse_args(argv)
    options = KemsOptions.from_dict({"target": args.target}, args.seats)
    names = list(PLAYERS)
    print(f"seats={args.seats} target={args.target} matches={args.matches} seed={args.seed}")
    print(
        "| A | B | A wins | B wins | unfinished | A win rate | rounds/match | contres right/failed |"
    )
    print("|---|---|---|---|---|---|---|---|")
    # every pair, plus the mirror matches that show the seating is fair
    # (random against itself is left out: its rounds rarely end)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    pairs += [(a, a) for a in names if a != "random"]
    for a, b in pairs:
        r = arena(a, b, args.matches, args.seed, args.seats, options)
        print(
            f"| {a} | {b} | {r.a_wins} | {r.b_wins} | {r.unfinished} | "
            f"{r.a_rate:.1%} | {r.rounds / max(1, r.matches):.1f} | "
            f"{r.outcomes['contre'] + r.outcomes['double contre']}/{r.outcomes['failed contre']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
