"""Computer players for dominoes: empty seats at the table, and the demo.

Every player answers one question, ``choose(hand, seat, rng) -> DominoMove``,
from what ``seat`` may know at the table: its own tiles, the line, the moves
so far (who passed on which ends), how many tiles each seat and the boneyard
hold. They never read another seat's tiles or the boneyard's order: the
Monte Carlo player builds its own guesses (:func:`guess_world`) from that
knowledge only, and the tests check that a player's choice does not change
when the hidden tiles do.

- :class:`RandomPlayer` — a uniformly random legal move.
- :class:`GreedyPlayer` — lays a double when it can (a double fits only one
  number, so it is the tile most likely to get stuck), otherwise its heaviest
  playable tile, so a blocked count or the opponents' domino costs it least.
- :class:`MonteCarloPlayer` — for each legal move, plays many random hands out
  from deals consistent with what it has seen and picks the move with the
  best average result for its team.
- :class:`~tablesense.games.dominoes_players.search.SearchPlayer` (``search``) —
  infers the hidden hands from passes, draws, the opening rule and
  announcements, samples worlds that fit, plays policy playouts (exact
  alpha-beta in the endgame) and scores them with the variant's rules.

:func:`make_player` builds any of them by name (:data:`PLAYERS`).

None of them announces a double (``brazilian-points``): a failed announcement
costs a point, and they do not plan that far.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from tablesense.games.dominoes import (
    ALL_TILES,
    DominoHand,
    DominoMatch,
    DominoMove,
    Pass,
    Play,
    Tile,
)
from tablesense.games.dominoes_players.player import DominoPlayer, legal_choices
from tablesense.games.dominoes_players.search import SearchPlayer


@dataclass
class RandomPlayer:
    """A uniformly random legal move (the baseline)."""

    name: str = "random"

    def choose(self, hand: DominoHand, seat: int, rng: random.Random) -> DominoMove:
        moves = legal_choices(hand, seat)
        return moves[rng.randrange(len(moves))]


def _greedy_key(m: DominoMove) -> tuple[int, int]:
    if not isinstance(m, Play):
        return (-1, 0)
    return (int(m.tile.is_double), m.tile.pips)


@dataclass
class GreedyPlayer:
    """Lays a double when it can, else its heaviest playable tile (ties at random).

    Doubles first measured clearly better than heaviest first in every
    variant (docs/players.md)."""

    name: str = "greedy"

    def choose(self, hand: DominoHand, seat: int, rng: random.Random) -> DominoMove:
        moves = legal_choices(hand, seat)
        if len(moves) == 1:
            return moves[0]
        best = max(_greedy_key(m) for m in moves)
        top = [m for m in moves if _greedy_key(m) == best]
        return top[rng.randrange(len(top))]


# --------------------------------------------------------------------------- knowledge


def missing_numbers(hand: DominoHand) -> list[set[int]]:
    """For each seat, the numbers it is known not to hold, from its passes.

    A pass means "none of my tiles shows either end", and since a pass comes
    only once the boneyard is empty, no tile drawn later can undo it. (A draw
    says the same about the tiles held at that moment, but the seat may have
    drawn tiles showing those numbers since, so draws are not used.)
    """
    out: list[set[int]] = [set() for _ in range(hand.seats)]
    left = right = -1
    for m in hand.moves:
        if isinstance(m, Play):
            t = m.tile
            if left < 0:
                left = t.low if m.first is None else m.first
                right = t.other(left)
            elif m.end == "left" or (m.end is None and t.has(left)):
                left = t.other(left)
            else:
                right = t.other(right)
        elif isinstance(m, Pass) and left >= 0:
            out[m.seat].update((left, right))
    return out


def guess_world(
    hand: DominoHand, seat: int, rng: random.Random, tries: int = 20
) -> tuple[list[list[Tile]], list[Tile]]:
    """One deal of the hidden tiles consistent with what ``seat`` knows:
    (tiles per seat, boneyard in a random order).

    ``seat`` keeps its own tiles; every other seat gets as many unseen tiles
    as it holds, avoiding the numbers it passed on. Tries ``tries`` random
    assignments (most constrained seat first), then gives up on the pass
    constraints rather than fail.
    """
    own = hand.hand_of(seat)
    seen = set(own) | {lp.tile for lp in hand.line}
    unseen = [t for t in ALL_TILES if t not in seen]
    counts = [hand.count(s) for s in range(hand.seats)]
    missing = missing_numbers(hand)
    others = [s for s in range(hand.seats) if s != seat]
    order = sorted(others, key=lambda s: -len(missing[s]))
    for attempt in range(tries + 1):
        strict = attempt < tries
        pool = unseen[:]
        rng.shuffle(pool)
        hands: list[list[Tile]] = [[] for _ in range(hand.seats)]
        hands[seat] = own
        ok = True
        for s in order:
            avoid = missing[s] if strict else set()
            take: list[Tile] = []
            rest: list[Tile] = []
            for t in pool:
                if len(take) < counts[s] and t.low not in avoid and t.high not in avoid:
                    take.append(t)
                else:
                    rest.append(t)
            if len(take) < counts[s]:
                ok = False
                break
            hands[s] = take
            pool = rest
        if ok:
            return hands, pool
    raise AssertionError("unreachable: the unconstrained deal always fits")  # pragma: no cover


@dataclass
class MonteCarloPlayer:
    """Averages random playouts over deals consistent with what the seat saw.

    ``worlds`` guessed deals, each move played out ``playouts`` times in each:
    with the defaults a decision costs about 100 random hands (a few
    milliseconds); the engine's :meth:`DominoHand.simulate` does the playouts.
    The score of a playout is the team's points minus the best other team's.
    """

    worlds: int = 40
    playouts: int = 2
    name: str = "montecarlo"

    def choose(self, hand: DominoHand, seat: int, rng: random.Random) -> DominoMove:
        moves = legal_choices(hand, seat)
        if len(moves) == 1:
            return moves[0]
        team = hand.team_of(seat)
        totals = [0.0] * len(moves)
        for _ in range(self.worlds):
            hands, bone = guess_world(hand, seat, rng)
            world = hand.clone(hands, bone)
            for i, m in enumerate(moves):
                world.apply(m)
                for _ in range(self.playouts):
                    res = world.result() if world.is_over else world.simulate(rng)
                    pts = res.points
                    mine = pts[team]
                    best_other = max(p for k, p in enumerate(pts) if k != team)
                    totals[i] += mine - best_other
                world.undo()
        best = max(totals)
        top = [m for m, v in zip(moves, totals, strict=True) if v == best]
        return top[rng.randrange(len(top))]


PLAYERS: dict[
    str, type[RandomPlayer] | type[GreedyPlayer] | type[MonteCarloPlayer] | type[SearchPlayer]
] = {
    "random": RandomPlayer,
    "greedy": GreedyPlayer,
    "montecarlo": MonteCarloPlayer,
    "search": SearchPlayer,
}
"""The dominoes players by name (the demo's and the referee's ``--player``)."""


def make_player(name: str) -> DominoPlayer:
    """A player by name with its table defaults (``search``: a 200 ms budget)."""
    try:
        return PLAYERS[name]()
    except KeyError:
        raise ValueError(
            f"unknown dominoes player {name!r}; players: {', '.join(PLAYERS)}"
        ) from None


# --------------------------------------------------------------------------- matches


def play_match(
    match: DominoMatch,
    players: Sequence[DominoPlayer],
    rng: random.Random,
    max_hands: int = 1000,
) -> DominoMatch:
    """Play ``match`` to its end with one player per seat (for tests and the
    win-rate tables); returns the match."""
    for _ in range(max_hands):
        if match.is_over:
            break
        hand = match.new_hand(rng)
        while not hand.is_over:
            s = hand.to_play
            hand.play(players[s].choose(hand, s, rng))
        match.finish_hand()
    return match


def head_to_head(
    variant: str,
    a: DominoPlayer,
    b: DominoPlayer,
    matches: int,
    seed: int,
    options: dict | None = None,
) -> dict[str, float]:
    """``a`` against ``b``: half the matches with ``a`` on the even seats, half
    on the odd ones. Returns a's match win rate, and per hand the mean points
    of each side."""
    rng = random.Random(seed)
    wins = 0
    hands = 0
    pts_a = pts_b = 0.0
    for i in range(matches):
        match = DominoMatch(variant, options)
        a_team = i % 2
        seats = [a if match.team_of(s) == a_team else b for s in range(match.seats)]
        play_match(match, seats, rng)
        wins += match.winner == a_team
        for r in match.results:
            hands += 1
            pts_a += r.points[a_team]
            pts_b += r.points[1 - a_team]
    return {
        "matches": matches,
        "win_rate": wins / matches,
        "hands": hands,
        "points_per_hand_a": pts_a / max(hands, 1),
        "points_per_hand_b": pts_b / max(hands, 1),
    }
