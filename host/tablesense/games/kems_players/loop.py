"""The loop that lets Kems computer players play: rounds, matches, and the
win-rate table of docs/players.md (``python -m tablesense.games.kems_players``)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tablesense.games.kems import Call, KemsMatch, KemsOptions, KemsRound, Refresh, team_of
from tablesense.games.kems_players.base import KemsPlayer
from tablesense.games.kems_players.registry import PLAYERS, make_player

__all__ = ["play_round", "play_match", "ArenaResult", "arena"]


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
        rnd = match.new_hand(rng)
        if play_round(rnd, players, rng, max_ticks):
            match.finish_hand()
        else:
            match.abandon_hand()
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
        rounds += len(match.hands)
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
