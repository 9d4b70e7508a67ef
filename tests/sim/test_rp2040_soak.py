"""Soak (--runslow): a whole demo hand on emulated RP2040 boards with link
faults gives the same record as on today's virtual boards for the same seed."""

from __future__ import annotations

import pytest

from tablesense.referee.demo import DemoConfig, run_demo
from tablesense.sim.rp2040.board import available
from testsupport import need


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_hand_on_emulated_rp2040_boards_with_link_faults_matches_the_virtual_boards() -> None:
    need(available() is None, f"emulated RP2040 boards: {available()}")
    virtual = run_demo(DemoConfig(hands=1, web=False, seed=7, link_faults=0.01))
    emulated = run_demo(DemoConfig(hands=1, web=False, seed=7, link_faults=0.01, boards="rp2040"))
    assert emulated.errors == [] and emulated.hands_played == 1
    assert emulated.record == virtual.record
