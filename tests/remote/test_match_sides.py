"""A remote pairs-pips match between two tables, in one process and without
a broker: the host's authority, two table sides judging their own (dict)
tables, computer seats and hands on both sides. The wire is tested in
test_two_tables.py; this is the logic it carries."""

from __future__ import annotations

import random

import pytest

from tablesense.games.dominoes import ALL_TILES
from tablesense.remote.authority import Authority, Seating
from tablesense.remote.judge import PLACE, TARGET
from tablesense.remote.match import HostSide, Message, TableSide
from tablesense.table.geometry import TableGeometry

PIECES = [str(t) for t in ALL_TILES]


class DictTable:
    """A table as its sensors read it: cell -> piece; hands move pieces."""

    def __init__(self, geometry: TableGeometry, seed: int) -> None:
        cells = list(geometry.stock)
        random.Random(seed).shuffle(cells)
        self.pieces: dict[str, str] = dict(zip(cells, PIECES, strict=False))
        self.moves = 0

    def move(self, from_cell: str, to_cell: str) -> None:
        assert to_cell not in self.pieces, f"{to_cell} is taken"
        self.pieces[to_cell] = self.pieces.pop(from_cell)
        self.moves += 1


def run(seating: dict[str, frozenset[int]], seed: int, max_rounds: int = 20_000,
        drop: tuple[str, int] | None = None, loss: float = 0.0) -> tuple[HostSide, dict[str, TableSide], dict[str, DictTable]]:
    """Play until the match is over. ``drop``: that table's link is down for 50
    rounds from round N; ``loss``: that share of the messages, both ways, is
    lost (a table says ``alive`` every 10 rounds, a round is 0.1 s)."""
    g = TableGeometry.load("dominoes-4-remote")
    host = HostSide(Authority("dominoes", "pairs-pips", Seating(seating), seed=seed))
    worlds = {t: DictTable(g, seed + k) for k, t in enumerate(seating)}
    now = [0.0]
    sides = {t: TableSide(g, s, PIECES, bots=s, hands=worlds[t], clock=lambda: now[0]) for t, s in seating.items()}
    inbox: list[tuple[str, Message]] = host.start()
    dropped: str | None = None
    lose = random.Random(seed).random
    for n in range(max_rounds):
        now[0] += 0.1
        for table, msg in inbox:
            if table != dropped and not lose() < loss:
                sides[table].receive(msg)
        inbox = []
        if loss and n % 10 == 0:
            for table, side in sides.items():
                inbox += host.handle(table, side.alive())
        if drop is not None and n == drop[1]:
            dropped = drop[0]
            inbox += host.drop(dropped)
        if drop is not None and n == drop[1] + 50:
            inbox += host.handle(dropped or "", {"type": "alive", "last": sides[dropped or ""].view.last})
            dropped = None
        for table, side in sides.items():
            if table == dropped:
                continue
            for msg in side.step(worlds[table].pieces):
                if not lose() < loss:
                    inbox += host.handle(table, msg)
        if host.authority.match.is_over and all(s.view.record is not None for s in sides.values()):
            break
    return host, sides, worlds


@pytest.mark.parametrize("seed", [1, 2])
def test_two_tables_play_a_whole_pairs_pips_match(seed: int) -> None:
    host, sides, worlds = run({"ns": frozenset({0, 2}), "ew": frozenset({1, 3})}, seed)
    assert host.authority.match.is_over
    record = host.authority.record()
    assert record["hands"], "no hand was played"
    for side in sides.values():
        assert side.view.record == record  # the same record on both sides
        assert side.rejections == []
    # every remote play was placed by a hand at the other table: 28 tiles a hand
    # come out of the stock or a rack at each table
    for w in worlds.values():
        assert w.moves >= 28 * len(record["hands"])


def test_each_remote_play_lights_its_stock_piece_and_target_once() -> None:
    host, sides, _ = run({"ns": frozenset({0, 2}), "ew": frozenset({1, 3})}, 3)
    side = sides["ns"]
    g = side.geometry
    assert g.line is not None
    placing = [lights for _, lights in side.lights_log
               if sorted(lights.values()) == sorted([PLACE, TARGET])]
    for lights in placing:
        (piece_cell,) = [c for c, rgb in lights.items() if rgb == PLACE]
        (target_cell,) = [c for c, rgb in lights.items() if rgb == TARGET]
        assert piece_cell in g.stock and target_cell in g.line.cells
    # the play that ends a hand is scored at once: the table tidies up for the
    # next deal instead of placing it
    remote_plays = sum(1 for h in host.authority.record()["hands"] for m in h["moves"][:-1]
                       if "tile" in m and m["seat"] in (1, 3))
    assert len(placing) == remote_plays > 0


def test_a_dropped_table_pauses_everyone_and_resumes_exactly() -> None:
    host, sides, _ = run({"ns": frozenset({0, 2}), "ew": frozenset({1, 3})}, 4, drop=("ew", 200))
    kinds = [f["kind"] for f in host.authority.facts]
    assert "pause" in kinds and "resume" in kinds
    assert host.authority.match.is_over
    assert sides["ew"].view.record == sides["ns"].view.record == host.authority.record()


def test_lost_messages_are_sent_again_and_the_match_ends_the_same() -> None:
    """A tenth of the frames, claims, ``dealt`` and legal-move messages lost:
    the tables' ``alive`` and their resent claims recover every one."""
    lossy = run({"ns": frozenset({0, 2}), "ew": frozenset({1, 3})}, 6, loss=0.1, max_rounds=60_000)[0]
    clean = run({"ns": frozenset({0, 2}), "ew": frozenset({1, 3})}, 6)[0]
    assert lossy.authority.match.is_over
    assert lossy.authority.record() == clean.authority.record()
