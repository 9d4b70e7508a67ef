"""The fault injector: rates, bursts, seeding, delays that keep order, timelines."""

from __future__ import annotations

import random

import pytest

from tablesense.sim.faults import FaultPlan, ScheduledFault


def data(n: int = 100_000) -> bytes:
    return random.Random(0).randbytes(n)


@pytest.mark.parametrize("burst", [1.0, 8.0])
def test_fraction_of_hit_bytes_matches_the_rate(burst: float) -> None:
    f = FaultPlan.from_rate(0.02, seed=1, burst=burst).byte_faults(1, "to_host")
    assert f is not None
    d = data()
    f.mangle(d)
    c = f.counts
    hit = (c.dropped + c.corrupted + c.duplicated) / len(d)
    assert 0.015 < hit < 0.025
    assert c.dropped and c.corrupted and c.duplicated


def test_bursts_cluster_the_hits() -> None:
    def runs(burst: float) -> int:
        plan = FaultPlan(seed=3, corrupt=0.02, burst=burst)
        f = plan.byte_faults(1, "to_host")
        assert f is not None
        d = bytes(50_000)  # zeros: a corrupted byte is any non-zero one
        out = f.mangle(d)
        return sum(1 for i in range(len(out)) if out[i] and (i == 0 or not out[i - 1]))

    assert runs(8.0) < runs(1.0) / 3


def test_same_seed_same_faults_and_directions_differ() -> None:
    plan = FaultPlan.from_rate(0.05, seed=9)
    a = plan.byte_faults(2, "to_host")
    b = plan.byte_faults(2, "to_host")
    c = plan.byte_faults(2, "to_board")
    assert a is not None and b is not None and c is not None
    d = data(5000)
    assert a.mangle(d) == b.mangle(d)
    assert a.mangle(d) != c.mangle(d)
    assert FaultPlan().byte_faults(1, "to_host") is None
    assert FaultPlan(drop=0.1, directions=("to_host",)).byte_faults(1, "to_board") is None


def test_delays_keep_the_order() -> None:
    plan = FaultPlan(seed=1, delay=0.5, delay_ms=(5.0, 10.0))
    f = plan.byte_faults(1, "to_host")
    assert f is not None
    out = bytearray()
    now = 0.0
    chunks = [bytes([i]) * 3 for i in range(50)]
    for ch in chunks:
        out += f.push(ch, now)
        out += f.due(now)
        now += 0.001
    out += f.due(now + 1.0)
    assert bytes(out) == b"".join(chunks)
    assert f.counts.delayed > 0


def test_timeline_at_a_time_and_at_a_rate() -> None:
    plan = FaultPlan(
        seed=2, events=[ScheduledFault(1.0, "reboot", 1)], unplug_every=10.0, unplug_for=0.5
    )
    tl = plan.timeline([1, 2], horizon=200.0)
    assert tl[0].at <= tl[-1].at
    assert ScheduledFault(1.0, "reboot", 1) in tl
    unplugs = [f for f in tl if f.kind == "unplug"]
    assert 20 <= len(unplugs) <= 60  # ~ 2 boards x 200 s / 10.5 s
    assert all(f.duration == 0.5 for f in unplugs)
    assert plan.timeline([1, 2], 200.0) == tl  # seeded


def test_bad_rates_are_refused() -> None:
    with pytest.raises(ValueError, match="outside"):
        FaultPlan.from_rate(0.6)
    with pytest.raises(ValueError, match="burst"):
        FaultPlan.from_rate(0.01, burst=0.5)
