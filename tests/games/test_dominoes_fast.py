"""``simulate_deal``: the lean deal-and-playout path must deal uniformly, make
only moves the checked API allows, choose them uniformly, and score exactly as
:meth:`DominoHand.result` does."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

import tablesense.games.dominoes.fast as fast
from tablesense.games.dominoes import (
    ALL_TILES,
    VARIANTS,
    DominoHand,
    DominoOptions,
    Play,
    PlayoutTrace,
    simulate_deal,
)

# every pairs-pips option that changes a playout or its score
PAIRS_OPTIONS: list[dict[str, Any]] = [
    {},
    {"forced_block": "allowed"},
    {"score_all_pips": True},
    {"blocked_tie": "nobody"},
    {"blocked_tie": "replay", "forced_block": "allowed"},
]


def replay(opts: DominoOptions, trace: PlayoutTrace) -> DominoHand:
    """The traced hand played again through the checked public API."""
    hand = DominoHand(opts, trace.deal, trace.boneyard)
    for m in trace.moves:
        hand.play(m)  # raises IllegalPlayError on any move the rules forbid
    return hand


@pytest.mark.parametrize("options", PAIRS_OPTIONS)
def test_pairs_pips_agrees_with_the_public_engine(options: dict[str, Any]) -> None:
    opts = DominoOptions.from_dict("pairs-pips", options)
    outcomes: Counter[str] = Counter()
    for seed in range(600):
        trace = PlayoutTrace()
        result = simulate_deal(opts, random.Random(seed), trace)
        assert sorted(t for h in trace.deal for t in h) == list(ALL_TILES)
        assert [len(h) for h in trace.deal] == [7, 7, 7, 7]
        hand = replay(opts, trace)
        assert hand.is_over, f"seed {seed}: the trace stops before the end"
        assert hand.result() == result, f"seed {seed}"
        # tracing does not change what is drawn
        assert simulate_deal(opts, random.Random(seed)) == result
        outcomes[result.outcome] += 1
    assert outcomes["domino"] > 100 and outcomes["blocked"] > 50


def test_forced_block_choice_is_exercised(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rare path that replaces a forbidden blocking play runs, and what it
    chooses is legal (the replay checks it)."""
    calls: list[object] = []
    real = fast._fast_unblock

    def spy(*args: Any) -> Any:
        out = real(*args)
        calls.append(out)
        return out

    monkeypatch.setattr(fast, "_fast_unblock", spy)
    opts = DominoOptions.from_dict("pairs-pips")
    for seed in range(3000):
        trace = PlayoutTrace()
        result = simulate_deal(opts, random.Random(seed), trace)
        if calls and calls[-1] is not None and len(calls) > 5:
            break
        assert replay(opts, trace).result() == result
    assert any(c is not None for c in calls), "no blocking play was ever replaced"
    assert any(c is None for c in calls), "no hand had only blocking plays"


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v != "pairs-pips"])
def test_other_variants_take_the_general_path(variant: str) -> None:
    opts = DominoOptions.from_dict(variant)
    for seed in range(100):
        trace = PlayoutTrace()
        result = simulate_deal(opts, random.Random(seed), trace)
        assert replay(opts, trace).result() == result
        assert simulate_deal(opts, random.Random(seed)) == result


def chi2(counts: list[int], expected: list[float]) -> float:
    return sum((c - e) ** 2 / e for c, e in zip(counts, expected, strict=True))


def test_the_deal_is_uniform() -> None:
    """Each tile lands in each seat a quarter of the time, and two given tiles
    share a seat 6 times in 27 (a biased split of the 14 + 14 or 7 + 7 stages
    shows in one or the other)."""
    opts = DominoOptions.from_dict("pairs-pips")
    rng = random.Random(2024)
    n = 6000
    seat_of = Counter[tuple[int, int]]()
    together = Counter[tuple[int, int]]()
    for _ in range(n):
        trace = PlayoutTrace()
        simulate_deal(opts, rng, trace)
        for s, hand in enumerate(trace.deal):
            idx = [t.index for t in hand]
            for i in idx:
                seat_of[i, s] += 1
            for i in idx:
                for j in idx:
                    if i < j:
                        together[i, j] += 1
    counts = [seat_of[i, s] for i in range(28) for s in range(4)]
    # 28 * 3 = 84 degrees of freedom: the 1e-6 upper tail is about 160
    assert chi2(counts, [n / 4] * len(counts)) < 160
    pairs = [(i, j) for i in range(28) for j in range(i + 1, 28)]
    p = 6 / 27
    stat = sum((together[ij] - n * p) ** 2 / (n * p * (1 - p)) for ij in pairs)
    # 378 (correlated) pair cells: mean 378; a biased deal lands far above
    assert stat < 520


def test_moves_are_chosen_uniformly() -> None:
    """Where the checked API offers k plays, the one played is each of them
    about 1/k of the time."""
    opts = DominoOptions.from_dict("pairs-pips", {"forced_block": "allowed"})
    rng = random.Random(99)
    by_k: dict[int, list[int]] = {}
    for _ in range(2500):
        trace = PlayoutTrace()
        simulate_deal(opts, rng, trace)
        hand = DominoHand(opts, trace.deal)
        for m in trace.moves:
            legal = hand.legal_moves()
            if type(m) is Play and len(legal) > 1:
                by_k.setdefault(len(legal), [0] * len(legal))[legal.index(m)] += 1
            hand.apply(m)
    tested = 0
    for k, counts in by_k.items():
        total = sum(counts)
        if total < 50 * k:
            continue
        tested += 1
        # 1e-6 upper tail of chi-square with k - 1 <= 13 degrees of freedom < 50
        assert chi2(counts, [total / k] * k) < 50, (k, counts)
    assert tested >= 4
