"""A host-dealt table (``play --virtual-table``) deals each announced match
afresh: without ``--seed`` every match of every table of an evening used to be
dealt alike (the same game played at each table, round after round); with a
seed, each match's deal follows from the seed and the match."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tablesense.journal.store import Journal
from tablesense.outputs.events import EventBus
from tablesense.referee.evening import MatchMaker
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry


def _announced(match: int) -> dict[str, Any]:
    return {"match": match, "variant": "pairs-pips", "options": {"target": 50},
            "seats": [{"seat": i, "player": n} for i, n in enumerate(("Ana", "Cy", "Bia", "Di"))]}


def _seeds(tmp_path: Path, name: str, seed: int | None, matches: list[int]) -> list[int]:
    journal = Journal(tmp_path / f"{name}.sqlite")
    maker = MatchMaker(TableGeometry.load("dominoes-4"), TagRegistry.virtual(0), journal, EventBus(), "dominoes",
                       deal="host", seed=seed, computer=frozenset(range(4)))
    out = []
    for m in matches:
        referee = maker(_announced(m))
        out.append(int(referee.spec.seed))
        journal.close_match("finished")
    return out


def test_without_a_seed_every_announced_match_is_dealt_afresh(tmp_path: Path) -> None:
    table_1 = _seeds(tmp_path, "t1", None, [1, 3])
    table_2 = _seeds(tmp_path, "t2", None, [2, 4])
    assert len({*table_1, *table_2}) == 4, (table_1, table_2)


def test_with_a_seed_the_deal_follows_the_seed_and_the_match(tmp_path: Path) -> None:
    first = _seeds(tmp_path, "a", 7, [1, 2])
    again = _seeds(tmp_path, "b", 7, [1, 2])
    assert first == again and first[0] != first[1]
