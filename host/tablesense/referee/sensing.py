"""From a table snapshot to the referee's terms: which piece lies on which
cell, and what cannot be judged (unknown tags, read errors, a piece read
twice, offline boards).

A pure translation through the tag registry, apart from the referee so that
tests and tools can check what the referee will see.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tablesense.referee.layout import Problem, Sensed
from tablesense.table.tags import Piece, TagRegistry, UnknownTag


def sense(
    state: Mapping[str, Any], registry: TagRegistry, cells: Iterable[str] | None = None
) -> Sensed:
    """Translate a table snapshot through the tag registry.

    ``state`` maps cell ids to readings (:mod:`tablesense.table.state`); it may
    carry ``boards_online``. Unknown tags, a piece read on two cells, read
    errors and cells not scanned yet become :class:`Problem` values; offline
    boards pause the referee. One *tag* (one UID) read on two cells is not a
    player's doing: a tag lies on one cell, so a reader reaches its
    neighbour's tag (antennas too close, docs/build-guide.md): a
    ``cross_read`` problem naming both cells, instead of a duplicated piece.
    """
    from tablesense.table.state import Empty, Offline, ReadError, Tag

    wanted = list(cells) if cells is not None else list(state)
    pieces: dict[str, str] = {}
    problems: list[Problem] = []
    seen: dict[str, list[str]] = {}
    uid_cells: dict[bytes, list[str]] = {}
    for cell in sorted(wanted):
        reading = state.get(cell)
        if isinstance(reading, Tag):
            uid_cells.setdefault(reading.uid, []).append(cell)
    crossed = {uid: where for uid, where in uid_cells.items() if len(where) > 1}
    for uid, where in sorted(crossed.items(), key=lambda kv: kv[1]):
        problems.append(Problem("cross_read", tuple(where), uid.hex()))
    for cell in sorted(wanted):
        reading = state.get(cell)
        if reading is None or isinstance(reading, Empty):
            continue
        if isinstance(reading, Tag):
            if reading.uid in crossed:
                continue  # a hardware fault, reported above
            found = registry.piece(reading.uid)
            if isinstance(found, UnknownTag):
                problems.append(Problem("unknown_tag", (cell,), reading.uid.hex()))
                continue
            assert isinstance(found, Piece)
            if found.kind == "badge":
                problems.append(Problem("badge", (cell,), found.text))
                continue
            seen.setdefault(found.text, []).append(cell)
            pieces[cell] = found.text
        elif isinstance(reading, ReadError):
            from tablesense.table.state import ERROR_NAMES

            problems.append(
                Problem("read_error", (cell,), ERROR_NAMES.get(reading.code, str(reading.code)))
            )
        elif isinstance(reading, Offline):
            continue  # reported through boards_online
        else:  # Unscanned: the board has just come back; not judged yet
            problems.append(Problem("unscanned", (cell,), str(reading)))
    for piece, where in sorted(seen.items()):
        if len(where) > 1:
            problems.append(Problem("duplicate_tag", tuple(where), piece))
    online: Mapping[int, bool] = getattr(state, "boards_online", {}) or {}
    offline = tuple(sorted(b for b, up in online.items() if not up))
    return Sensed(pieces=pieces, problems=problems, boards_offline=offline)


# --------------------------------------------------------------------------- referee
