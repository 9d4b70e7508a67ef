"""How many worlds the dominoes search player needs: the regret of its move
against a far larger evaluation of the same position.

More worlds only cut the noise of a move's estimate (the model — inference,
policy playouts, exact endgames — stays the same), so the question "would
more worlds help?" has an answer cheaper than a league: collect positions
from real play (``search`` against ``montecarlo``), evaluate each move of
each position with ``--oracle`` worlds, then let the player choose with each
``--worlds`` setting and measure what its choice loses against the oracle's
best (in the player's own unit: match equity). The settings are each
other's peers in the same run. docs/players.md quotes a run:

    .venv/bin/python benchmarks/search_worlds.py --variant pairs-pips --positions 120

Last line: ``regret_wN=R ...`` (mean regret per decision for N worlds).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence

from tablesense.games.dominoes import Announce, DominoHand, DominoMatch
from tablesense.games.dominoes_players import MonteCarloPlayer
from tablesense.games.dominoes_players.search import SearchPlayer


def positions(variant: str, count: int, seed: int) -> list[tuple[DominoHand, int]]:
    """Positions with a choice for a ``search`` seat, from search-against-
    montecarlo matches (about every second such decision is kept)."""
    rng = random.Random(seed)
    search = SearchPlayer(budget_ms=None)
    mc = MonteCarloPlayer()
    out: list[tuple[DominoHand, int]] = []
    while len(out) < count:
        match = DominoMatch(variant)
        seats = [search, mc, search, mc][: match.seats]
        while not match.is_over and len(out) < count:
            hand = match.new_hand(rng)
            while not hand.is_over:
                s = hand.to_play
                legal = [m for m in hand.legal_moves(s) if not isinstance(m, Announce)]
                if seats[s] is search and len(legal) > 1 and rng.random() < 0.5:
                    out.append((hand.clone(), s))
                hand.play(seats[s].choose(hand, s, rng))
            match.finish_hand()
    return out[:count]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--variant", default="pairs-pips")
    parser.add_argument("--positions", type=int, default=120)
    parser.add_argument("--oracle", type=int, default=1500, help="worlds of the reference evaluation")
    parser.add_argument("--worlds", default="60,120,240,480", help="the settings compared")
    parser.add_argument("--seed", type=int, default=77)
    args = parser.parse_args(argv)
    settings = [int(w) for w in args.worlds.split(",")]

    found = positions(args.variant, args.positions, args.seed)
    oracle = SearchPlayer(budget_ms=None, worlds=args.oracle)
    started = time.perf_counter()
    truth: list[dict[str, float]] = []
    for hand, seat in found:
        _, values = oracle.evaluate(hand, seat, random.Random(1))
        truth.append({repr(m): v for m, v in values})
    print(f"{args.variant}: {len(found)} positions, oracle {args.oracle} worlds "
          f"({time.perf_counter() - started:.0f} s)")
    figures: list[str] = []
    for worlds in settings:
        player = SearchPlayer(budget_ms=None, worlds=worlds)
        regret = 0.0
        hits = 0
        cpu = 0.0
        for k, (hand, seat) in enumerate(found):
            t = time.process_time()
            move = player.choose(hand, seat, random.Random(1000 + k))
            cpu += time.process_time() - t
            values = truth[k]
            best = max(values.values())
            regret += best - values[repr(move)]
            hits += values[repr(move)] == best
        n = len(found)
        print(f"{worlds:5d} worlds: mean regret {regret / n:.4f}, the oracle's move {hits / n:.0%}, "
              f"{cpu / n * 1000:.1f} ms CPU a decision")
        figures.append(f"regret_w{worlds}={regret / n:.4f}")
    print(" ".join(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
