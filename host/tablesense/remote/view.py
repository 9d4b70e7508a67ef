"""What a table may receive of a remote match: the view filter.

:func:`frame_for` turns one of the authority's full-information facts
(:mod:`.authority`) into the frame a table receives, given the seats that
sit at that table. It is the one place where hidden information is decided
(docs/remote.md, "Who may hold what"):

- a deal carries the table's own seats' hands and only *counts* of the
  others and of the boneyard or stock;
- a move is public (a played tile, a Kems swap, a refresh's new board, a
  call), except a draw: its tile goes only to the table of the seat that
  drew (which lights it in the stock for that seat);
- a remote seat's play carries ``place``: the one piece the table must move
  from its stock, and where to (the table lights both);
- a finished hand carries its record: once scored, a hand is public (the
  record is the same at every table and at the director).

:class:`TableView` is the other end: the state a table rebuilds from its
frames alone (its racks, the line or the Kems board, the counts, the piece
to place), which the table client lights and judges by.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tablesense.games.registry import find_game
from tablesense.remote.authority import Fact

#: A frame for one table (a JSON object with ``kind``).
Frame = dict[str, Any]


def frame_for(fact: Fact, seats: frozenset[int]) -> Frame:
    """The frame of ``fact`` for a table whose local seats are ``seats``."""
    kind = fact["kind"]
    base: Frame = {"kind": kind, "no": fact["no"]}
    if kind == "deal":
        deal: list[list[str]] = fact["deal"]
        base |= {
            "game": fact["game"], "hand": fact["hand"],
            "hands": {str(s): list(deal[s]) for s in sorted(seats)},
            "counts": [len(h) for h in deal],
        }
        if find_game(fact["game"]).has_turns:  # whose turn, who may open; else the Kems board
            base |= {"boneyard": len(fact["boneyard"]), "to_play": fact["to_play"],
                     "openers": list(fact["openers"])}
        else:
            base |= {"board": list(fact["board"]), "stock": len(fact["stock"])}
        return base
    if kind == "move":
        move: dict[str, Any] = dict(fact["move"])
        seat = move.get("seat")
        local = seat in seats
        base["hand"] = fact["hand"]
        if "draw" in move:
            if local:
                base["place"] = {"piece": move["draw"], "to": "rack", "seat": seat}
            else:
                move["draw"] = True  # a remote seat's draw: which tile stays unknown here
        elif "tile" in move and not local:
            base["place"] = {"piece": move["tile"], "to": "line", "end": move.get("end")}
        elif "swap" in move and not local:
            give = move["swap"]["give"]
            base["place"] = {"piece": give, "to": "slot", "slot": fact["board"].index(give),
                             "take": move["swap"]["take"], "seat": seat}
        elif move.get("refresh") is True:
            base["place"] = {"to": "board", "pieces": list(fact["board"])}
        base["move"] = move
        for key in ("to_play", "board", "stock"):
            if key in fact:
                base[key] = fact[key]
        return base
    if kind in ("hand_end", "match_end"):
        return {**base, **{k: v for k, v in fact.items() if k not in base}}
    if kind in ("pause", "resume"):
        return {**base, "tables": list(fact["tables"])}
    raise ValueError(f"no view of a {kind!r} fact")


def frames_for(facts: Iterable[Fact], seats: frozenset[int]) -> list[Frame]:
    """Every frame of ``facts`` for one table: what it had, to resume exactly."""
    return [frame_for(f, seats) for f in facts]


@dataclass
class TableView:
    """A table's knowledge of the match, rebuilt from its frames only."""

    seats: frozenset[int]
    game: str = ""
    hand: int = 0
    hands: dict[int, list[str]] = field(default_factory=dict)
    counts: list[int] = field(default_factory=list)
    line: list[tuple[str, str | None]] = field(default_factory=list)
    boneyard: int = 0
    to_play: int | None = None
    openers: list[int] = field(default_factory=list)
    board: list[str] = field(default_factory=list)
    stock: int = 0
    place: dict[str, Any] | None = None
    """The remote piece this table must move from its stock now, and where."""
    last_move: dict[str, Any] | None = None
    """The hand's last move as this table received it (a Kems ``kems`` call
    waits for the partner's double or decline)."""
    records: list[dict[str, Any]] = field(default_factory=list)
    score: list[float] = field(default_factory=list)
    record: dict[str, Any] | None = None
    paused: list[str] = field(default_factory=list)
    last: int = -1
    """Number of the last frame applied (frames come in order, none twice)."""

    def apply(self, frame: Frame) -> None:
        """Take one frame in; raises ValueError for one out of order."""
        if frame["no"] != self.last + 1:
            raise ValueError(f"frame {frame['no']} after {self.last}: out of order")
        self.last = frame["no"]
        kind = frame["kind"]
        if kind == "deal":
            self.game, self.hand = frame["game"], frame["hand"]
            self.hands = {int(s): list(h) for s, h in frame["hands"].items()}
            self.counts = list(frame["counts"])
            self.line, self.place, self.last_move = [], None, None
            self.boneyard = frame.get("boneyard", 0)
            self.to_play = frame.get("to_play")
            self.openers = list(frame.get("openers", []))
            self.board = list(frame.get("board", []))
            self.stock = frame.get("stock", 0)
        elif kind == "move":
            self._move(frame)
        elif kind == "hand_end":
            self.records.append(frame["record"])
            self.score = list(frame["score"])
            self.place = None
        elif kind == "match_end":
            self.record = frame["record"]
        elif kind in ("pause", "resume"):
            self.paused = list(frame["tables"])

    def _move(self, frame: Frame) -> None:
        move = frame["move"]
        seat = move.get("seat")
        self.place = frame.get("place")
        self.last_move = dict(move)
        if find_game(self.game).has_turns:
            self.to_play = frame["to_play"]
            if "tile" in move:
                self.line.append((_tile_text(move["tile"]), move.get("end")))
                self.counts[seat] -= 1
                if seat in self.hands:
                    self.hands[seat].remove(_tile_text(move["tile"]))
            elif "draw" in move:
                self.counts[seat] += 1
                self.boneyard -= 1
                if seat in self.hands:
                    self.hands[seat].append(move["draw"])
            return
        self.board, self.stock = list(frame["board"]), frame["stock"]
        if "swap" in move and seat in self.hands:
            hand = self.hands[seat]
            hand[hand.index(move["swap"]["give"])] = move["swap"]["take"]


def _tile_text(text: str) -> str:
    """A played tile as the line shows it (a play's ``first`` pip order is kept
    in the record, but a tile is one piece whichever way it lies)."""
    a, b = text.split("-")
    return f"{min(a, b)}-{max(a, b)}"
