"""The table link: every board of a table, merged into one live TableState.

:class:`TableLink` runs one :class:`~tablesense.link.board_conn.BoardConnection`
per port (given, or found by USB id), checks each board's identity against the
table geometry (board id, cell count, config hash, firmware version), merges
their readings into a :class:`~tablesense.table.state.TableState`, tells
subscribers about every state change and every board going online/offline,
and splits whole-table LED pictures into per-board frames.

Nothing a board does raises into the caller: a failing board goes offline
(its cells read ``Offline``), subscribers get a :class:`BoardStatus`, and the
connection comes back by itself. Subscriber callbacks run on one dispatcher
thread, in order; a callback that raises is logged and the link goes on.

Example::

    link = TableLink(TableGeometry.load("dominoes-4"), ports=["/dev/pts/5", "/dev/pts/6"])
    link.subscribe(lambda st: print(st.tags()), lambda s: print(s.message))
    with link:
        link.wait_until(lambda st: st.complete, timeout=5)
        link.set_leds({"center": (0, 40, 0)})
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from tablesense.link import discovery
from tablesense.link.board_conn import (
    RGB,
    BoardConnection,
    BoardIdentity,
    BoardStatus,
    ConnState,
    LinkOptions,
)
from tablesense.link.merger import Merger
from tablesense.link.serial_link import FrameLink
from tablesense.table.geometry import CellId, TableGeometry
from tablesense.table.state import Reading, TableState

log = logging.getLogger(__name__)

StateCallback = Callable[[TableState], None]
StatusCallback = Callable[[BoardStatus], None]


class TableLink:
    """All boards of one table; see the module docstring.

    ``ports``: device paths or pyserial URLs, one per board, in any order (a
    board says its id in every frame). None: find boards by USB id 2E8A:0005
    and keep looking for new ones every ``rescan_interval`` seconds.
    """

    def __init__(
        self,
        geometry: TableGeometry,
        ports: Sequence[str] | None = None,
        *,
        options: LinkOptions | None = None,
        link_factory: Callable[[str], FrameLink] | None = None,
        clock: Callable[[], float] = time.monotonic,
        rescan_interval: float = 2.0,
    ) -> None:
        self.geometry = geometry
        self.options = options or LinkOptions()
        self._ports = list(ports) if ports is not None else None
        self._link_factory = link_factory
        self._clock = clock
        self._rescan_interval = rescan_interval
        self.merger = Merger(geometry, clock)
        self._lock = threading.RLock()
        self._conns: list[BoardConnection] = []
        self._owner: dict[int, BoardConnection] = {}
        self._led_frames: dict[int, list[RGB]] = {}
        self._hot: dict[int, list[int]] = {}  # board -> its hot channels (set_hot_cells)
        self._subs: list[tuple[StateCallback | None, StatusCallback | None]] = []
        self._direct: list[tuple[StateCallback | None, StatusCallback | None]] = []
        # Held from a merge to the delivery of its state to direct subscribers, so
        # those see the states in order even though several boards' threads merge.
        self._emit_lock = threading.RLock()
        self._queue: queue.SimpleQueue[tuple[str, object] | None] = queue.SimpleQueue()
        self._dispatcher: threading.Thread | None = None
        self._scanner: threading.Thread | None = None
        self._stop = threading.Event()
        self._changed = threading.Condition()
        self._statuses: dict[str, BoardStatus] = {}
        self._started = False

    # --- lifecycle -------------------------------------------------------------

    def start(self) -> None:
        """Start connecting (returns at once; watch :meth:`state` or subscribe)."""
        if self._started:
            return
        self._started = True
        self._stop.clear()
        self._dispatcher = threading.Thread(
            target=self._dispatch, name="table-link dispatch", daemon=True
        )
        self._dispatcher.start()
        if self._ports is not None:
            for port in self._ports:
                self._add_connection(port)
        else:
            self._scanner = threading.Thread(
                target=self._scan_loop, name="table-link discovery", daemon=True
            )
            self._scanner.start()

    def stop(self) -> None:
        """Close every port and stop every thread; idempotent."""
        if not self._started:
            return
        self._started = False
        self._stop.set()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            c.stop()
        if self._scanner is not None:
            self._scanner.join(2.0)
            self._scanner = None
        self._queue.put(None)
        if self._dispatcher is not None:
            self._dispatcher.join(2.0)
            self._dispatcher = None
        with self._lock:
            self._conns.clear()
            self._owner.clear()

    def __enter__(self) -> TableLink:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- queries ---------------------------------------------------------------

    def state(self) -> TableState:
        """The latest merged table state."""
        return self.merger.state

    def board_statuses(self) -> list[BoardStatus]:
        """One status per port (connected or not)."""
        with self._lock:
            return [c.status for c in self._conns]

    @property
    def connections(self) -> list[BoardConnection]:
        with self._lock:
            return list(self._conns)

    def connection(self, board: int) -> BoardConnection | None:
        """The connection that owns this board id, if any."""
        with self._lock:
            return self._owner.get(board)

    def wait_until(
        self, predicate: Callable[[TableState], bool], timeout: float
    ) -> TableState | None:
        """Block until the state satisfies ``predicate`` (checked on each change);
        return that state, or None after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                st = self.merger.state
                if predicate(st):
                    return st
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._changed.wait(min(left, 0.1))

    def wait_online(self, timeout: float) -> bool:
        """Block until every board of the table is online."""
        return self.wait_until(lambda st: all(st.boards_online.values()), timeout) is not None

    # --- subscriptions ---------------------------------------------------------

    def subscribe(
        self,
        on_state: StateCallback | None = None,
        on_status: StatusCallback | None = None,
        *,
        direct: bool = False,
    ) -> Callable[[], None]:
        """Call ``on_state(state)`` on every table state change and
        ``on_status(status)`` on every board status change (online, offline,
        mismatch, ...). Returns an unsubscribe function.

        By default callbacks run on the link's dispatcher thread, in order, so a
        slow subscriber never delays the boards. ``direct=True`` runs them on the
        board thread that produced the change, in order too, without a thread
        hop: for light, non-blocking consumers that want the lowest latency
        (e.g. painting LEDs); a direct callback that blocks stalls every board."""
        entry = (on_state, on_status)
        target = self._direct if direct else self._subs
        with self._lock:
            target.append(entry)

        def unsubscribe() -> None:
            with self._lock:
                if entry in target:
                    target.remove(entry)

        return unsubscribe

    # --- LEDs --------------------------------------------------------------------

    def set_leds(self, cell_colors: Mapping[CellId, RGB]) -> int:
        """Show this whole LED picture: the given cells in their colours, every
        other cell off. Split per board into whole frames; each board's frames
        are coalesced and rate-limited; boards without LEDs are skipped. Unknown
        cells raise KeyError (a programming error, not a board failure).

        Returns how many boards' frames were written right now (the others are
        unchanged, deferred by the rate limit, or offline: they follow by themselves)."""
        frames: dict[int, list[RGB]] = {b.id: [(0, 0, 0)] * b.leds for b in self.geometry.boards}
        for cid, color in cell_colors.items():
            cell = self.geometry.cells[cid]
            if cell.led is not None and cell.led < len(frames[cell.board]):
                frames[cell.board][cell.led] = color
        written = 0
        with self._lock:
            for board, frame in frames.items():
                if self._led_frames.get(board) == frame:
                    continue
                self._led_frames[board] = frame
                conn = self._owner.get(board)
                if conn is not None and conn.send_leds(frame):
                    written += 1
        return written

    def set_hot_cells(self, cells: Iterable[CellId]) -> int:
        """Tell each board which of its cells a legal move can touch (the
        referee's hint): those are read more often. Boards whose firmware
        does not take the hint are left alone; a board that comes back is
        told again. Unknown cells raise KeyError (a programming error).
        Returns how many boards' HOT frames were written right now."""
        per_board: dict[int, list[int]] = {b.id: [] for b in self.geometry.boards}
        for cid in cells:
            cell = self.geometry.cells[cid]
            per_board[cell.board].append(cell.channel)
        written = 0
        with self._lock:
            for board, channels in per_board.items():
                self._hot[board] = channels
                conn = self._owner.get(board)
                if conn is not None and conn.send_hot(channels):
                    written += 1
        return written

    # --- ConnListener ------------------------------------------------------------

    def board_identified(self, conn: BoardConnection, identity: BoardIdentity) -> str | None:
        g = self.geometry
        b = identity.board
        try:
            bg = g.board(b)
        except KeyError:
            known = ", ".join(str(x.id) for x in g.boards)
            return f"board {b} on {conn.port} is not part of table {g.name!r} (its boards: {known})"
        problems: list[str] = []
        if identity.cells != bg.channels:
            problems.append(f"it scans {identity.cells} cells, the table expects {bg.channels}")
        if bg.usb_serial and bg.usb_serial.upper() != identity.usb_serial:
            problems.append(
                f"its USB serial is {identity.usb_serial}, the table expects {bg.usb_serial}"
            )
        if self.options.expected_fw is not None and identity.fw_version != self.options.expected_fw:
            problems.append(
                f"it runs firmware {identity.fw_version!r}, the host expects {self.options.expected_fw!r}"
            )
        if self.options.check_config:
            want = g.config_hash(b)
            if identity.config_hash != want:
                problems.append(
                    f"its config hash is {identity.config_hash.hex()}, table {g.name!r} expects {want.hex()}"
                )
        if problems:
            return (
                f"board {b} on {conn.port}: "
                + "; ".join(problems)
                + f" -- flash it for this table: tablesense flash --table {g.source} --board {b} --port {conn.port}"
            )
        with self._lock:
            other = self._owner.get(b)
            if (
                other is not None
                and other is not conn
                and other.status.state is not ConnState.OFFLINE
            ):
                return f"board {b} on {conn.port} has the same id as the board on {other.port}: check their configs"
            self._owner[b] = conn
        return None

    def board_cells(
        self, board: int, readings: dict[int, Reading], full: bool, received_at: float
    ) -> None:
        with self._lock:
            if board not in self._owner:
                return
        with self._emit_lock:
            st = self.merger.apply(board, readings, full, received_at)
            if st is not None:
                self._emit("state", st)

    def board_sync(self, board: int, in_sync: bool) -> None:
        with self._lock:
            if board not in self._owner:
                return
        with self._emit_lock:
            st = self.merger.set_sync(board, in_sync, time.perf_counter())
            if st is not None:
                self._emit("state", st)

    def board_status(self, status: BoardStatus) -> None:
        self._statuses[status.port] = status
        board = status.board
        if board is not None:
            with self._lock:
                owner = self._owner.get(board)
                frame = self._led_frames.get(board)
                hot = self._hot.get(board)
            if owner is not None and owner.port == status.port:
                with self._emit_lock:
                    st = self.merger.set_online(board, status.online, time.perf_counter())
                    if st is not None:
                        self._emit("state", st)
                if status.online and frame is not None:
                    owner.send_leds(frame)
                if status.online and hot is not None:
                    owner.send_hot(hot)
        with self._emit_lock:
            self._emit("status", status)

    # --- internals -----------------------------------------------------------------

    def _add_connection(self, port: str) -> BoardConnection:
        conn = BoardConnection(
            port,
            self,
            self.options,
            link_factory=self._link_factory,
            locate=self._locate,
            clock=self._clock,
        )
        with self._lock:
            self._conns.append(conn)
        conn.start()
        return conn

    def _locate(self, identity: BoardIdentity) -> str | None:
        """A board's port vanished: look for it by USB serial (it may come back as
        another ttyACM). With udev names or sim symlinks the same path returns,
        and this finds nothing, which is fine: the connection reopens that path.
        In discovery mode the periodic scan does this job instead."""
        if self._ports is None:
            return None
        try:
            path = discovery.find_by_serial(identity.usb_serial)
        except Exception:  # noqa: BLE001 - no port listing on this system
            return None
        with self._lock:
            if path is not None and any(c.port == path for c in self._conns):
                return None
        return path

    def _scan_loop(self) -> None:
        while not self._stop.is_set():
            try:
                found = discovery.candidate_ports()
            except Exception:
                log.exception("listing serial ports failed")
                found = []
            gone: list[BoardConnection] = []
            with self._lock:
                # Drop connections whose device vanished; the scan finds the board again.
                for c in list(self._conns):
                    if c.status.state is ConnState.OFFLINE and not os.path.exists(c.port):
                        gone.append(c)
                        self._conns.remove(c)
                        if c.board is not None and self._owner.get(c.board) is c:
                            del self._owner[c.board]
                known = {c.port for c in self._conns}
            for c in gone:  # outside the lock: its thread may be reporting a status
                c.stop(timeout=0.5)
            for cand in found:
                if cand.path not in known:
                    self._add_connection(cand.path)
            self._stop.wait(self._rescan_interval)

    def _emit(self, kind: str, payload: object) -> None:
        """Deliver a change (caller holds _emit_lock): direct subscribers now,
        the others through the dispatcher queue."""
        self._queue.put((kind, payload))
        if self._direct:
            self._deliver(list(self._direct), kind, payload)
        if kind == "state":
            with self._changed:
                self._changed.notify_all()

    @staticmethod
    def _deliver(
        subs: list[tuple[StateCallback | None, StatusCallback | None]], kind: str, payload: object
    ) -> None:
        for on_state, on_status in subs:
            try:
                if kind == "state" and on_state is not None:
                    assert isinstance(payload, TableState)
                    on_state(payload)
                elif kind == "status" and on_status is not None:
                    assert isinstance(payload, BoardStatus)
                    on_status(payload)
            except Exception:
                log.exception("table link subscriber failed")

    def _dispatch(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            kind, payload = item
            with self._lock:
                subs = list(self._subs)
            self._deliver(subs, kind, payload)
