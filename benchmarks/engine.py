"""Random-playout speed of the ``pairs-pips`` engine against PyPI ``dominoes``.

Usage: ``.venv/bin/python benchmarks/engine.py [--seconds S]``

Both engines deal a fresh hand (6-6 opens) and play uniformly random legal
moves to the end, then score it, in the same process, in alternating rounds so
that a busy machine slows both alike; CPU time (``time.process_time``) is
measured and the best round of each is kept. Ours is ``simulate_deal`` (a fresh
uniform deal of the 28 tiles to 4 seats, a random legal playout to domino or
block, the ``HandResult`` of the public scoring; the same question the peer's
``Game.new`` + ``valid_moves``/``make_move`` loop answers). For transparency
the script also times ``deal_tiles`` + ``DominoHand`` + ``DominoHand.simulate``
(the loop the Monte Carlo player runs on a guessed world), ``playout`` (which
records every move and the line) and the public ``legal_moves``/``apply``
loop. It then reports the memory of a hand state and the time of a
``MonteCarloPlayer.choose``.

The last line is ``ratio=<ours / peer>`` (target: >= 10).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import dominoes

from tablesense.games.dominoes import (
    ALL_TILES,
    DominoHand,
    DominoMatch,
    DominoOptions,
    LinePlay,
    Opening,
    Pass,
    Play,
    Tile,
    deal_tiles,
    simulate_deal,
)
from tablesense.games.dominoes_players import MonteCarloPlayer


def ours_deal(rng: random.Random, opts: DominoOptions) -> None:
    simulate_deal(opts, rng)


def ours_simulate(rng: random.Random, opts: DominoOptions) -> None:
    hand = DominoHand(opts, deal_tiles("pairs-pips", 4, rng)[0])
    hand.simulate(rng)


def ours_playout(rng: random.Random, opts: DominoOptions) -> None:
    hand = DominoHand(opts, deal_tiles("pairs-pips", 4, rng)[0])
    hand.playout(rng)
    hand.result()


def ours_api(rng: random.Random, opts: DominoOptions) -> None:
    hand = DominoHand(opts, deal_tiles("pairs-pips", 4, rng)[0])
    while not hand.is_over:
        moves = hand.legal_moves()
        hand.apply(moves[rng.randrange(len(moves))])
    hand.result()


def peer(rng: random.Random, opts: DominoOptions) -> None:
    del opts
    game = dominoes.Game.new(starting_domino=dominoes.Domino(6, 6))
    while game.result is None:
        moves: Any = game.valid_moves
        tile, left = rng.choice(moves)
        game.make_move(tile, left)


def rate(fn: Callable[[random.Random, DominoOptions], None], seconds: float, seed: int) -> float:
    """Hands per CPU second over about ``seconds``."""
    rng = random.Random(seed)
    random.seed(seed)  # the peer deals with the module's generator
    opts = DominoOptions.from_dict("pairs-pips")
    n = 0
    start = time.process_time()
    while True:
        for _ in range(50):
            fn(rng, opts)
        n += 50
        used = time.process_time() - start
        if used >= seconds:
            return n / used


def state_bytes(hand: DominoHand) -> int:
    """Bytes a hand state owns: shared, interned values (tiles, moves, line
    entries, options, the opening rule) are not counted."""
    seen: set[int] = set()

    def size(obj: object) -> int:
        if id(obj) in seen or isinstance(
            obj, Tile | Play | Pass | LinePlay | DominoOptions | Opening | str | bool
        ):
            return 0
        if obj is None or (isinstance(obj, int) and -5 <= obj <= 256):
            return 0
        seen.add(id(obj))
        n = sys.getsizeof(obj)
        if isinstance(obj, list | tuple):
            n += sum(size(x) for x in obj)
        elif isinstance(obj, dict):
            n += sum(size(k) + size(v) for k, v in obj.items())
        elif isinstance(obj, DominoHand):
            n += sum(size(getattr(obj, name)) for name in DominoHand.__slots__)
        return n

    return size(hand)


def memory_report(rng: random.Random) -> tuple[float, int]:
    sizes = []
    for _ in range(200):
        hand = DominoMatch("pairs-pips").new_hand(rng)
        sizes.append(state_bytes(hand))
        while not hand.is_over:
            moves = hand.legal_moves()
            hand.play(moves[rng.randrange(len(moves))])
            sizes.append(state_bytes(hand))
    return statistics.mean(sizes), max(sizes)


def choose_report(rng: random.Random, hands: int = 6) -> tuple[float, float]:
    player = MonteCarloPlayer()
    times = []
    for variant in ("pairs-pips", "pips-two-player", "brazilian-points"):
        for _ in range(hands // 3):
            hand = DominoMatch(variant).new_hand(rng)
            while not hand.is_over:
                seat = hand.to_play
                start = time.perf_counter()
                move = player.choose(hand, seat, rng)
                times.append(time.perf_counter() - start)
                hand.play(move)
    return statistics.mean(times) * 1e3, max(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    assert len(ALL_TILES) == 28

    best: dict[str, float] = {}
    for r in range(args.rounds):
        for name, fn in (
            ("ours-deal", ours_deal),
            ("peer-dominoes", peer),
            ("ours-simulate", ours_simulate),
            ("ours-playout", ours_playout),
            ("ours-api-loop", ours_api),
        ):
            hz = rate(fn, args.seconds, seed=r)
            best[name] = max(best.get(name, 0.0), hz)
            print(f"round {r}: {name:14s} {hz:10.0f} hands/s", flush=True)

    mean_b, max_b = memory_report(random.Random(7))
    mean_ms, max_ms = choose_report(random.Random(8))
    peer_hz = best["peer-dominoes"]
    print()
    print(f"dominoes 6.1.0 (peer)           {peer_hz:10.0f} hands/s")
    for name in ("ours-deal", "ours-simulate", "ours-playout", "ours-api-loop"):
        print(f"tablesense {name:20s} {best[name]:10.0f} hands/s  x{best[name] / peer_hz:.1f}")
    print(f"DominoHand state: mean {mean_b:.0f} B, max {max_b} B (target < 2048 B)")
    print(f"MonteCarloPlayer.choose (defaults): mean {mean_ms:.1f} ms, max {max_ms:.1f} ms")
    print(f"ratio={best['ours-deal'] / peer_hz:.2f}")


if __name__ == "__main__":
    main()
