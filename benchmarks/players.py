"""League of the computer players: every player against every other, per variant.

Usage: ``.venv/bin/python benchmarks/players.py [--deals N] [--key-deals M]
[--seed S] [--jobs J] [--quick] [--only VARIANT:A:B ...] [--search NAME=VALUE ...]``

``--only`` plays just the named pairings (repeat it; ``--only key`` is the
goal pairings): e.g. ``--only key --key-deals 100`` measures the goals
alone, and the Elo tables then cover only the players met. ``--search``
sets a field of the league's ``SearchPlayer`` (repeat it), e.g.
``--search pips_weight=1.0 --search worlds=120``: how a change is measured
before it becomes a default.

For each variant (dominoes ``pairs-pips``, ``pips-two-player``,
``brazilian-points``; Kems with 4 seats) every pair of players meets over
``N`` *paired deals*: deal sequence ``k`` is played twice, once with A on
team 0 and once with A on team 1, from the same dealing seed (the dealer's
random numbers are separate from the players', so hand ``i`` of both matches
gets the same deal), so the luck of the tiles or cards cancels. The two
pairings the goals are about (``search`` vs ``montecarlo`` in ``pairs-pips``
and ``brazilian-points``, ``reasoner`` vs ``tracking``) get ``M`` paired deals. Every pairing seeds its own random
numbers from (seed, variant, A, B), so the league is reproducible for a seed
whatever ``--jobs`` is, and the search player runs with a fixed number of
worlds (no time budget) for the same reason.

It prints, per variant, each pairing's match score with a Wilson 95 %
interval (for a goal pairing also the mean points per hand of each side and
the mean margin with a 95 % half-width: a finer reading than matches won,
though hands of one match are not independent), and Elo ratings (Bradley-Terry fit to all match results, mean
1500) with 95 % intervals from a bootstrap over paired deals. It also reports
the decision time of the new players (median and worst over every decision
with a choice, CPU time — on a shared machine the wall time mostly measures
the other processes; ``search`` also with its table default, a 200 ms
budget, in wall and CPU time). The last line is

    dominoes_vs_montecarlo=P kems_vs_tracking=Q

``P``: the lower of the search player's match win shares against
``montecarlo`` in ``pairs-pips`` and ``brazilian-points`` (goal >= 0.60);
``Q``: the reasoner's share against ``tracking`` (goal >= 0.60). Unfinished
matches count half; ``n/a`` for a goal pairing ``--only`` left out.
"""

from __future__ import annotations

import argparse
import ast
import math
import random
import statistics
import sys
import time
import zlib
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, fields
from typing import Any

from tablesense.games import kems_players as kp
from tablesense.games.dominoes import DominoMatch
from tablesense.games.dominoes_players import (
    GreedyPlayer,
    MonteCarloPlayer,
    RandomPlayer,
)
from tablesense.games.dominoes_players.search import SearchPlayer
from tablesense.games.kems import KemsMatch, team_of
from tablesense.games.registry import find_game

DOMINO_VARIANTS = find_game("dominoes").variants
DOMINO_PLAYERS = ("random", "greedy", "montecarlo", "search")
KEMS_PLAYERS = ("random", "greedy", "tracking", "reasoner")
KEY_PAIRS = {
    ("pairs-pips", "search", "montecarlo"),
    ("brazilian-points", "search", "montecarlo"),
    ("kems", "reasoner", "tracking"),
}
"""The pairings the goals are about: they get ``--key-deals`` paired deals."""
LEAGUE_WORLDS = SearchPlayer.worlds
"""The search player's default (its table budget allows them on this machine)."""


class Timed:
    """Wraps a player and records the CPU time (``time.process_time``) of
    every decision with a choice: on a shared machine the wall time of a
    decision mostly measures the other processes."""

    def __init__(self, inner: Any, times: list[float], domino: bool) -> None:
        self.inner = inner
        self.name = inner.name
        self.times = times
        self.domino = domino

    def choose(self, state: Any, seat: int, rng: random.Random) -> Any:
        t = time.process_time()
        out = self.inner.choose(state, seat, rng)
        if not self.domino or len(state.legal_moves(seat)) > 1:
            self.times.append(time.process_time() - t)
        return out


SearchOpts = tuple[tuple[str, Any], ...]
"""``--search`` settings: (field, value) pairs for the league's search player."""


def domino_player(name: str, search: SearchOpts = ()) -> Any:
    if name == "search":
        opts: dict[str, Any] = {"worlds": LEAGUE_WORLDS, **dict(search)}
        return SearchPlayer(**opts, budget_ms=None)
    return {"random": RandomPlayer, "greedy": GreedyPlayer, "montecarlo": MonteCarloPlayer}[name]()


def _seed(*parts: object) -> int:
    return zlib.crc32(repr(parts).encode())


@dataclass
class Pairing:
    """The matches of A against B in one variant (score per paired deal)."""

    variant: str
    a: str
    b: str
    deals: list[float] = field(default_factory=list)
    """A's points per paired deal: 0, 0.5, 1, 1.5 or 2 (two matches)."""
    hands: list[tuple[float, float]] = field(default_factory=list)
    """Dominoes: the points of A's side and of B's side in every hand."""
    times: dict[str, list[float]] = field(default_factory=dict)

    @property
    def matches(self) -> int:
        return 2 * len(self.deals)

    @property
    def share(self) -> float:
        return sum(self.deals) / max(self.matches, 1)


def play_domino_pairing(
    variant: str, a: str, b: str, deals: int, seed: int, search: SearchOpts = ()
) -> Pairing:
    out = Pairing(variant, a, b)
    times: dict[str, list[float]] = {a: [], b: []}
    for k in range(deals):
        score = 0.0
        for a_team in (0, 1):
            deal_rng = random.Random(_seed(seed, variant, a, b, k))
            play_rng = random.Random(_seed(seed, variant, a, b, k, a_team))
            match = DominoMatch(variant)
            pa = Timed(domino_player(a, search), times[a], True)
            pb = Timed(domino_player(b, search), times[b], True) if b != a else pa
            seats = [pa if match.team_of(s) == a_team else pb for s in range(match.seats)]
            for _ in range(1000):
                if match.is_over:
                    break
                hand = match.new_hand(deal_rng)
                while not hand.is_over:
                    s = hand.to_play
                    hand.play(seats[s].choose(hand, s, play_rng))
                pts = match.finish_hand().points
                out.hands.append((pts[a_team], pts[1 - a_team]))
            score += 1.0 if match.winner == a_team else 0.5 if match.winner is None else 0.0
        out.deals.append(score)
    out.times = times
    return out


def play_kems_pairing(a: str, b: str, deals: int, seed: int) -> Pairing:
    out = Pairing("kems", a, b)
    times: dict[str, list[float]] = {a: [], b: []}
    for k in range(deals):
        score = 0.0
        for a_team in (0, 1):
            deal_rng = random.Random(_seed(seed, "kems", a, b, k))
            play_rng = random.Random(_seed(seed, "kems", a, b, k, a_team))
            players: list[Any] = [
                Timed(
                    kp.make_player(a if team_of(s, 4) == a_team else b),
                    times[a if team_of(s, 4) == a_team else b],
                    False,
                )
                for s in range(4)
            ]
            match = KemsMatch(seats=4)
            for _ in range(200):
                if match.is_over:
                    break
                rnd = match.new_hand(deal_rng)
                if kp.play_round(rnd, players, play_rng):
                    match.finish_hand()
                else:
                    match.abandon_hand()
            score += 1.0 if match.winner == a_team else 0.5 if match.winner is None else 0.0
        out.deals.append(score)
    out.times = times
    return out


# --------------------------------------------------------------------------- statistics


def wilson(share: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % interval of a proportion (Wilson score)."""
    if n == 0:
        return 0.0, 1.0
    d = 1 + z * z / n
    c = (share + z * z / (2 * n)) / d
    h = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def elo_fit(
    players: Sequence[str], games: Sequence[tuple[str, str, float, int]]
) -> dict[str, float]:
    """Bradley-Terry ratings (Elo scale, mean 1500) from (a, b, a's points,
    matches) rows, by the MM algorithm; a prior of one draw against a
    1500 player keeps unbeaten players finite."""
    strength = dict.fromkeys(players, 1.0)
    wins = dict.fromkeys(players, 0.5)
    for a, b, pts, n in games:
        wins[a] += pts
        wins[b] += n - pts
    for _ in range(300):
        new = {}
        for p in players:
            denom = 1.0 / (strength[p] + 1.0)  # the prior game against strength 1
            for a, b, _, n in games:
                if p in (a, b):
                    denom += n / (strength[a] + strength[b])
            new[p] = wins[p] / denom
        strength = new
    elo = {p: 400 * math.log10(s) for p, s in strength.items()}
    mean = statistics.mean(elo.values())
    return {p: 1500 + v - mean for p, v in elo.items()}


def elo_table(
    players: Sequence[str], pairings: Sequence[Pairing], seed: int, boots: int = 200
) -> dict[str, tuple[float, float, float]]:
    """Elo and its 95 % bootstrap interval (resampling each pairing's paired deals)."""
    rows = [(p.a, p.b, sum(p.deals), p.matches) for p in pairings]
    point = elo_fit(players, rows)
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {p: [] for p in players}
    for _ in range(boots):
        boot = []
        for p in pairings:
            picks = [p.deals[rng.randrange(len(p.deals))] for _ in p.deals]
            boot.append((p.a, p.b, sum(picks), p.matches))
        fit = elo_fit(players, boot)
        for name, v in fit.items():
            samples[name].append(v)
    out = {}
    for name in players:
        s = sorted(samples[name])
        out[name] = (point[name], s[int(0.025 * len(s))], s[int(0.975 * len(s)) - 1])
    return out


# --------------------------------------------------------------------------- main


Task = tuple[str, str, str, int, int, SearchOpts]


def _run(task: Task) -> Pairing:
    variant, a, b, deals, seed, search = task
    if variant == "kems":
        return play_kems_pairing(a, b, deals, seed)
    return play_domino_pairing(variant, a, b, deals, seed, search)


def decision_times(seed: int, positions: int = 90) -> tuple[list[float], list[float], list[int]]:
    """Wall and CPU times of the search player with its table default (200 ms
    budget) on positions from greedy play in every dominoes variant, and the
    worlds each decision played before the budget stopped it."""
    rng = random.Random(seed)
    player = SearchPlayer()
    out: list[float] = []
    cpu: list[float] = []
    played: list[int] = []
    for variant in DOMINO_VARIANTS:
        for _ in range(positions // len(DOMINO_VARIANTS)):
            hand = DominoMatch(variant).new_hand(rng)
            stop = rng.randrange(0, 20)
            g = GreedyPlayer()
            for _ in range(stop):
                if hand.is_over:
                    break
                hand.play(g.choose(hand, hand.to_play, rng))
            if hand.is_over or len(hand.legal_moves()) < 2:
                continue
            t = time.perf_counter()
            c = time.process_time()
            player.choose(hand, hand.to_play, rng)
            out.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
            played.append(player.played)
    return out, cpu, played


def _hand_points(p: Pairing) -> str:
    """A goal pairing's mean points per hand, each side, and the mean margin
    with its standard error (a finer measure than matches won)."""
    diffs = [x - y for x, y in p.hands]
    se = statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else 0.0
    mean_a = statistics.mean(x for x, _ in p.hands)
    mean_b = statistics.mean(y for _, y in p.hands)
    return (
        f"{p.a} vs {p.b}: {len(p.hands)} hands, points per hand {mean_a:.3f} against "
        f"{mean_b:.3f}, margin {statistics.mean(diffs):+.3f} ± {1.96 * se:.3f}"
    )


def _ms(times: list[float]) -> str:
    if not times:
        return "no decisions"
    return f"median {1000 * statistics.median(times):.1f} ms, worst {1000 * max(times):.1f} ms over {len(times)}"


def _only(
    parser: argparse.ArgumentParser, specs: list[str] | None
) -> set[tuple[str, str, str]] | None:
    """The pairings ``--only`` names (either order of the players), or None
    for all; an unknown one stops with the parser's usage error (exit 2)."""
    if not specs:
        return None
    known: dict[str, tuple[str, ...]] = dict.fromkeys(DOMINO_VARIANTS, DOMINO_PLAYERS)
    known["kems"] = KEMS_PLAYERS
    out: set[tuple[str, str, str]] = set()
    for spec in specs:
        if spec == "key":
            out |= KEY_PAIRS
            continue
        parts = spec.split(":")
        if len(parts) != 3 or parts[0] not in known or not set(parts[1:]) <= set(known[parts[0]]):
            parser.error(
                f"--only {spec!r}: write VARIANT:A:B with VARIANT one of "
                f"{', '.join(known)} and two of its players, or 'key'"
            )
        v, a, b = parts
        out |= {(v, a, b), (v, b, a)}
    return out


def _search_opts(parser: argparse.ArgumentParser, specs: list[str]) -> SearchOpts:
    """``--search`` settings as (field, value); a value is a Python literal
    (``120``, ``0.25``, ``None``) or else a string."""
    known = {f.name for f in fields(SearchPlayer) if f.init} - {"budget_ms", "name"}
    out: list[tuple[str, Any]] = []
    for spec in specs:
        name, sep, text = spec.partition("=")
        if not sep or name not in known:
            parser.error(
                f"--search {spec!r}: write NAME=VALUE, NAME one of {', '.join(sorted(known))}"
            )
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        out.append((name, value))
    return tuple(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="League of the computer players")
    parser.add_argument("--deals", type=int, default=10, help="paired deals per pairing")
    parser.add_argument(
        "--key-deals", type=int, default=50, help="paired deals for the goal pairings"
    )
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument(
        "--quick", action="store_true", help="2 paired deals everywhere (a smoke run)"
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="VARIANT:A:B",
        help="play only this pairing (repeatable; 'key': the goal pairings)",
    )
    parser.add_argument(
        "--search",
        action="append",
        metavar="NAME=VALUE",
        help="a SearchPlayer setting for the league (repeatable), e.g. worlds=120",
    )
    args = parser.parse_args(argv)
    only = _only(parser, args.only)
    if args.quick:
        args.deals = args.key_deals = 2
    search = _search_opts(parser, args.search or [])
    tasks: list[Task] = []
    groups: list[tuple[str, tuple[str, ...]]] = [(v, DOMINO_PLAYERS) for v in DOMINO_VARIANTS]
    groups.append(("kems", KEMS_PLAYERS))
    for variant, names in groups:
        for i, a in enumerate(names):
            for b in names[:i]:
                if only is not None and (variant, a, b) not in only:
                    continue
                deals = args.key_deals if (variant, a, b) in KEY_PAIRS else args.deals
                tasks.append((variant, a, b, deals, args.seed, search))
    # the longest first, so two workers finish together
    tasks.sort(key=lambda t: -t[3] * (3 if "search" in t[1:3] else 1))
    start = time.perf_counter()
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(_run, tasks))
    else:
        results = [_run(t) for t in tasks]
    by_variant: dict[str, list[Pairing]] = {}
    for r in results:
        by_variant.setdefault(r.variant, []).append(r)
    print(
        f"seed={args.seed} deals={args.deals} key_deals={args.key_deals} "
        f"wall={time.perf_counter() - start:.0f}s"
        + (" search: " + " ".join(f"{k}={v!r}" for k, v in search) if search else "")
    )
    shares: dict[tuple[str, str, str], float] = {}
    new_times: dict[str, list[float]] = {"search": [], "reasoner": []}
    for variant, names in groups:
        rows = sorted(by_variant.get(variant, []), key=lambda p: (p.a, p.b))
        if not rows:
            continue
        names = tuple(n for n in names if any(n in (p.a, p.b) for p in rows))
        print(f"\n## {variant}")
        notes: list[str] = []
        print("| A | B | matches | A's share | 95 % interval |")
        print("|---|---|---:|---:|---|")
        for p in rows:
            lo, hi = wilson(p.share, p.matches)
            print(f"| {p.a} | {p.b} | {p.matches} | {p.share:.1%} | {lo:.1%} – {hi:.1%} |")
            if (variant, p.a, p.b) in KEY_PAIRS and p.hands:
                notes.append(_hand_points(p))
            shares[(variant, p.a, p.b)] = p.share
            for name in new_times:
                new_times[name] += p.times.get(name, [])
        for line in notes:
            print(line)
        table = elo_table(names, rows, _seed(args.seed, variant, "elo"))
        print("| player | Elo | 95 % interval |")
        print("|---|---:|---|")
        for name, (e, lo, hi) in sorted(table.items(), key=lambda kv: -kv[1][0]):
            print(f"| {name} | {e:.0f} | {lo:.0f} – {hi:.0f} |")
    print()
    print(
        f"search decisions in the league ({dict(search).get('worlds', LEAGUE_WORLDS)} worlds), "
        f"CPU: {_ms(new_times['search'])}"
    )
    wall, cpu, played = decision_times(args.seed)
    print(f"search with the table default (200 ms budget), wall: {_ms(wall)}; CPU: {_ms(cpu)}")
    cut = sum(1 for n in played if n < SearchPlayer.worlds)
    print(
        f"the budget stopped {cut} of {len(played)} of those decisions before "
        f"{SearchPlayer.worlds} worlds (fewest played: {min(played, default=0)})"
    )
    print(f"reasoner decisions (every poll), CPU: {_ms(new_times['reasoner'])}")
    goal = [shares.get((v, "search", "montecarlo")) for v in ("pairs-pips", "brazilian-points")]
    p = "n/a" if None in goal else f"{min(x for x in goal if x is not None):.3f}"
    q = shares.get(("kems", "reasoner", "tracking"))
    print(f"dominoes_vs_montecarlo={p} kems_vs_tracking={'n/a' if q is None else f'{q:.3f}'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
