"""Dominoes tests written to kill mutants of games/dominoes
(benchmarks/mutation.py, docs/mutation-testing.md)."""

from __future__ import annotations

import json
import random

import pytest

from tablesense.games import record as records
from tablesense.games.dominoes import DominoMatch, Play


def test_either_partner_opens_after_a_blocked_hand_with_options_read_from_json() -> None:
    """Options read from a record are strings the JSON parser made (not the
    literals of the code): ``blocked_opener: "either"`` written out in the
    record must still let the other partner open."""
    rng = random.Random(11)
    for _ in range(400):
        m = DominoMatch("brazilian-points")
        h = m.new_hand(rng)
        h.playout(rng)
        r = m.finish_hand()
        if r.outcome != "blocked" or r.winner is None:
            continue
        nxt = m.new_hand(rng)
        other = (nxt.to_play + 2) % 4  # the partner of the suggested opener
        plain = next((t for t in nxt.hand_of(other) if not t.is_double), None)
        if plain is None:
            m.void_hand("not the case under test")
            continue
        nxt.play(Play(other, plain))
        nxt.playout(rng)
        m.finish_hand()
        rec = m.to_record()
        rec["options"] = {**rec.get("options", {}), "blocked_opener": "either"}
        assert len(records.replay(json.dumps(rec)).hands) == 2
        return
    pytest.fail("no blocked hand to follow")
