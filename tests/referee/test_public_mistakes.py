"""Issue 21, the other half: mistakes at the table are explained in public
without naming a piece a seat holds hidden.

The whole-match test (test_public_stream.py) sees clean play; here players
err on purpose, many times, on every dominoes variant and Kems seat count:
a tile lifted from a rack and held, a tile put on another seat's rack, a
boneyard tile taken out of turn, a pass refused while a tile fits, buttons
out of turn, a card handed to a partner. Between the mistakes the game goes
on with legal moves. Every event's public form (what the display channels
send) may name only pieces that lay face up at some time this hand (cells
whose zone is not a rack or the boneyard, read from the geometry file),
announced tiles and the Kems board; and no text numbers a seat from 0.
"""

from __future__ import annotations

import json
import random
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from tablekit import Hands, perform

from tablesense.outputs.events import TableEvent, public_event
from tablesense.referee.core import MatchSpec, Referee
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry

TILE_RE = re.compile(r"(?<![\w-])([0-6])-([0-6])(?![\w-])")
CARD_RE = re.compile(r"(?<![\w])(10|[2-9TJQKA])([SHDC♠♥♦♣])(?![\w])")
SIGN = {"♠": "S", "♥": "H", "♦": "D", "♣": "C"}
ZERO_BASED = re.compile(r"\b(seat|team) \d")


def named(text: str, game: str) -> set[str]:
    if game == "dominoes":
        return {"-".join(sorted(m)) for m in TILE_RE.findall(text)}
    return {("T" if r == "10" else r) + str(SIGN.get(s) or s) for r, s in CARD_RE.findall(text)}


def face_up_cells(table: str) -> set[str]:
    path = Path(__file__).resolve().parents[2] / "hardware" / "tables" / f"{table}.toml"
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    return {cid for cid, c in doc["cells"].items() if c["zone"] not in ("rack", "boneyard")}


class PublicWatch:
    """The referee's events checked one by one against the table's public pieces."""

    def __init__(self, game: str, table: str) -> None:
        self.game = game
        self.open = face_up_cells(table)
        self.public: set[str] = set()
        self.everything = False
        self.h: Hands | None = None
        self.checked = 0
        self.rejections = 0
        self.private = 0
        self.off_table: set[str] | None = None

    def norm(self, piece: str) -> str:
        return next(iter(named(piece, self.game)), piece)

    def look(self) -> None:
        if self.h is not None:
            self.public |= {self.norm(p) for c, p in self.h.cells.items() if c in self.open}
            if self.off_table is not None:
                # a deal being read: a tile on no cell at all is nobody's secret
                on_table = {self.norm(p) for p in self.h.cells.values()}
                self.public |= self.off_table - on_table

    def emit(self, kind: str, /, **data: Any) -> None:
        data = json.loads(json.dumps(data))
        self.look()
        if kind == "hand_started":
            self.everything = False
            self.public = set()
            self.look()
        if kind == "hand_ended":
            self.everything = True
        if kind == "move_rejected":
            self.rejections += 1
            self.private += bool(data.get("private"))
        out = public_event(TableEvent(kind, data, 0, 0.0))
        if out is None:
            return
        if kind == "view" and self.game == "kems":
            self.public |= set(out.data.get("board") or [])
        if kind == "move_accepted" and "announce" in out.data["move"]:
            self.public.add(self.norm(str(out.data["move"]["announce"])))
        for key in ("text", "instruction"):
            said = str(out.data.get(key) or "")
            assert not ZERO_BASED.search(said), f"{kind}: {said!r}"
        if self.everything or kind in ("hand_ended", "match_ended"):
            return
        body = {k: v for k, v in out.data.items() if k not in ("last_line", "result")}
        names = named(json.dumps(body, ensure_ascii=False), self.game)
        self.checked += 1
        hidden = names - self.public
        assert not hidden, f"public {kind} names {sorted(hidden)} (not public): {out.data}"


def referee(game: str, variant: str, table: str, seed: int) -> tuple[Referee, PublicWatch, Hands]:
    watch = PublicWatch(game, table)
    ref = Referee(
        MatchSpec(game, variant, seed=seed),
        TableGeometry.load(table),
        TagRegistry.virtual(0),
        emit=watch.emit,
        store=lambda entry: None,
    )
    ref.start(0.0)
    h = Hands(ref)
    watch.h = h
    h.settle()
    return ref, watch, h


def rack_pieces(h: Hands, seat: int) -> list[str]:
    return [h.cells[c] for c in h.ref.geometry.seats[seat].rack if c in h.cells]


def domino_mistake(h: Hands, rng: random.Random) -> None:
    ref = h.ref
    hand = ref.hand
    n = len(ref.geometry.seats)
    seat = rng.randrange(n)
    what = rng.choice(["lift", "other_rack", "bone", "pass", "press_other", "line_out_of_turn"])
    mine = rack_pieces(h, seat)
    if what == "lift" and mine:
        h.lift(rng.choice(mine))
        h.show(ref.timing.missing + 0.5)
    elif what == "other_rack" and mine:
        other = (seat + 1) % n
        free = [c for c in ref.geometry.seats[other].rack if c not in h.cells]
        if free:
            h.drop(rng.choice(mine), free[0])
            h.show(ref.timing.error + 0.5)
    elif what == "bone" and ref.geometry.boneyard:
        bone = [h.cells[c] for c in ref.geometry.boneyard if c in h.cells]
        free = [c for c in ref.geometry.seats[seat].rack if c not in h.cells]
        if bone and free:
            h.drop(rng.choice(bone), free[0])
            h.show(ref.timing.error + 0.5)
    elif what == "pass" and hand is not None and not hand.is_over:
        ref.press(hand.to_play, "main", h.now)
        h.show(0.1)
    elif what == "press_other" and hand is not None and not hand.is_over:
        ref.press((hand.to_play + 1) % n, "main", h.now)
        h.show(0.1)
    elif what == "line_out_of_turn" and hand is not None and hand.line and not hand.is_over:
        other = (hand.to_play + 1) % n
        theirs = rack_pieces(h, other)
        rules: Any = ref.rules
        target = rules.target_cell("left")
        if theirs and target is not None and target not in h.cells:
            h.drop(rng.choice(theirs), target)
            h.show(ref.timing.error + 0.5)
    h.reset()
    h.settle()


def kems_mistake(h: Hands, rng: random.Random) -> None:
    ref = h.ref
    n = len(ref.geometry.seats)
    seat = rng.randrange(n)
    mine = rack_pieces(h, seat)
    what = rng.choice(["lift", "partner", "fifth"])
    if what == "lift" and mine:
        h.lift(rng.choice(mine))
        h.show(ref.timing.missing + 0.5)
    elif what == "partner" and mine:
        partner = ref.hand.partner_of(seat)
        free = [c for c in ref.geometry.seats[partner].rack if c not in h.cells]
        if free:
            h.drop(rng.choice(mine), free[0])
            h.show(ref.timing.error + 0.5)
        else:
            card = rng.choice(mine)
            h.lift(card)
            h.show(0.2)
            spare = rack_pieces(h, partner)
            h.lift(spare[0])
            h.drop(card, ref.geometry.seats[partner].rack[0] if ref.geometry.seats[partner].rack[0] not in h.cells else next(c for c in ref.geometry.seats[partner].rack if c not in h.cells))
            h.show(ref.timing.error + 0.5)
    elif what == "fifth":
        slots = [c for c in ref.geometry.kems_slots if c in h.cells]
        free = [c for c in ref.geometry.seats[seat].rack if c not in h.cells]
        if slots:
            card = h.cells[slots[0]]
            h.lift(card)
            if free:
                h.drop(card, free[0])
            h.show(ref.timing.error + 0.5)
    h.reset()
    h.settle()


DOMINOES = [
    ("pairs-pips", "dominoes-4"),
    ("pips-two-player", "dominoes-2"),
    ("brazilian-points", "dominoes-3"),
    ("brazilian-points", "dominoes-4"),
]


@pytest.mark.parametrize(("variant", "table"), DOMINOES)
def test_dominoes_mistakes_are_explained_without_naming_hidden_tiles(
    variant: str, table: str
) -> None:
    rng = random.Random(f"{variant}:{table}")
    ref, watch, h = referee("dominoes", variant, table, seed=3)
    for _ in range(60):
        if ref.state.phase == "over":
            break
        hand = ref.hand
        if hand is None or hand.is_over:
            h.settle()
            h.reset()
            h.settle()
            continue
        if rng.random() < 0.5:
            domino_mistake(h, rng)
            continue
        moves = hand.legal_moves()
        perform(h, rng.choice(moves))
        h.reset()
        h.settle()
    assert watch.rejections >= 10 and watch.private >= 5, vars(watch)
    assert watch.checked > 50


@pytest.mark.parametrize("table", ["kems-4", "kems-6", "kems-8"])
def test_kems_mistakes_are_explained_without_naming_hidden_cards(table: str) -> None:
    rng = random.Random(table)
    ref, watch, h = referee("kems", "classic", table, seed=4)
    for _ in range(30):
        if ref.state.phase == "over" or ref.hand is None:
            break
        kems_mistake(h, rng)
    assert watch.rejections >= 10 and watch.private >= 5, vars(watch)


def test_a_deal_being_read_from_the_racks_is_not_named_in_public() -> None:
    """``play --deal table``: while the racks are dealt, a deal the rules
    refuse is explained without naming a tile on a rack (a tile on no cell
    at all is named: the players must find it)."""
    from tablesense.table.tags import all_tiles

    watch = PublicWatch("dominoes", "dominoes-4")
    tiles = [watch.norm(t) for t in all_tiles()]
    watch.off_table = set(tiles)
    ref = Referee(
        MatchSpec("dominoes", "pairs-pips", seed=1),
        TableGeometry.load("dominoes-4"),
        TagRegistry.virtual(0),
        emit=watch.emit,
        deal="table",
    )
    ref.start(0.0)
    h = Hands(ref)
    watch.h = h
    random.Random(2).shuffle(tiles)
    racks = [s.rack for s in ref.geometry.seats]

    def deal() -> None:
        h.cells = {}
        for seat, cells in enumerate(racks):
            for cell, tile in zip(cells, tiles[7 * seat : 7 * seat + 7], strict=True):
                h.cells[cell] = tile

    deal()
    lost = h.cells.pop(racks[3][6])  # West's last tile is not on the table
    h.settle()
    said = ref.state.message.text if ref.state.message is not None else ""
    assert ref.state.phase == "dealing" and said.startswith("waiting for the deal"), said
    assert lost in said
    assert not any(t in said for t in h.cells.values())
    assert watch.checked > 0
    watch.off_table = None  # once the hand starts, a tile off the table is someone's
    deal()
    h.settle()
    assert ref.state.phase == "play" and ref.hand is not None
