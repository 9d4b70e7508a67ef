"""A remote match between two tables, in one process and without a broker:
the host's authority, two table sides judging their own (dict) tables,
computer seats and hands on both sides; pairs-pips at length, and every
variant remote play supports to its end (Kems on its board judge). The wire
is tested in test_two_tables.py; this is the logic it carries."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tablesense.games.dominoes import ALL_TILES
from tablesense.games.record import replay
from tablesense.games.registry import find_game
from tablesense.remote.authority import Authority, Seating
from tablesense.remote.board_judge import BoardJudge
from tablesense.remote.judge import PLACE, TARGET
from tablesense.remote.match import HostSide, Message, TableSide
from tablesense.table.geometry import TableGeometry

PIECES = [str(t) for t in ALL_TILES]

#: Every variant remote play supports: (game, variant, layout, seats, options).
VARIANTS = [
    ("dominoes", "pairs-pips", "dominoes-4-remote", 4, {"target": 30}),
    ("dominoes", "pips-two-player", "dominoes-2-remote", 2, {"target": 30}),
    ("dominoes", "brazilian-points", "dominoes-4-remote", 4, {"target": 30}),
    ("dominoes", "brazilian-points", "dominoes-3-remote", 3, {"target": 30}),
    ("kems", "classic", "kems-4-remote", 4, {"target": 3}),
]
PAIRS: tuple[str, str, str, int, dict[str, Any]] = ("dominoes", "pairs-pips", "dominoes-4-remote", 4, {})


class DictTable:
    """A table as its sensors read it: cell -> piece; hands move pieces."""

    def __init__(self, geometry: TableGeometry, seed: int, pieces: list[str] = PIECES) -> None:
        cells = list(geometry.stock)
        random.Random(seed).shuffle(cells)
        self.pieces: dict[str, str] = dict(zip(cells, pieces, strict=False))
        self.moves = 0

    def move(self, from_cell: str, to_cell: str) -> None:
        assert to_cell not in self.pieces, f"{to_cell} is taken"
        self.pieces[to_cell] = self.pieces.pop(from_cell)
        self.moves += 1


def run(seating: dict[str, frozenset[int]], seed: int, max_rounds: int = 20_000,
        drop: tuple[str, int] | None = None, loss: float = 0.0,
        variant: tuple[str, str, str, int, dict[str, Any]] = PAIRS,
        ) -> tuple[HostSide, dict[str, TableSide], dict[str, DictTable]]:
    """Play until the match is over. ``drop``: that table's link is down for 50
    rounds from round N; ``loss``: that share of the messages, both ways, is
    lost (a table says ``alive`` every 10 rounds, a round is 0.1 s)."""
    game, name, layout, _, options = variant
    g = TableGeometry.load(layout)
    host = HostSide(Authority(game, name, Seating(seating), options=options, seed=seed))
    pieces = sorted(find_game(game).all_pieces(host.authority.match.options))
    worlds = {t: DictTable(g, seed + k, pieces) for k, t in enumerate(seating)}
    now = [0.0]
    sides = {t: TableSide(g, s, pieces, bots=s, hands=worlds[t], clock=lambda: now[0], game=game)
             for t, s in seating.items()}
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


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: f"{v[1]}-{v[3]}")
def test_every_variant_plays_to_its_end_between_two_tables(variant: tuple[str, str, str, int, dict[str, Any]]) -> None:
    """The host's seats are the even ones, the other table's the odd ones (a
    pair, a Kems team; one seat each at two): the match ends, both tables hold
    the authority's record, and it replays as a legal match of the variant."""
    game, name, _, seats, _ = variant
    seating = {"host": frozenset(range(0, seats, 2)), "join": frozenset(range(1, seats, 2))}
    host, sides, worlds = run(seating, 5, variant=variant, max_rounds=60_000)
    assert host.authority.match.is_over
    record = host.authority.record()
    assert record["game"] == game and record["variant"] == name and len(record["hands"]) >= 1
    for side in sides.values():
        assert side.view.record == record
    result = replay(record)
    assert list(result.score) == list(host.authority.match.score)
    # every piece was moved by the tables' hands: each table laid out its deals
    assert all(w.moves > 0 for w in worlds.values())


def test_a_kems_match_lays_each_remote_swap_and_refresh_from_the_stock() -> None:
    """At each Kems table, every swap of the other table's seats lit the given
    card in the stock and its slot (then the card taken went back to the
    stock), and each refresh lit the four new cards with their slots; the
    refreshes both tables asked for at once turned the board over once."""
    variant = VARIANTS[-1]
    seating = {"host": frozenset({0, 2}), "join": frozenset({1, 3})}
    host, sides, _ = run(seating, 8, variant=variant, max_rounds=60_000)
    assert host.authority.match.is_over
    record = host.authority.record()
    side = sides["host"]
    assert isinstance(side.judge, BoardJudge)
    g = side.geometry
    slots, stock = set(g.kems_slots), set(g.stock)
    # a piece to place lit in the stock with its slot: at least once for each
    # of the other team's swaps (the deals' and refreshes' boards light so too)
    placing = [lights for _, lights in side.lights_log
               if any(rgb == PLACE and c in stock for c, rgb in lights.items())
               and any(rgb == TARGET and c in slots for c, rgb in lights.items())]
    remote_swaps = [m for h in record["hands"] for m in h["events"] if "swap" in m and m["seat"] in (1, 3)]
    refreshes = [m for h in record["hands"] for m in h["events"] if m.get("refresh")]
    assert remote_swaps and refreshes
    assert len(placing) >= len(remote_swaps)
    # a target is a slot, never a rack or the stock (the racks light in their seat's colour)
    assert all(c in slots for _, lights in side.lights_log for c, rgb in lights.items() if rgb == TARGET)
    # what the authority refused: a refresh asked for by both tables after the same
    # board (the later one), a swap whose card the other team took first, a swap after a call
    assert all("not turned over twice" in r or "is not on the board" in r or "ended it" in r
               for s in sides.values() for r in s.rejections), [s.rejections for s in sides.values()]
