"""The table room knows no game: which games a layout can host, and what a
game needs of the table, is checked where a game meets a table (the referee)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tablesense.games.registry import GAMES
from tablesense.referee.core import MatchSpec, Referee, RefereeError
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry

TABLES = Path(__file__).resolve().parents[2] / "hardware" / "tables"
LAYOUTS = sorted(p.stem for p in TABLES.glob("*.toml"))


def _referee(game: str, geometry: TableGeometry, variant: str = "") -> Referee:
    the_game = GAMES[game]
    variant = variant or the_game.variant_for_seats(len(geometry.seats))
    return Referee(MatchSpec(game, variant), geometry, TagRegistry.virtual(0))


def test_there_are_layouts() -> None:
    assert len(LAYOUTS) >= 6


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_shipped_layout_hosts_the_games_it_names(layout: str) -> None:
    geometry = TableGeometry.load(layout)
    assert geometry.games and set(geometry.games) <= set(GAMES), geometry.games
    for game in geometry.games:
        ref = _referee(game, geometry)
        assert ref.game is GAMES[game]
        assert layout in (GAMES[game].layout_name(len(geometry.seats)), GAMES[game].layout_name(len(geometry.seats)) + "-remote")


def _as_dict(layout: str) -> dict[str, Any]:
    import tomllib

    return tomllib.loads((TABLES / f"{layout}.toml").read_text(encoding="utf-8"))


def test_a_kems_table_without_four_board_slots_is_refused_by_the_referee() -> None:
    d = _as_dict("kems-4")
    for cell in d["kems_slots"][3:]:
        d["cells"][cell]["zone"] = "spare"
    d["kems_slots"] = d["kems_slots"][:3]
    geometry = TableGeometry.from_dict(d)  # the table room does not know what Kems needs
    with pytest.raises(RefereeError, match="table 'kems-4' needs four Kems board slots, it has 3"):
        _referee("kems", geometry)


def test_a_dominoes_table_without_a_line_is_refused_by_the_referee() -> None:
    d = _as_dict("kems-4")
    d["games"] = ["dominoes"]
    geometry = TableGeometry.from_dict(d)
    with pytest.raises(RefereeError, match="has no line of play: it cannot host dominoes"):
        _referee("dominoes", geometry, "pairs-pips")


def test_a_game_the_layout_does_not_name_or_nobody_knows_is_refused() -> None:
    geometry = TableGeometry.load("dominoes-4")
    with pytest.raises(RefereeError, match="laid out for dominoes, not kems"):
        _referee("kems", geometry, "classic")
    d = _as_dict("dominoes-4")
    d["games"] = ["chess"]
    with pytest.raises(RefereeError, match="unknown game 'chess': the games are dominoes, kems"):
        Referee(MatchSpec("chess", "x"), TableGeometry.from_dict(d), TagRegistry.virtual(0))
