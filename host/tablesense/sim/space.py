"""Space in the emulator: which reader's field reaches which tag.

Without it every emulated MFRC522 hears exactly the tags laid on its own
antenna, so a table whose cells sit too close together looks perfect in the
emulator and fails on the bench. :class:`Space` knows where each reader's
antenna is (its cell's position in the table geometry) and, through the
coupling model of :mod:`tablesense.table.antenna` (antenna size, tag size,
tag height, the tag's on-axis read range: the table file's ``[build]``),
which neighbours' tags each field reaches. A chip given the space
(``EmulatedMFRC522.space``) asks it which tags its field reaches; the firmware
then sees a cross-read exactly as on a real table: the neighbour's UID on
its own cell.

Two choices, documented in docs/build-guide.md ("Spacing"):

- Tags lie at their cell's centre (the world is kept by cell); the check
  (`hw check`) allows for a tile 5 mm off, so it refuses a layout before the
  emulator shows a cross-read.
- Two tags stacked on one antenna detune each other: their own reader still
  hears both (a collision, reported as a read error, never as empty), and
  the pair reaches no neighbour's reader.

The same model is what ``tablesense hw check`` uses to refuse antennas that
are too close, so the check and the emulator agree by construction.
"""

from __future__ import annotations

from collections.abc import Mapping

from tablesense.sim.mfrc522_emu import EmulatedCard, EmulatedMFRC522
from tablesense.table.antenna import FieldModel
from tablesense.table.geometry import CellId, TableGeometry


class Space:
    """The antennas of one table and which of their fields reach which cells."""

    def __init__(
        self,
        geometry: TableGeometry,
        chips: Mapping[CellId, EmulatedMFRC522],
        model: FieldModel | None = None,
    ) -> None:
        self.model = model or geometry.build.field_model()
        self.geometry = geometry
        self._cell_of: dict[int, CellId] = {id(chip): cell for cell, chip in chips.items()}
        self._chips = dict(chips)
        bound = self.model.max_reach_mm() + 1.0
        cells = [geometry.cells[c] for c in chips]
        #: reader's cell -> the neighbour cells whose tag (lying at the
        #: cell's centre) answers that reader
        self.coupled: dict[CellId, list[CellId]] = {}
        for r in cells:
            near = [
                n.id
                for n in cells
                if n.id != r.id
                and abs(n.x - r.x) <= bound
                and abs(n.y - r.y) <= bound
                and self.model.answers(n.x - r.x, n.y - r.y)
            ]
            if near:
                self.coupled[r.id] = near
        #: a cell -> the cells whose reader a tag there can answer: its own
        #: and every coupled reader's (what a change on the cell can alter)
        self.heard_at: dict[CellId, list[CellId]] = {c.id: [c.id] for c in cells}
        for reader, near in self.coupled.items():
            for n in near:
                self.heard_at[n].append(reader)
        #: a reader's cell -> the other readers whose field reaches a cell
        #: its own field reaches (a tag there hears both): two exchanges of
        #: theirs in flight at once garble each other (``EmulatedMFRC522``);
        #: readers not in it are independent, however they overlap
        self.interferes: dict[CellId, list[CellId]] = {}
        for c in cells:
            others = sorted({r for cell, readers in self.heard_at.items() if c.id in readers for r in readers} - {c.id})
            if others:
                self.interferes[c.id] = others
        self._interfering: dict[int, list[EmulatedMFRC522]] = {
            id(self._chips[c]): [self._chips[o] for o in others] for c, others in self.interferes.items()
        }
        for chip in chips.values():
            chip.space = self

    @classmethod
    def of_boards(cls, geometry: TableGeometry, chips_of_board: Mapping[int, list[EmulatedMFRC522]]) -> Space:
        """The space of a table whose boards hold their chips by channel
        (``VirtualBoard.chips``, ``Rp2040Board.chips``)."""
        chips = {
            c.id: chips_of_board[c.board][c.channel]
            for c in geometry.cells.values()
            if c.board in chips_of_board and c.channel < len(chips_of_board[c.board])
        }
        return cls(geometry, chips)

    def tags_for(self, chip: EmulatedMFRC522) -> list[EmulatedCard]:
        """The tags ``chip``'s field reaches: the ones on its own antenna and
        a lone tag on any coupled neighbour (a stacked pair is detuned)."""
        own: list[EmulatedCard] = chip.cards
        cell = self._cell_of.get(id(chip))
        near = self.coupled.get(cell) if cell is not None else None
        if not near:
            return own
        reached = list(own)
        for other in near:
            cards = self._chips[other].cards
            if len(cards) == 1:
                reached.append(cards[0])
        return reached

    def interfering(self, chip: EmulatedMFRC522) -> list[EmulatedMFRC522]:
        """The chips whose exchanges garble ``chip``'s when both are in
        flight at once (their fields reach a common cell)."""
        return self._interfering.get(id(chip), [])

    def cross_reads(self) -> list[tuple[CellId, CellId]]:
        """(reader's cell, neighbour cell) pairs where a tag on the neighbour
        answers the reader: empty for a layout ``hw check`` passes."""
        return sorted((r, n) for r, near in self.coupled.items() for n in near)
