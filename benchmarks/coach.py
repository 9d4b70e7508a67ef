"""How long the coach makes a seat wait (issue 19), against the search player.

Usage: ``.venv/bin/python benchmarks/coach.py [--hands N] [--worlds W]``

A suggestion is computed while a person holds a seat button, and a hand's
review while the finished hand is on the display, both in the referee's
thread: they must stay well inside what a player accepts as "at once" (the
issue's budget for a computer decision: 100 ms median, 400 ms at worst on
this machine, a Raspberry Pi 4 being about three times slower). The peer in
the same run is the search player's own ``choose`` (its default 200 ms time
budget), on the same positions, so a busy machine slows both alike.

For each variant, ``--hands`` hands are dealt from a fixed seed and played
by greedy players; at every decision with a choice the coach's
``suggest`` and the search player's ``choose`` are timed (CPU time,
``time.process_time``), and each finished hand's ``review``.

The last line: ``suggest_median_ms=.. suggest_max_ms=.. choose_median_ms=..
review_mean_s=.. review_max_s=..`` (over all variants).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from tablesense.games.coach import DominoCoach
from tablesense.games.dominoes import DominoMatch
from tablesense.games.dominoes_players import GreedyPlayer
from tablesense.games.dominoes_players.search import SearchPlayer
from tablesense.games.registry import find_game

VARIANTS = find_game("dominoes").variants


def main() -> None:
    ap = argparse.ArgumentParser(description="How long the coach makes a seat wait.")
    ap.add_argument("--hands", type=int, default=4, help="hands per variant (default 4)")
    ap.add_argument("--worlds", type=int, default=40, help="the coach's sampled worlds (default 40, the table's)")
    args = ap.parse_args()
    coach = DominoCoach(worlds=args.worlds)
    peer = SearchPlayer()
    suggest: list[float] = []
    choose: list[float] = []
    review: list[float] = []
    for variant in VARIANTS:
        vs: list[float] = []
        vc: list[float] = []
        vr: list[float] = []
        for k in range(args.hands):
            rng = random.Random(f"coach-bench:{variant}:{k}")
            hand = DominoMatch(variant).new_hand(rng)
            while not hand.is_over:
                seat = hand.to_play
                if len(hand.legal_moves(seat)) > 1:
                    t = time.process_time()
                    coach.suggest(hand, seat, random.Random(k))
                    vs.append(time.process_time() - t)
                    t = time.process_time()
                    peer.choose(hand, seat, random.Random(k))
                    vc.append(time.process_time() - t)
                hand.play(GreedyPlayer().choose(hand, seat, rng))
            t = time.process_time()
            coach.review(hand, random.Random(k))
            vr.append(time.process_time() - t)
        print(
            f"{variant:17} {len(vs):3} decisions: suggest median {statistics.median(vs) * 1e3:5.1f} ms, "
            f"max {max(vs) * 1e3:5.1f} ms; search choose median {statistics.median(vc) * 1e3:5.1f} ms; "
            f"review of a hand mean {statistics.mean(vr):.2f} s, max {max(vr):.2f} s"
        )
        suggest += vs
        choose += vc
        review += vr
    print(
        f"suggest_median_ms={statistics.median(suggest) * 1e3:.1f} suggest_max_ms={max(suggest) * 1e3:.1f} "
        f"choose_median_ms={statistics.median(choose) * 1e3:.1f} "
        f"review_mean_s={statistics.mean(review):.2f} review_max_s={max(review):.2f}"
    )


if __name__ == "__main__":
    main()
