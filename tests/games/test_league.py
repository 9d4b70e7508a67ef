"""``benchmarks/players.py``: the league is reproducible for a seed, and
``--search`` reaches the league's search player. (Strength itself is
measured by running the league, not here.)"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "players.py"


@pytest.fixture(scope="module")
def league() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_players", _PATH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_players"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_a_pairing_is_the_same_for_a_seed(league: ModuleType) -> None:
    fast = (("worlds", 3),)
    one = league.play_domino_pairing("brazilian-points", "search", "greedy", 1, 5, fast)
    two = league.play_domino_pairing("brazilian-points", "search", "greedy", 1, 5, fast)
    assert one.deals == two.deals
    assert one.hands == two.hands and one.hands


def test_search_settings_reach_the_league_player(league: ModuleType) -> None:
    parser = league.argparse.ArgumentParser()
    opts = league._search_opts(parser, ["worlds=7", "pips_weight=0.5", "objective=hand"])
    assert opts == (("worlds", 7), ("pips_weight", 0.5), ("objective", "hand"))
    player = league.domino_player("search", opts)
    assert (player.worlds, player.pips_weight, player.objective) == (7, 0.5, "hand")
    assert player.budget_ms is None  # the league is reproducible: no time budget
    with pytest.raises(SystemExit):
        league._search_opts(parser, ["budget_ms=80"])
