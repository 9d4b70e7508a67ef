"""First round by club rating vs a drawn first round: how many first-round matches are lopsided.

Runs the simulated club season (``tournament/club_sim.py``) twice per seed,
the same players, hidden skills, attendance and partnerships, once with
``first_round=rating`` (neighbours in rating meet) and once with
``first_round=drawn`` (the peer). A first-round match is lopsided when the
hidden favourite wins it at least 75% of the time. Evening 1 is left out of
the count (nobody has a rating yet). Also reports, for the rated runs, the
Spearman correlation of the final ratings with the hidden skills and of the
season table's order after the last two evenings (its stability).

Run: .venv/bin/python benchmarks/club_seeding.py [--players 40] [--evenings 10] [--seeds 3] [--variant pairs-pips]
The last line reads: lopsided_rating=X lopsided_drawn=Y reduction=Z skill_corr=C stability=S
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "host"))

from tablesense.tournament.club_sim import simulate_club


def main() -> None:
    ap = argparse.ArgumentParser(description="First round by club rating vs a drawn first round.")
    ap.add_argument("--players", type=int, default=40)
    ap.add_argument("--evenings", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--variant", default="pairs-pips")
    a = ap.parse_args()
    tot = {"rating": [0, 0], "drawn": [0, 0]}
    corr: list[float] = []
    stab: list[float] = []
    for seed in range(1, a.seeds + 1):
        for mode in ("rating", "drawn"):
            with tempfile.TemporaryDirectory() as d:
                r = simulate_club(f"sqlite:///{d}/club.db", players=a.players, evenings=a.evenings, rounds=a.rounds,
                                  seed=seed, first_round=mode, variant=a.variant)
            tot[mode][0] += r.lopsided
            tot[mode][1] += r.first_round_matches
            if mode == "rating":
                corr.append(r.skill_correlation)
                stab.append(r.table_stability)
            print(f"seed {seed} {mode:6s}: lopsided {r.lopsided}/{r.first_round_matches}  "
                  f"skill_corr {r.skill_correlation:.3f}  stability {r.table_stability:.3f}", flush=True)
    lr = tot["rating"][0] / max(1, tot["rating"][1])
    ld = tot["drawn"][0] / max(1, tot["drawn"][1])
    print(f"lopsided_rating={lr:.3f} lopsided_drawn={ld:.3f} reduction={1 - lr / ld if ld else 0:.3f} "
          f"skill_corr={sum(corr) / len(corr):.3f} stability={sum(stab) / len(stab):.3f}")


if __name__ == "__main__":
    main()
