"""One board's connection: handshake, keep-alive, resync, reconnect, LEDs.

A :class:`BoardConnection` owns one port and one thread. It runs this cycle
until stopped, and never lets a failure escape to its caller:

``offline`` -> open the port exclusively -> ``handshake`` (HELLO -> IDENTITY:
board id, cell count, firmware version and config hash checked; a difference
is ``mismatch`` with a message saying what to do) -> ``syncing`` (SNAPSHOT_REQ
until a snapshot arrives) -> ``online`` (CELL events applied, PING keep-alive,
watchdog) -> back to ``offline`` on any port error or silence, then reopen the
same path (or find the board again by its USB serial) with a growing delay.

Events are hints, the snapshot is the truth. The board numbers every frame it
sends; on a sequence gap, a CRC or framing error, a reconnect or a board
restart the connection *freezes* the board's cells (later events are ignored)
and asks for a snapshot, so the host never shows a mix of stale and new cells
that never existed on the table. A periodic snapshot (default every 10 s)
catches anything else.

A board of more than ``snapshot_chunk`` cells is resynced in ranges (ranged
SNAPSHOT_REQ, answered by SNAPSHOT_PART): a few short frames, each asked
again on its own when lost, instead of one long frame that must cross a noisy
cable whole. Each part carries the board's count of CELL events sent; a
change in (that count - CELL frames received) between two parts means a CELL
event was lost in between, so the parts taken before it are asked again. A
board that answers a ranged request with a whole SNAPSHOT (older firmware) is
asked for whole snapshots from then on.

LED frames are whole strips: :meth:`BoardConnection.send_leds` keeps only the
latest wanted frame (coalescing), sends it at most every ``led_min_interval``
seconds, resends it until acknowledged and after every reconnect (frames are
idempotent), and never sends one to a board whose IDENTITY lacks ``CAP_LEDS``.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from tablesense.firmware import proto
from tablesense.link.serial_link import Frame, FrameLink, LinkError, SerialLink
from tablesense.table.state import EMPTY, UNSCANNED, ReadError, Reading, Tag

log = logging.getLogger(__name__)

RGB = tuple[int, int, int]

#: The host's protocol version, sent in HELLO.
HOST_PROTOCOL = proto.VERSION


class ConnState(StrEnum):
    OFFLINE = "offline"  # port closed or failed; retrying
    HANDSHAKE = "handshake"  # port open, waiting for IDENTITY
    SYNCING = "syncing"  # identified, waiting for the first snapshot
    ONLINE = "online"  # in sync: cells are live
    MISMATCH = "mismatch"  # identified but not what the host expects
    STOPPED = "stopped"


@dataclass(frozen=True)
class BoardIdentity:
    """What a board said in IDENTITY (plus its board id from the frame header)."""

    board: int
    uid: bytes
    fw_version: str
    cells: int
    leds: int
    caps: int
    config_hash: bytes
    protocol: int

    @property
    def has_leds(self) -> bool:
        return bool(self.caps & proto.CAP_LEDS) and self.leds > 0

    @property
    def usb_serial(self) -> str:
        """MicroPython on RP2040 reports its unique id in hex as the USB serial number."""
        return self.uid.hex().upper()


@dataclass(frozen=True)
class BoardStatus:
    """A connection's state as shown to the user (and sent to subscribers)."""

    port: str
    board: int | None
    state: ConnState
    message: str
    identity: BoardIdentity | None = None

    @property
    def online(self) -> bool:
        return self.state is ConnState.ONLINE


@dataclass
class LinkOptions:
    """Timing and checks of a board connection (seconds)."""

    ping_interval: float = (
        0.1  # after this much silence: PING (bounds how long a lost event goes unseen)
    )
    watchdog: float = 3.0
    handshake_timeout: float = 0.3
    handshake_tries: int = 10
    snapshot_timeout: float = 0.2
    snapshot_retry_on_error: float = 0.03  # earliest re-request after a CRC error
    snapshot_chunk: int = 8  # cells per ranged SNAPSHOT_REQ (0: always the whole board at once)
    resync_interval: float = 10.0
    led_min_interval: float = 0.02
    led_ack_timeout: float = 0.25
    reconnect_delay: float = 0.1
    reconnect_max_delay: float = 1.0
    mismatch_retry: float = 5.0
    read_timeout: float = (
        0.05  # how long a connection thread sleeps in read when idle (timers tick at this rate)
    )
    expected_fw: str | None = None  # None: any firmware version is accepted
    check_config: bool = True
    # A slow board (an emulated RP2040 runs slower than real time while its CPU is
    # busy) is measured, not configured: the host times each HELLO -> IDENTITY and
    # PING -> ACK round trip and keeps the slowest of the last ``rtt_window``
    # seconds. The watchdog is then max(watchdog, rtt_factor x that), at most
    # watchdog_max; the PING, snapshot and LED re-send waits are at least that
    # round trip. A real board answers in milliseconds, so its bounds stay the
    # documented ones (3 s watchdog) until its round trips pass watchdog/rtt_factor.
    rtt_factor: float = 10.0
    rtt_window: float = 30.0
    watchdog_max: float = 30.0
    handshake_max_wait: float = 2.0  # each unanswered HELLO doubles the wait, up to this


@dataclass
class ConnStats:
    """Counters for diagnostics and benchmarks."""

    sessions: int = 0
    gaps: int = 0
    duplicates: int = 0
    rx_errors: int = 0
    snapshots: int = 0
    snapshot_requests: int = 0
    snapshot_parts: int = 0  # SNAPSHOT_PART frames taken
    stale_parts: int = 0  # cells of parts asked again because a CELL event was lost after them
    events: int = 0
    events_ignored: int = 0
    boots: int = 0
    led_frames: int = 0
    led_deferred: int = 0
    led_skipped: int = 0
    pings: int = 0
    resync_reasons: dict[str, int] = field(default_factory=dict)


class ConnListener(Protocol):
    """Where a connection reports (the table link's merger and status fan-out)."""

    def board_identified(self, conn: BoardConnection, identity: BoardIdentity) -> str | None:
        """Check an identity; return a mismatch message, or None to accept it."""
        ...

    def board_cells(
        self, board: int, readings: dict[int, Reading], full: bool, received_at: float
    ) -> None:
        """Channel readings from an event (``full=False``) or a snapshot (``full=True``)."""
        ...

    def board_status(self, status: BoardStatus) -> None: ...

    def board_sync(self, board: int, in_sync: bool) -> None:
        """The board's cells are trustworthy (True) or may be stale until a snapshot (False)."""
        ...


class _Flusher:
    """One shared thread that runs deferred LED sends at their due time (a
    timer thread per deferral would cost a thread start, ~1 ms under load,
    on the caller's path)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._count = 0
        self._thread: threading.Thread | None = None

    def schedule(self, due: float, fn: Callable[[], None]) -> None:
        with self._cond:
            self._count += 1
            heapq.heappush(self._heap, (due, self._count, fn))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="led-flusher", daemon=True)
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    timeout = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._cond.wait(timeout)
                _due, _n, fn = heapq.heappop(self._heap)
            try:
                fn()
            except Exception:
                log.exception("deferred LED send failed")


_LED_FLUSHER = _Flusher()


def reading_from_proto(state: None | bytes | int) -> Reading:
    """Turn a proto cell state (None / uid bytes / error code / -1) into a reading."""
    if state is None:
        return EMPTY
    if isinstance(state, bytes):
        return Tag(state)
    if state < 0:
        return UNSCANNED
    return ReadError(state)


@dataclass
class _Round:
    """One resync: the board's cells gathered range by range.

    ``ranges`` are (first, count), or a single ``None`` for the whole board in
    one SNAPSHOT. ``parts`` holds each channel's state as its part said, kept
    current by the CELL events received after that part; ``offsets`` the
    board's CELL count minus the host's CELL frames received when the part came
    (equal offsets: no CELL event was lost between the parts)."""

    ranges: list[tuple[int, int] | None]
    pending: dict[int, float] = field(default_factory=dict)  # range index -> asked at
    parts: dict[int, None | bytes | int] = field(default_factory=dict)
    offsets: dict[int, int] = field(default_factory=dict)

    def done(self, index: int) -> bool:
        rng = self.ranges[index]
        if rng is None:
            return False
        return all(ch in self.parts for ch in range(rng[0], rng[0] + rng[1]))


class _SessionEnd(Exception):
    """End this session (close the port, report offline, retry later)."""


class _Mismatch(Exception):
    pass


class BoardConnection:
    """Keeps one board connected and in sync; see the module docstring.

    ``link`` is a :class:`~tablesense.link.serial_link.SerialLink` by default;
    tests may give any :class:`FrameLink`. ``locate(identity)`` may return a
    new path for a board that vanished from its old one (rediscovery by USB
    serial); ``retire_when_gone`` ends the connection instead of retrying
    forever when its path no longer exists (discovery mode finds it again).
    """

    def __init__(
        self,
        port: str,
        listener: ConnListener,
        options: LinkOptions | None = None,
        *,
        link_factory: Callable[[str], FrameLink] | None = None,
        locate: Callable[[BoardIdentity], str | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.port = port
        self.listener = listener
        self.options = options or LinkOptions()
        self._link_factory = link_factory or (
            lambda p: SerialLink(p, read_timeout=self.options.read_timeout)
        )
        self._locate = locate
        self._clock = clock
        self._link: FrameLink | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.RLock()  # tx seq, LED state, link swap
        self.stats = ConnStats()
        self.identity: BoardIdentity | None = None
        self._status = BoardStatus(port, None, ConnState.OFFLINE, "not started")
        self._tx_seq = 0
        # session state (reset per session)
        self._state = ConnState.OFFLINE
        self._rx_seq: int | None = None
        self._frozen = True
        self._hello_seq: int | None = None
        self._hello_at = 0.0
        self._hello_tries = 0
        self._round: _Round | None = None  # a resync in progress
        self._ranged = True  # False once the board answered a range with a whole SNAPSHOT
        self._cell_rx = 0  # CELL frames received this session (see _Round)
        self._snap_ok_at = 0.0
        self._last_rx = 0.0
        self._last_ping = 0.0
        self._broken: str | None = None
        self._hellos: dict[int, float] = {}  # HELLO seq -> sent at (this handshake)
        self._pings: dict[int, float] = {}  # PING seq -> sent at (unanswered)
        self._rtts: list[tuple[float, float]] = []  # (measured at, round trip), newest last
        # LEDs (shared with caller threads, under _lock)
        self._led_wanted: tuple[RGB, ...] | None = None
        self._led_confirmed: tuple[RGB, ...] | None = None
        self._led_inflight: tuple[int, tuple[RGB, ...], float] | None = None
        self._led_last_sent = -1e9
        self._leds_disabled = False
        self._led_flush_due = False

    # --- public API ----------------------------------------------------------

    @property
    def status(self) -> BoardStatus:
        return self._status

    @property
    def board(self) -> int | None:
        return self.identity.board if self.identity else None

    @property
    def round_trip(self) -> float:
        """The slowest round trip (s) measured in the last ``rtt_window`` seconds (0: none)."""
        return max((r for _t, r in self._rtts), default=0.0)

    @property
    def watchdog(self) -> float:
        """The silence (s) after which the board is declared offline: the
        configured watchdog, scaled up for a board whose round trips are slow."""
        o = self.options
        scaled = max(o.watchdog, o.rtt_factor * self.round_trip)
        return min(scaled, max(o.watchdog, o.watchdog_max))

    def _wait(self, base: float) -> float:
        """A re-send wait: never shorter than the board's measured round trip."""
        return max(base, self.round_trip)

    def _measured(self, sent_at: float, now: float) -> None:
        cutoff = now - self.options.rtt_window
        rtts = [x for x in self._rtts if x[0] >= cutoff]
        rtts.append((now, max(0.0, now - sent_at)))
        self._rtts = rtts[-512:]

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run, name=f"board-conn {self.port}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread and close the port; idempotent."""
        self._stop.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)
        self._thread = None
        with self._lock:
            if self._link is not None:
                self._link.close()
        self._set_status(ConnState.STOPPED, "stopped")

    def send_leds(self, colors: Sequence[RGB]) -> bool:
        """Want this whole LED frame on the board. Latest wins; returns True when
        the frame was written right now (False: deferred by the rate limit, not
        connected, unchanged, or the board has no LEDs). Never raises."""
        frame = tuple((int(r) & 0xFF, int(g) & 0xFF, int(b) & 0xFF) for r, g, b in colors)
        with self._lock:
            self._led_wanted = frame
            return self._maybe_send_leds(self._clock())

    # --- the thread ----------------------------------------------------------

    def _run(self) -> None:
        delay = self.options.reconnect_delay
        while not self._stop.is_set():
            link = self._link_factory(self.port)
            try:
                link.open()
            except LinkError as exc:
                self._set_status(ConnState.OFFLINE, str(exc))
                if self._try_relocate():
                    continue
                self._stop.wait(delay)
                delay = min(delay * 2, self.options.reconnect_max_delay)
                continue
            with self._lock:
                self._link = link
            self.stats.sessions += 1
            retry_after = delay
            try:
                self._session(link)
                delay = self.options.reconnect_delay
            except _Mismatch as exc:
                self._set_status(ConnState.MISMATCH, str(exc))
                retry_after = self.options.mismatch_retry
            except (LinkError, _SessionEnd) as exc:
                delay = self.options.reconnect_delay
                retry_after = delay
                self._set_status(ConnState.OFFLINE, str(exc))
            except Exception as exc:  # a bug must not kill the table: report and retry
                log.exception("board connection %s crashed", self.port)
                self._set_status(ConnState.OFFLINE, f"internal error: {exc!r}")
            finally:
                with self._lock:
                    self._state = ConnState.OFFLINE
                    self._link = None
                    self._led_inflight = None
                    self._led_confirmed = None
                link.close()
            if not self._stop.is_set():
                self._stop.wait(retry_after)

    def _try_relocate(self) -> bool:
        if self._locate is None or self.identity is None:
            return False
        try:
            path = self._locate(self.identity)
        except Exception:  # discovery trouble is just "not found yet"
            log.exception("locating board %s failed", self.identity.board)
            return False
        if path and path != self.port:
            log.info("board %d moved from %s to %s", self.identity.board, self.port, path)
            self.port = path
            return True
        return False

    def _session(self, link: FrameLink) -> None:
        now = self._clock()
        self._rx_seq = None
        self._set_frozen(True)
        self._round = None
        self._ranged = True
        self._cell_rx = 0
        self._snap_ok_at = now
        self._last_rx = now
        self._last_ping = now
        self._broken = None
        self._pings.clear()
        self._begin_handshake(now)
        while not self._stop.is_set():
            frames = link.receive()
            now = self._clock()
            received_at = time.perf_counter()
            if self._broken:
                raise _SessionEnd(self._broken)
            for frame in frames:
                if frame is None:  # a frame lost to noise, at this point of the stream
                    self.stats.rx_errors += 1
                    if self._state in (ConnState.SYNCING, ConnState.ONLINE):
                        self._resync("crc", now, urgent=True)
                else:
                    self._handle(frame, now, received_at)
            self._timers(now)

    # --- handshake -------------------------------------------------------------

    def _begin_handshake(self, now: float) -> None:
        self._state = ConnState.HANDSHAKE
        self._hello_tries = 0
        self._hellos.clear()
        self._round = None
        self._set_frozen(True)
        self._send_hello(now)
        self._set_status(ConnState.HANDSHAKE, f"handshake on {self.port}")

    def _send_hello(self, now: float) -> None:
        self._hello_tries += 1
        self._hello_seq = self._send(proto.HELLO, bytes([HOST_PROTOCOL]))
        self._hello_at = now
        self._hellos[self._hello_seq] = now

    def _hello_wait(self) -> float:
        """How long to wait for an answer to the latest HELLO: handshake_timeout,
        doubled for each unanswered one (a slow board's answer to an earlier
        HELLO is accepted too), at most handshake_max_wait."""
        o = self.options
        grown = o.handshake_timeout * 2 ** max(0, self._hello_tries - 1)
        return max(o.handshake_timeout, min(grown, o.handshake_max_wait))

    def _on_identity(self, board: int, payload: bytes, seq: int, now: float) -> None:
        try:
            d = proto.decode_identity(payload)
        except proto.ProtocolError as exc:
            log.warning("%s: bad IDENTITY (%s); asking again", self.port, exc)
            return
        sent_at = self._hellos.get(d["ack_seq"])
        if sent_at is None:
            return  # an answer to a HELLO of an earlier handshake: wait for ours
        self._measured(sent_at, now)
        ident = BoardIdentity(
            board=board,
            uid=d["uid"],
            fw_version=d["fw_version"],
            cells=d["cells"],
            leds=d["leds"],
            caps=d["caps"],
            config_hash=d["config_hash"],
            protocol=d["protocol"],
        )
        if d["protocol"] != proto.VERSION:
            raise _Mismatch(
                f"board {board} on {self.port} speaks protocol {d['protocol']}, host speaks {proto.VERSION}: "
                "update the board's firmware (tablesense flash)"
            )
        problem = self.listener.board_identified(self, ident)
        self.identity = ident
        if problem:
            raise _Mismatch(problem)
        if ident.has_leds and 2 + 3 * ident.leds > proto.MAX_FRAME:
            # the board would drop every LED frame as oversize: say so once, send none
            log.warning(
                "board %d has %d LEDs; one LED frame carries at most %d: LEDs disabled",
                board, ident.leds, (proto.MAX_FRAME - 2) // 3,
            )
            self._leds_disabled = True
        self._rx_seq = seq
        self._state = ConnState.SYNCING
        self._set_status(
            ConnState.SYNCING, f"board {board} identified (firmware {ident.fw_version}); syncing"
        )
        with self._lock:
            self._led_confirmed = None  # the board's strip is unknown after a (re)connect
        self._start_round(now)

    # --- frames ------------------------------------------------------------------

    def _handle(self, frame: Frame, now: float, received_at: float) -> None:
        msg_type, board, seq, payload = frame
        if msg_type == proto.BOOT:
            self.stats.boots += 1
            if self._state is not ConnState.HANDSHAKE:
                self._go_offline_for_reboot(now)
            return
        if self._state is ConnState.HANDSHAKE:
            if msg_type == proto.IDENTITY:
                self._last_rx = now
                self._on_identity(board, payload, seq, now)
            return
        ident = self.identity
        if ident is None or board != ident.board:
            return  # not from the board we identified: ignore
        self._last_rx = now
        # Sequence check: every board frame is numbered, wrapping from 255 to 0.
        gap = False
        if self._rx_seq is not None:
            if seq == self._rx_seq:
                self.stats.duplicates += 1
                return
            gap = seq != (self._rx_seq + 1) & 0xFF
        self._rx_seq = seq
        if msg_type == proto.CELL:
            self._cell_rx += 1
        if gap:
            self.stats.gaps += 1
            self._resync("gap", now, urgent=True)
        try:
            if msg_type == proto.CELL:
                channel, state = proto.decode_cell_event(payload)
                if channel >= ident.cells:
                    raise proto.ProtocolError(f"CELL for channel {channel} of {ident.cells}")
                rnd = self._round
                if rnd is not None and channel in rnd.parts:
                    rnd.parts[channel] = state  # newer than the part that gave it
                if self._frozen:
                    self.stats.events_ignored += 1
                    return
                self.stats.events += 1
                self.listener.board_cells(
                    board, {channel: reading_from_proto(state)}, False, received_at
                )
            elif msg_type == proto.SNAPSHOT:
                _ack, states = proto.decode_snapshot(payload)
                if len(states) != ident.cells:
                    raise proto.ProtocolError(
                        f"SNAPSHOT of {len(states)} cells, board has {ident.cells}"
                    )
                if self._round is not None and self._round.ranges != [None]:
                    self._ranged = False  # older firmware: it ignores the range
                self._on_snapshot(board, states, now, received_at)
            elif msg_type == proto.SNAPSHOT_PART:
                self._on_part(board, payload, now, received_at)
            elif msg_type == proto.ACK:
                ack_seq, _status = proto.decode_ack(payload)
                ping_at = self._pings.pop(ack_seq, None)
                if ping_at is not None:
                    self._measured(ping_at, now)
                self._on_ack(ack_seq)
            elif msg_type == proto.NAK:
                ack_seq, code, message = proto.decode_nak(payload)
                self._on_nak(ack_seq, code, message)
            elif msg_type == proto.LOG:
                level, message = proto.decode_log(payload)
                log.log(
                    logging.WARNING if level >= 2 else logging.INFO, "board %d: %s", board, message
                )
        except proto.ProtocolError as exc:
            log.warning("board %d: %s; resyncing", board, exc)
            self._resync("protocol", now, urgent=True)

    def _on_part(self, board: int, payload: bytes, now: float, received_at: float) -> None:
        """One range of a resync (see _Round): keep it, drop the parts a lost
        CELL event may have made stale, and finish when every cell is in."""
        ident = self.identity
        assert ident is not None
        _ack, first, events, states = proto.decode_snapshot_part(payload)
        if first + len(states) > ident.cells:
            raise proto.ProtocolError(
                f"SNAPSHOT_PART for cells {first}..{first + len(states) - 1} of {ident.cells}"
            )
        rnd = self._round
        if rnd is None:
            return  # a late answer: the cells are live and in sync already
        self.stats.snapshot_parts += 1
        offset = (events - self._cell_rx) & 0xFFFF
        for k, state in enumerate(states):
            rnd.parts[first + k] = state
            rnd.offsets[first + k] = offset
        stale = [ch for ch, off in rnd.offsets.items() if off != offset]
        if stale:
            # a CELL event was lost after those parts were taken: ask for them again
            self.stats.stale_parts += len(stale)
            for ch in stale:
                del rnd.parts[ch]
                del rnd.offsets[ch]
            for i in range(len(rnd.ranges)):
                rng = rnd.ranges[i]
                if rng is not None and any(rng[0] <= ch < rng[0] + rng[1] for ch in stale):
                    self._ask_range(i, now)
        if len(rnd.parts) == ident.cells:
            self._on_snapshot(board, [rnd.parts[ch] for ch in range(ident.cells)], now, received_at)

    def _on_snapshot(self, board: int, states: list, now: float, received_at: float) -> None:
        self.stats.snapshots += 1
        self._round = None
        self._snap_ok_at = now
        readings = {ch: reading_from_proto(s) for ch, s in enumerate(states)}
        if any(s == -1 for s in states):
            # Fresh after a restart: look again soon rather than at the next periodic resync.
            self._snap_ok_at = now - self.options.resync_interval + 0.1
        if self._state is ConnState.SYNCING:
            # Cells first, then sync and status: subscribers see a complete state when told "online".
            self.listener.board_cells(board, readings, True, received_at)
            self._set_frozen(False)
            self._state = ConnState.ONLINE
            self._set_status(ConnState.ONLINE, f"board {board} online on {self.port}")
            with self._lock:
                self._maybe_send_leds(now)
        else:
            self.listener.board_cells(board, readings, True, received_at)
            self._set_frozen(False)

    def _on_ack(self, ack_seq: int) -> None:
        with self._lock:
            inflight = self._led_inflight
            if inflight is not None and inflight[0] == ack_seq:
                self._led_confirmed = inflight[1]
                self._led_inflight = None
                self._maybe_send_leds(self._clock())

    def _on_nak(self, ack_seq: int, code: int, message: str) -> None:
        with self._lock:
            inflight = self._led_inflight
            if inflight is not None and inflight[0] == ack_seq:
                self._led_inflight = None
                if code == proto.NAK_UNSUPPORTED:
                    self._leds_disabled = True
                    log.warning(
                        "board %s refuses LED frames (%s): LEDs disabled", self.board, message
                    )
                    return
        log.warning("board %s: NAK %d for frame %d: %s", self.board, code, ack_seq, message)

    def _go_offline_for_reboot(self, now: float) -> None:
        board = self.board
        self._set_status(ConnState.HANDSHAKE, f"board {board} restarted; handshaking again")
        self._begin_handshake(now)

    # --- timers ------------------------------------------------------------------

    def _timers(self, now: float) -> None:
        o = self.options
        if self._state is ConnState.HANDSHAKE:
            if now - self._hello_at >= self._hello_wait():
                if self._hello_tries >= o.handshake_tries:
                    raise _SessionEnd(
                        f"no IDENTITY from {self.port} after {self._hello_tries} HELLOs: "
                        "is this a tablesense board running its firmware?"
                    )
                self._send_hello(now)
            return
        watchdog = self.watchdog
        if now - self._last_rx > watchdog:
            raise _SessionEnd(f"board {self.board} on {self.port} silent for {watchdog:.1f} s")
        # Keep-alive: when the board has been quiet for ping_interval, ping it. Its
        # answer is numbered, so a lost last event shows as a gap within one interval.
        # A slow board is pinged at most once per round trip (no queue of PINGs).
        if now - max(self._last_ping, self._last_rx) >= self._wait(o.ping_interval):
            self._last_ping = now
            self.stats.pings += 1
            seq = self._send(proto.PING)
            if len(self._pings) > 64:  # unanswered ones (lost): keep the newest
                for old in sorted(self._pings, key=self._pings.__getitem__)[:32]:
                    del self._pings[old]
            self._pings[seq] = now
        if self._round is not None:
            self._ask_missing(now, self._wait(o.snapshot_timeout))
        elif now - self._snap_ok_at >= o.resync_interval:
            self._resync("periodic", now, urgent=False)
            with self._lock:
                self._led_confirmed = None  # frames are idempotent: refresh the strip too
        with self._lock:
            self._maybe_send_leds(now)

    def _resync(self, reason: str, now: float, urgent: bool) -> None:
        """Ask for the truth. ``urgent`` (gap, CRC error) also freezes the cells."""
        self.stats.resync_reasons[reason] = self.stats.resync_reasons.get(reason, 0) + 1
        if urgent:
            self._set_frozen(True)
        if self._round is None:
            self._start_round(now)
        elif urgent:
            # a frame was lost: it may have been an answer; ask again for what is missing
            self._ask_missing(now, self.options.snapshot_retry_on_error)

    def _start_round(self, now: float) -> None:
        """Ask for every cell: in ranges of ``snapshot_chunk`` cells when the
        board is larger than that (and answers ranges), else all at once."""
        ident = self.identity
        cells = ident.cells if ident is not None else 0
        chunk = self.options.snapshot_chunk
        ranges: list[tuple[int, int] | None] = [None]
        if self._ranged and 0 < chunk < cells:
            ranges = [(first, min(chunk, cells - first)) for first in range(0, cells, chunk)]
        self._round = _Round(ranges)
        for i in range(len(ranges)):
            self._ask_range(i, now)

    def _ask_missing(self, now: float, older_than: float) -> None:
        """Ask again for every range of the round not received yet whose
        request is at least ``older_than`` seconds old."""
        rnd = self._round
        if rnd is None:
            return
        for i in range(len(rnd.ranges)):
            if not rnd.done(i) and now - rnd.pending.get(i, -1e9) >= older_than:
                self._ask_range(i, now)

    def _ask_range(self, index: int, now: float) -> None:
        rnd = self._round
        assert rnd is not None
        rng = rnd.ranges[index]
        payload = proto.encode_snapshot_req() if rng is None else proto.encode_snapshot_req(*rng)
        self.stats.snapshot_requests += 1
        self._send(proto.SNAPSHOT_REQ, payload)
        rnd.pending[index] = now

    # --- sending -------------------------------------------------------------------

    def _send(self, msg_type: int, payload: bytes = b"") -> int:
        """Send a command; returns its sequence number. A write failure ends the session."""
        with self._lock:
            seq = self._tx_seq
            self._tx_seq = (seq + 1) & 0xFF
            link = self._link
            if link is None:
                return seq
            board = self.identity.board if self.identity else 0
            try:
                link.send(msg_type, board, seq, payload)
            except LinkError as exc:
                self._broken = str(exc)
        return seq

    def _maybe_send_leds(self, now: float) -> bool:
        """Send the wanted LED frame if allowed now (caller holds _lock)."""
        wanted = self._led_wanted
        ident = self.identity
        if (
            wanted is None
            or self._link is None
            or self._state is not ConnState.ONLINE
            or ident is None
        ):
            return False
        if not ident.has_leds or self._leds_disabled:
            self.stats.led_skipped += 1
            return False
        inflight = self._led_inflight
        if (
            inflight is not None
            and inflight[1] == wanted
            and now - inflight[2] < self._wait(self.options.led_ack_timeout)
        ):
            return False  # already on its way
        if inflight is None and wanted == self._led_confirmed:
            return False  # the board shows it
        wait = self._led_last_sent + self.options.led_min_interval - now
        if wait > 0:
            self.stats.led_deferred += 1
            self._schedule_led_flush(wait)
            return False
        frame = list(wanted[: ident.leds]) + [(0, 0, 0)] * max(0, ident.leds - len(wanted))
        seq = self._send(proto.LEDS, proto.encode_leds(frame))
        self._led_inflight = (seq, wanted, now)
        self._led_last_sent = now
        self.stats.led_frames += 1
        return True

    def _schedule_led_flush(self, delay: float) -> None:
        """Send the deferred frame as soon as the rate limit allows (caller holds _lock)."""
        if self._led_flush_due:
            return
        self._led_flush_due = True
        _LED_FLUSHER.schedule(time.monotonic() + delay, self._flush_leds)

    def _flush_leds(self) -> None:
        with self._lock:
            self._led_flush_due = False
            self._maybe_send_leds(self._clock())

    def _set_frozen(self, frozen: bool) -> None:
        """Freeze (cells possibly stale, resync pending) or thaw this board's cells."""
        if frozen == self._frozen:
            return
        self._frozen = frozen
        if self.identity is not None and self._state in (ConnState.SYNCING, ConnState.ONLINE):
            try:
                self.listener.board_sync(self.identity.board, not frozen)
            except Exception:
                log.exception("board sync listener failed")

    def _set_status(self, state: ConnState, message: str) -> None:
        board = self.identity.board if self.identity else None
        new = BoardStatus(self.port, board, state, message, self.identity)
        old = self._status
        self._status = new
        if (old.state, old.message, old.board) != (new.state, new.message, new.board):
            if state in (ConnState.OFFLINE, ConnState.MISMATCH) or state is ConnState.ONLINE:
                log.info("%s", message)
            try:
                self.listener.board_status(new)
            except Exception:
                log.exception("board status listener failed")
