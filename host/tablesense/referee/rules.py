"""Per-game knowledge of the referee: layouts, table moves, explanations.

The referee core (:mod:`tablesense.referee.core`) is the same for every game:
it waits for a stable table, asks the game's :class:`TableRules` which legal
moves the table shows (:meth:`TableRules.recognise`) and, when none fits,
what to tell the players (:meth:`TableRules.explain`). These classes only
*answer*: they never change the game state.

- Dominoes: the expected layout is the line of play (the opening tile on the
  centre cell, then each arm's tiles on that arm's cells, outward), each
  seat's hand on its rack, and the 2-seat boneyard on the boneyard cells.
  A play is the tile leaving the rack of the seat to play and lying on the
  next free cell of an arm; a draw is a tile going from the boneyard to the
  rack of the seat to play.
- Kems: the expected layout is each seat's four cards on its rack and the
  four face-up cards on the board slots, in slot order. A swap is one card
  leaving a rack for a slot and the slot's card arriving on that rack; a
  refresh is all four slots changing to the next stock cards with no rack
  involved. Kems is played simultaneously, so a swap is recognised on its own
  even while other seats still hold a card in the air.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tablesense.games.common import IllegalPlayError, say
from tablesense.games.game import Game
from tablesense.referee.layout import (
    CellId,
    Group,
    Layout,
    Misplaced,
    Place,
    Sensed,
    cells_of,
    free_cells,
)
from tablesense.referee.words import engine_sentence, seat_word
from tablesense.table.geometry import TableGeometry

#: How long a mismatch must last before it is shown, by kind of trouble.
DELAY_NOW = "now"
DELAY_PROBLEM = "problem"
DELAY_ERROR = "error"
DELAY_MISSING = "missing"

#: Rejections whose fix is not "move this piece there".
NO_FIX = frozenset(
    {"unknown_tag", "duplicate_tag", "cross_read", "read_error", "pass_with_playable", "must_draw"}
)


@dataclass(frozen=True)
class Rejection:
    """One explained problem: what is wrong and the single next step.

    ``kind`` is a stable name (docs/referee.md lists them all), ``instruction``
    the sentence the display shows, ``cells`` the cells lit red.
    """

    kind: str
    instruction: str
    cells: tuple[CellId, ...]
    delay: str = DELAY_ERROR
    seat: int | None = None
    piece: str | None = None
    detail: str | None = None
    """What only ``seat`` may read (its own hidden tiles named); the public
    instruction then stays general."""

    @property
    def fix(self) -> dict[str, Any] | None:
        """The correction as data, for hands that follow it (the demo's):
        move ``piece`` to cell ``to`` (None: off the table)."""
        if self.piece is None or not self.cells or self.kind in NO_FIX:
            return None
        to = None if self.kind == "not_in_play" else self.cells[-1]
        return {"piece": self.piece, "to": to}

    def to_json(self) -> dict[str, Any]:
        return {
            "reason": self.kind,
            "instruction": self.instruction,
            "cells": list(self.cells),
            "seat": self.seat,
            "piece": self.piece,
            "fix": self.fix,
        }


@dataclass(frozen=True)
class TableMove:
    """A legal move the table shows, with how long to wait before taking it:
    ``settle`` is ``"slide"`` when the piece could still be sliding on to a
    further cell, else ``"settle"``."""

    move: Any
    layout: Layout
    settle: str = "settle"
    note: str = ""


class TableRules:
    """Base of the per-game rules; see the module docstring."""

    game: str = ""

    def __init__(self, geometry: TableGeometry, seat_names: Sequence[str]) -> None:
        self.geometry = geometry
        self.seat_names = list(seat_names)
        self._racks = {
            s.index: Group(f"rack:{s.index}", say("{seat}'s rack", seat=self.seat_label(s.index)), tuple(s.rack))
            for s in geometry.seats
        }

    def set_table_dealt(self, on: bool) -> None:
        """``on``: each deal is read from the table, so the face-down pieces'
        order is learnt as they show (the host did not deal them)."""
        raise NotImplementedError

    def table_deal(self, sensed: Sensed, rng: random.Random) -> dict[str, Any] | None:
        """The deal the table shows (a journal ``hand`` entry's fields), or
        None while it shows none yet; ``rng`` orders pieces nobody sees."""
        raise NotImplementedError

    def target_of(self, move: Any) -> CellId | None:
        """The cell a move puts its piece on, when the game has one (a tile's
        place on the line)."""
        return None

    def _racks_shown(self, sensed: Sensed) -> list[list[str]]:
        return [[sensed.pieces[c] for c in seat.rack if c in sensed.pieces] for seat in self.geometry.seats]

    def seat_label(self, seat: int) -> str:
        if 0 <= seat < len(self.seat_names) and self.seat_names[seat]:
            return seat_word(self.seat_names[seat])
        return say("Seat {n}", n=seat + 1)

    def engine_text(self, message: object) -> str:
        """An engine's refusal with its 0-based seats named."""
        return engine_sentence(message, self.seat_label, lambda t: say("team {n}", n=t + 1))

    def rack(self, seat: int) -> Group:
        return self._racks[seat]

    def seat_of_rack_cell(self, cell: CellId) -> int | None:
        for seat, group in self._racks.items():
            if cell in group.cells:
                return seat
        return None

    # -- to be provided by each game --------------------------------------
    def layout(self) -> Layout:
        raise NotImplementedError

    def recognise(self, sensed: Sensed) -> list[TableMove]:
        raise NotImplementedError

    def explain(self, sensed: Sensed, layout: Layout) -> Rejection | None:
        """Why the sensed table is not ``layout``: problems with the tags
        themselves first (the same for every game), then the game's own
        reading of what is misplaced; None when they match."""
        found = self.explain_problems(sensed)
        if found is not None:
            return found
        diff = layout.diff(sensed)
        if not diff:
            return None
        return self.explain_misplaced(sensed, layout, diff)

    def explain_misplaced(
        self, sensed: Sensed, layout: Layout, diff: list[Misplaced]
    ) -> Rejection | None:
        raise NotImplementedError

    # -- shared explanations ------------------------------------------------
    def explain_problems(self, sensed: Sensed) -> Rejection | None:
        """Unknown tags, duplicated pieces and unreadable cells, first found first."""
        for problem in sensed.problems:
            if problem.kind == "unknown_tag":
                return Rejection(
                    "unknown_tag",
                    say(
                        "the tag on cell {cell} is not enrolled ({tag}): take it off the table",
                        cell=problem.cells[0], tag=problem.detail,
                    ),
                    problem.cells,
                    DELAY_PROBLEM,
                )
            if problem.kind == "cross_read":
                return Rejection(
                    "cross_read",
                    say(
                        "one tag ({tag}) is read on cells {cells}: a reader reaches its "
                        "neighbour's tag; the table needs repair (its antennas are too close: "
                        "tablesense hw check)",
                        tag=problem.detail, cells=", ".join(problem.cells),
                    ),
                    problem.cells,
                    DELAY_PROBLEM,
                )
            if problem.kind == "duplicate_tag":
                return Rejection(
                    "duplicate_tag",
                    say(
                        "{piece} is read on {n} cells ({cells}): a set has one {piece}; "
                        "take the extra one off the table",
                        piece=problem.detail, n=len(problem.cells), cells=", ".join(problem.cells),
                    ),
                    problem.cells,
                    DELAY_PROBLEM,
                    piece=problem.detail,
                )
            if problem.kind == "read_error":
                return Rejection(
                    "read_error",
                    say(
                        "cell {cell} cannot be read ({detail}): lift the piece "
                        "and lay it flat in the middle of the cell",
                        cell=problem.cells[0], detail=problem.detail,
                    ),
                    problem.cells,
                    DELAY_PROBLEM,
                )
            if problem.kind == "badge":
                return Rejection(
                    "badge_on_table",
                    say(
                        "a player badge ({badge}) lies on cell {cell}: "
                        "badges are for checking in; take it off the table",
                        badge=problem.detail, cell=problem.cells[0],
                    ),
                    problem.cells,
                    DELAY_PROBLEM,
                )
        for problem in sensed.problems:
            if problem.kind == "unscanned":
                return Rejection(
                    "board_starting",
                    say("a board has just restarted and is reading its cells again: please wait"),
                    (),
                    DELAY_MISSING,
                )
        return None

    def place_text(self, place: Place) -> str:
        if place.cell is not None:
            return say("cell {cell}", cell=place.cell)
        assert place.group is not None
        return place.group.label

    def generic(self, sensed: Sensed, item: Misplaced, kind: str | None = None) -> Rejection:
        """The plain instruction for one misplaced piece."""
        p = item.piece
        if item.at is None:
            assert item.want is not None
            where = self.place_text(item.want)
            return Rejection(
                kind or "missing",
                say("put {piece} back on {where}", piece=p, where=where),
                tuple(cells_of([item.want], sensed)),
                DELAY_MISSING,
                piece=p,
            )
        if item.want is None:
            return Rejection(
                kind or "not_in_play",
                say("take {piece} off cell {cell}: it is not in play", piece=p, cell=item.at),
                (item.at,),
                DELAY_ERROR,
                piece=p,
            )
        where = self.place_text(item.want)
        text = (
            say("put {piece} from cell {cell} back on {where}", piece=p, cell=item.at, where=where)
            if item.want.group is not None
            else say("move {piece} from cell {cell} to {where}", piece=p, cell=item.at, where=where)
        )
        return Rejection(
            kind or "misplaced",
            text,
            (item.at, *cells_of([item.want], sensed)),
            DELAY_ERROR,
            piece=p,
        )


# --------------------------------------------------------------------------- dominoes


class DominoRules(TableRules):
    """Dominoes on a table with a line track, racks and (2 seats) a boneyard."""

    game = "dominoes"

    def __init__(self, geometry: TableGeometry, seat_names: Sequence[str], match: Any) -> None:
        super().__init__(geometry, seat_names)
        if geometry.line is None:
            raise ValueError(say("table {table!r} has no line of play: it cannot host dominoes", table=geometry.name))
        self.match = match
        self.line = geometry.line
        self._boneyard = Group("boneyard", say("the boneyard"), tuple(geometry.boneyard))
        self.free_draw = False
        """Table-dealt games: a draw may take any boneyard tile (face down), so
        the engine's boneyard order is fitted to what the players draw."""

    @property
    def hand(self) -> Any:
        return self.match.current

    def set_table_dealt(self, on: bool) -> None:
        self.free_draw = on

    def target_of(self, move: Any) -> CellId | None:
        return self.target_cell(self.end_of(move))

    def table_deal(self, sensed: Sensed, rng: random.Random) -> dict[str, Any] | None:
        racks = self._racks_shown(sensed)
        if any(c in sensed.pieces for c in self.line.cells) or not all(racks):
            return None
        bone = [sensed.pieces[c] for c in self.geometry.boneyard if c in sensed.pieces]
        return {"deal": racks, "boneyard": bone}

    def arm_cells(self, end: str) -> list[CellId]:
        """The cells a play on ``end`` uses, in order: the arm's own cells,
        then, when a long arm runs out of track, the far end of the other arm
        inward (the other arm grows from the centre outward, so the two meet
        only when the track has no cell left at all)."""
        return self.line.track(end)

    def target_cell(self, end: str | None, hand: Any = None) -> CellId | None:
        """The next free cell for a play on ``end`` (the centre for the opening)."""
        hand = hand if hand is not None else self.hand
        if not hand.line:
            return self.line.center
        if end is None:
            return None
        cells = self.arm_cells(end)
        k = len(hand.arm(end))
        return cells[k] if k < len(cells) else None

    def layout(self, hand: Any = None) -> Layout:
        hand = hand if hand is not None else self.hand
        lay = Layout()
        for cell in self.line.cells:
            lay.exact[cell] = None
        if hand is None:
            return lay
        if hand.line:
            lay.exact[self.line.center] = str(hand.line[0].tile)
            for end in ("left", "right"):
                cells = self.arm_cells(end)
                for k, lp in enumerate(hand.arm(end)):
                    if k < len(cells):
                        lay.exact[cells[k]] = str(lp.tile)
        for seat in range(len(hand.hands)):
            group = self.rack(seat)
            lay.groups[group.key] = (group, frozenset(str(t) for t in hand.hands[seat]))
        if self._boneyard.cells:
            lay.groups["boneyard"] = (self._boneyard, frozenset(str(t) for t in hand.boneyard))
        return lay

    def end_of(self, move: Any, hand: Any = None) -> str | None:
        """The arm a play goes to: its ``end``, or the one end its tile fits."""
        if move.end is not None:
            return move.end
        hand = hand if hand is not None else self.hand
        if not hand.line:
            return None
        if move.tile.has(hand.left_end):
            return "left"
        return "right"

    def _moved(self, hand: Any, base: Layout, move: Any) -> tuple[Layout, str] | None:
        """The layout after a table-visible ``move`` (play or draw), and how
        long it must settle; None for a move the table cannot show."""
        name = type(move).__name__
        if name == "Play":
            end = self.end_of(move, hand)
            cell = self.target_cell(end, hand)
            if cell is None:
                return None
            cells = self.arm_cells(end) if end is not None else []
            beyond = end is not None and cells.index(cell) + 1 < len(cells)
            return base.move(str(move.tile), to_cell=cell), "slide" if beyond else "settle"
        if name == "Draw":
            return base.move(str(move.tile), to_group=f"rack:{move.seat}"), "settle"
        return None

    def recognise(self, sensed: Sensed) -> list[TableMove]:
        """The legal move the table shows; or two moves in a row when the next
        seat played before the first move had settled (a fast table)."""
        hand = self.hand
        if hand is None or hand.is_over:
            return []
        base = self.layout()
        firsts: list[tuple[Any, Layout, str]] = []
        for seat, move in self._candidate_moves(hand):
            moved = self._moved(hand, base, move)
            if moved is None:
                continue
            lay, settle = moved
            if lay.matches(sensed):
                return [TableMove(move, lay, settle)]
            firsts.append((move, lay, settle))
            if type(move).__name__ == "Draw" and self.free_draw:
                for tile in hand.boneyard:
                    lay = base.move(str(tile), to_group=f"rack:{seat}")
                    if lay.matches(sensed):
                        return [TableMove(type(move)(seat, tile), lay, note="free-draw")]
        if sensed.problems or len(base.diff(sensed)) < 2:
            return []
        for move, lay, settle in firsts:
            after = hand.clone()
            after.apply(move)
            for second in after.legal_moves():
                moved = self._moved(after, lay, second)
                if moved is not None and moved[0].matches(sensed):
                    return [TableMove(move, lay, settle), TableMove(second, moved[0], moved[1])]
        return []

    @staticmethod
    def _candidate_moves(hand: Any) -> list[tuple[int, Any]]:
        """(seat, move) for every seat that may move now: the seat to play,
        and before the opening play every seat that may open (after a blocked
        ``brazilian-points`` hand either partner of the winning pair)."""
        seats = [hand.to_play]
        if not hand.line:
            seats += [s for s in hand.openers if s != hand.to_play]
        return [(seat, move) for seat in seats for move in hand.legal_moves(seat)]

    def _may_move_now(self, seat: int) -> bool:
        hand = self.hand
        return seat == hand.to_play or (not hand.line and seat in hand.openers)

    def explain_misplaced(
        self, sensed: Sensed, layout: Layout, diff: list[Misplaced]
    ) -> Rejection | None:
        hand = self.hand
        line_cells = set(self.line.cells)
        # 1. A piece that should not be on the line lies there.
        for item in diff:
            if item.at is None or item.at not in line_cells:
                continue
            want = item.want
            if want is not None and want.cell is not None:
                # a line tile moved along the line
                return Rejection(
                    "taken_back",
                    say(
                        "{piece} was moved on the line: put it back on cell {cell}",
                        piece=item.piece, cell=want.cell,
                    ),
                    (item.at, want.cell),
                    piece=item.piece,
                )
            if want is None or want.group is None or hand is None:
                return self.generic(sensed, item)
            owner = self._owner(want.group)
            if owner is None:  # from the boneyard straight to the line
                return Rejection(
                    "wrong_cell",
                    say(
                        "{piece} comes from the boneyard: draw it onto your rack before "
                        "playing it; put it back in the boneyard",
                        piece=item.piece,
                    ),
                    (item.at, *free_cells(self._boneyard, sensed)[:1]),
                    piece=item.piece,
                )
            back = say("put {piece} back on {where}", piece=item.piece, where=want.group.label)
            cells_back = (item.at, *free_cells(want.group, sensed)[:1])
            if hand.is_over:
                return Rejection(
                    "hand_over",
                    say("the hand is over: {back}", back=back),
                    cells_back,
                    seat=owner,
                    piece=item.piece,
                )
            if not self._may_move_now(owner):
                return Rejection(
                    "out_of_turn",
                    say(
                        "it is {turn}'s turn, not {seat}'s: {back}",
                        turn=self.seat_label(hand.to_play), seat=self.seat_label(owner), back=back,
                    ),
                    cells_back,
                    seat=owner,
                    piece=item.piece,
                )
            fits = self._fitting_ends(owner, item.piece)
            if not fits:
                reason = self._why_not(owner, item.piece)
                return Rejection(
                    "does_not_fit",
                    say("{reason}: {back}", reason=reason, back=back),
                    cells_back,
                    seat=owner,
                    piece=item.piece,
                )
            # it fits somewhere: it lies on the wrong cell
            arm_here = self._arm_of(item.at)
            end = arm_here if arm_here in fits else fits[0]
            target = self.target_cell(end) if hand.line else self.line.center
            if target is None:
                return Rejection(
                    "line_full",
                    (
                        say("the left arm of the line has no free cell left on this table: {back}", back=back)
                        if end == "left"
                        else say("the right arm of the line has no free cell left on this table: {back}", back=back)
                    ),
                    cells_back,
                    seat=owner,
                    piece=item.piece,
                )
            if target == item.at:
                break  # the play itself is right: something else is wrong
            if target == self.line.center:
                text = say("move {piece} from cell {cell} to the centre cell", piece=item.piece, cell=item.at)
            elif end == "left":
                text = say(
                    "move {piece} from cell {cell} to cell {target} (the next cell of the left arm)",
                    piece=item.piece, cell=item.at, target=target,
                )
            else:
                text = say(
                    "move {piece} from cell {cell} to cell {target} (the next cell of the right arm)",
                    piece=item.piece, cell=item.at, target=target,
                )
            return Rejection(
                "wrong_cell",
                text,
                (item.at, target),
                seat=owner,
                piece=item.piece,
            )
        # 2. A tile of the line is gone (taken back to a rack, or lifted).
        for item in diff:
            if (
                item.want is not None
                and item.want.cell is not None
                and item.want.cell in line_cells
            ):
                where = item.want.cell
                return Rejection(
                    "taken_back",
                    say(
                        "{piece} was taken back from the line: put it back on cell {cell}",
                        piece=item.piece, cell=where,
                    ),
                    tuple(c for c in (item.at, where) if c is not None),
                    piece=item.piece,
                )
        # 3. Boneyard tiles on a rack: a draw out of turn or not allowed now.
        for item in diff:
            if (
                item.at is not None
                and item.want is not None
                and item.want.group is not None
                and item.want.group.key == "boneyard"
                and hand is not None
            ):
                seat = self.seat_of_rack_cell(item.at)
                if seat is None:
                    break
                reason = self._why_no_draw(seat, item.piece)
                return Rejection(
                    "draw_not_allowed",
                    say("{reason}: put {piece} back in the boneyard", reason=reason, piece=item.piece),
                    (item.at, *free_cells(self._boneyard, sensed)[:1]),
                    seat=seat,
                    piece=item.piece,
                )
        # 4. Anything else, one piece at a time: wrong places before missing pieces.
        return self.generic(sensed, diff[0])

    # -- helpers -------------------------------------------------------------
    def _owner(self, group: Group) -> int | None:
        if group.key.startswith("rack:"):
            return int(group.key.split(":", 1)[1])
        return None

    def _arm_of(self, cell: CellId) -> str | None:
        hand = self.hand
        for end in ("left", "right"):
            k = len(hand.arm(end)) if hand is not None else 0
            if cell in self.arm_cells(end)[: k + 1]:
                return end
        if cell in self.line.left:
            return "left"
        if cell in self.line.right:
            return "right"
        return None

    def _fitting_ends(self, seat: int, piece: str) -> list[str]:
        hand = self.hand
        ends: list[str] = []
        for m in hand.legal_moves(seat):
            if type(m).__name__ == "Play" and str(m.tile) == piece:
                end = self.end_of(m)
                ends.append(end if end is not None else "center")
        return ends

    def _tile(self, piece: str) -> Any:
        from tablesense.games.dominoes import Tile

        return Tile.parse(piece)

    def _why_not(self, seat: int, piece: str) -> str:
        from tablesense.games.dominoes import Play

        hand = self.hand
        tile = self._tile(piece)
        ends: list[Any] = [None] if not hand.line else ["left", "right"]
        for end in ends:
            try:
                hand.check(Play(seat, tile, end))
            except IllegalPlayError as exc:
                return self.engine_text(exc)
        return say("{piece} cannot be played now", piece=piece)

    def _why_no_draw(self, seat: int, piece: str) -> str:
        from tablesense.games.dominoes import Draw

        hand = self.hand
        try:
            hand.check(Draw(seat, self._tile(piece)))
        except IllegalPlayError as exc:
            return self.engine_text(exc)
        if seat != hand.to_play:
            return say("it is {turn}'s turn", turn=self.seat_label(hand.to_play))
        return say("{piece} is not the tile to draw now", piece=piece)


# --------------------------------------------------------------------------- kems


class KemsRules(TableRules):
    """Kems on a table with four board slots and a rack per seat."""

    game = "kems"

    def __init__(self, geometry: TableGeometry, seat_names: Sequence[str], match: Any) -> None:
        super().__init__(geometry, seat_names)
        if len(geometry.kems_slots) != 4:
            raise ValueError(say("table {table!r} needs four Kems board slots, it has {n}", table=geometry.name,
                                 n=len(geometry.kems_slots)))
        self.match = match
        self.slots = list(geometry.kems_slots)
        self.free_stock = False
        """Table-dealt games: the stock is face down, so a refresh may show any
        cards not seen yet; the engine's stock order is fitted to them."""

    @property
    def round(self) -> Any:
        return self.match.current

    def set_table_dealt(self, on: bool) -> None:
        self.free_stock = on

    def table_deal(self, sensed: Sensed, rng: random.Random) -> dict[str, Any] | None:
        racks = self._racks_shown(sensed)
        slots = [sensed.pieces.get(c) for c in self.slots]
        if any(len(r) != 4 for r in racks) or None in slots:
            return None
        from tablesense.games.kems import deck

        used = {p for r in racks for p in r} | {p for p in slots if p}
        stock = [str(c) for c in deck(self.match.options.deck) if str(c) not in used]
        rng.shuffle(stock)
        return {"deal": racks, "board": slots, "stock": stock}

    def layout(self) -> Layout:
        rnd = self.round
        lay = Layout()
        for cell in self.slots:
            lay.exact[cell] = None
        if rnd is None:
            return lay
        for i, card in enumerate(rnd.board):
            lay.exact[self.slots[i]] = str(card)
        for seat in range(rnd.seats):
            group = self.rack(seat)
            lay.groups[group.key] = (group, frozenset(str(c) for c in rnd.hands[seat]))
        return lay

    def slot_label(self, i: int) -> str:
        return say("board slot {n} ({cell})", n=i + 1, cell=self.slots[i])

    def recognise(self, sensed: Sensed) -> list[TableMove]:
        from tablesense.games.kems import Card, Refresh, Swap

        rnd = self.round
        if rnd is None or rnd.is_over or sensed.problems:
            return []
        base = self.layout()
        # A refresh: every slot shows a new card, the racks are untouched.
        new = [sensed.pieces.get(c) for c in self.slots]
        old = [str(c) for c in rnd.board]
        racks_same = all(
            {sensed.pieces[c] for c in self.rack(s).cells if c in sensed.pieces}
            == set(base.pieces_in(f"rack:{s}"))
            for s in range(rnd.seats)
        )
        if racks_same and all(n is not None and n not in old for n in new):
            coming = (
                [str(c) for c in rnd.stock[:4]]
                if rnd.options.refresh == "bottom" or len(rnd.stock) >= 4
                else []
            )
            lay = base.copy()
            for i, cell in enumerate(self.slots):
                lay.exact[cell] = new[i]
            if new == coming and lay.matches(sensed):
                return [TableMove(Refresh(), lay)]
            in_stock = {str(c) for c in rnd.stock}
            if self.free_stock and all(n in in_stock for n in new if n) and lay.matches(sensed):
                return [
                    TableMove(Refresh(), lay, note="free-stock:" + ",".join(n or "" for n in new))
                ]
        # Swaps, each recognised on its own (others may still be in the air).
        out: list[TableMove] = []
        lay = base
        for i, cell in enumerate(self.slots):
            give = sensed.pieces.get(cell)
            take = old[i]
            if give is None or give == take:
                continue
            for seat in range(rnd.seats):
                want = set(base.pieces_in(f"rack:{seat}"))
                if give not in want:
                    continue
                got = {sensed.pieces[c] for c in self.rack(seat).cells if c in sensed.pieces}
                if got == (want - {give}) | {take}:
                    move = Swap(seat, Card.parse(give), Card.parse(take))
                    if rnd.is_legal(move):
                        lay = lay.move(give, to_cell=cell).move(take, to_group=f"rack:{seat}")
                        lay.exact[cell] = give
                        out.append(TableMove(move, lay))
                break
        return out

    def explain_misplaced(
        self, sensed: Sensed, layout: Layout, diff: list[Misplaced]
    ) -> Rejection | None:
        rnd = self.round
        slot_index = {c: i for i, c in enumerate(self.slots)}
        # 1. A rack with a fifth card.
        if rnd is not None:
            for seat in range(rnd.seats):
                rack = self.rack(seat)
                held = [c for c in rack.cells if c in sensed.pieces]
                if len(held) <= 4:
                    continue
                # a board card on the rack's free cell while its slot is empty
                # is a swap half-way, in the order the page teaches (take the
                # board card, then lay one of yours on its slot): not an error
                extras = [
                    it
                    for it in diff
                    if it.at in rack.cells and it.want is not None and it.want.cell in slot_index
                    and it.want.cell in sensed.pieces
                ]
                item = extras[0] if extras else None
                if item is not None and item.want is not None:
                    dest = self.place_text(item.want)
                    if item.want.cell is not None and item.want.cell in slot_index:
                        dest = self.slot_label(slot_index[item.want.cell])
                    return Rejection(
                        "fifth_card",
                        say(
                            "{seat} holds five cards: put {piece} back on {where}",
                            seat=self.seat_label(seat), piece=item.piece, where=dest,
                        ),
                        (item.at or "", *cells_of([item.want], sensed)),
                        DELAY_ERROR,
                        seat=seat,
                        piece=item.piece,
                    )
        # 2. A card gone straight from one rack to another.
        for item in diff:
            if item.at is None or item.want is None or item.want.group is None:
                continue
            to_seat = self.seat_of_rack_cell(item.at)
            if to_seat is None or not item.want.group.key.startswith("rack:"):
                continue
            from_seat = int(item.want.group.key.split(":", 1)[1])
            if rnd is not None and to_seat == rnd.partner_of(from_seat):
                return Rejection(
                    "partner_swap",
                    say(
                        "{seat} and {partner} are partners: cards go through the board, "
                        "never hand to hand; put {piece} back on {where}",
                        seat=self.seat_label(from_seat), partner=self.seat_label(to_seat),
                        piece=item.piece, where=item.want.group.label,
                    ),
                    (item.at, *free_cells(item.want.group, sensed)[:1]),
                    seat=from_seat,
                    piece=item.piece,
                )
            return Rejection(
                "misplaced",
                say(
                    "cards go through the board: put {piece} back on {where}",
                    piece=item.piece, where=item.want.group.label,
                ),
                (item.at, *free_cells(item.want.group, sensed)[:1]),
                seat=from_seat,
                piece=item.piece,
            )
        # 3. A board card on a rack while no card of that rack went to its slot
        #    (a take before the give) is only an error once it lasts.
        for item in diff:
            if item.want is not None and item.want.cell in slot_index and item.at is not None:
                seat = self.seat_of_rack_cell(item.at)
                i = slot_index[item.want.cell]
                if seat is not None:
                    return Rejection(
                        "take_before_give",
                        say(
                            "{seat}: to finish the swap, lay one of your cards on {slot} "
                            "(or put {piece} back there)",
                            seat=self.seat_label(seat), piece=item.piece, slot=self.slot_label(i),
                        ),
                        (item.at, item.want.cell),
                        DELAY_MISSING,
                        seat=seat,
                        piece=item.piece,
                    )
        # 4. The rest, one piece at a time.
        item = diff[0]
        if item.at is None and item.want is not None and item.want.cell in slot_index:
            i = slot_index[item.want.cell]
            return Rejection(
                "missing",
                say("put {piece} back on {where}", piece=item.piece, where=self.slot_label(i)),
                (item.want.cell,),
                DELAY_MISSING,
                piece=item.piece,
            )
        if item.want is None and item.at is not None:
            return Rejection(
                "not_in_play",
                say(
                    "take {piece} off cell {cell}: it is not in play (it belongs to the stock)",
                    piece=item.piece, cell=item.at,
                ),
                (item.at,),
                DELAY_ERROR,
                piece=item.piece,
            )
        return self.generic(sensed, item)


#: How each game's pieces lie on a table, by the game's name.
_RULES: dict[str, Callable[[TableGeometry, Sequence[str], Any], TableRules]] = {cls.game: cls for cls in (DominoRules, KemsRules)}


def rules_for(game: Game) -> Callable[[TableGeometry, Sequence[str], Any], TableRules]:
    """The table rules of ``game`` (a game the table cannot read yet is a
    :class:`ValueError` that says so)."""
    try:
        return _RULES[game.name]
    except KeyError:
        raise ValueError(say("the referee cannot read {game} on a table yet", game=game.name)) from None
