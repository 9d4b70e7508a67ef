"""The board protocol of one connection, without I/O: frames and time in,
frames to write and reports to the listener out.

:class:`BoardProtocol` is the whole state machine the module docstring of
:mod:`tablesense.link.board_conn` describes (handshake, sequence checks,
freezing, ranged resyncs, keep-alive, watchdog, LED coalescing) and nothing
else: it never opens a port, starts a thread, sleeps or reads a clock. The
transport (:class:`~tablesense.link.board_conn.BoardConnection`) feeds it what
the port delivered (:meth:`BoardProtocol.receive`) and the time
(:meth:`BoardProtocol.tick`), writes what it queued
(:meth:`BoardProtocol.take_outgoing`) and calls :meth:`BoardProtocol.flush_leds`
when a deferred LED frame falls due (:meth:`BoardProtocol.take_led_flush`).
So a test drives a whole session, timeouts included, by handing it frames and
numbers, with no threads and no sleeps (tests/link/test_protocol.py).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from tablesense.firmware import proto
from tablesense.link.serial_link import Frame
from tablesense.table.state import EMPTY, UNSCANNED, ReadError, Reading, Tag

log = logging.getLogger("tablesense.link.board_conn")

RGB = tuple[int, int, int]

#: The host's protocol version, sent in HELLO.
HOST_PROTOCOL = proto.VERSION

#: A frame for the transport to write: (message type, board id, sequence, payload).
OutFrame = tuple[int, int, int, bytes]


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
    def takes_hot(self) -> bool:
        """The board reads hot cells more often when told (HOT); an older
        one would NAK the frame, so it is not sent to it."""
        return bool(self.caps & proto.CAP_HOT)

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

    def board_identified(self, conn: Any, identity: BoardIdentity) -> str | None:
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


class SessionEnd(Exception):
    """End this session (close the port, report offline, retry later)."""


class Mismatch(Exception):
    """The board is not the one the table expects; the message says what to do."""


class BoardProtocol:
    """One board's protocol state, driven by its transport; see the module docstring.

    ``owner`` is what the listener's ``board_identified`` is told about (the
    transport, whose port the listener may name). LED state is shared with
    the callers of :meth:`want_leds` on other threads, under ``_lock``.
    """

    def __init__(
        self, port: str, listener: ConnListener, options: LinkOptions, owner: Any = None
    ) -> None:
        self.port = port
        self.listener = listener
        self.options = options
        self.owner = self if owner is None else owner
        self._lock = threading.RLock()  # tx seq, outgoing frames, LED state
        self.stats = ConnStats()
        self.identity: BoardIdentity | None = None
        self._status = BoardStatus(port, None, ConnState.OFFLINE, "not started")
        self._tx_seq = 0
        self._out: list[OutFrame] = []
        self._now = 0.0
        self.connected = False  # a port is open: frames are queued for it
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
        self._flush_in: float | None = None
        # hot cells (the referee's hint; under _lock): wanted, and (seq, cells,
        # sent at) of the HOT frame on its way, and what the board acknowledged
        self._hot_wanted: tuple[int, ...] | None = None
        self._hot_inflight: tuple[int, tuple[int, ...], float] | None = None
        self._hot_confirmed: tuple[int, ...] | None = None

    # --- what the transport calls ---------------------------------------------

    def begin(self, now: float) -> None:
        """A port was opened: start a session with a handshake."""
        self._now = now
        with self._lock:
            self.connected = True
        self._rx_seq = None
        self._set_frozen(True)
        self._round = None
        self._ranged = True
        self._cell_rx = 0
        self._snap_ok_at = now
        self._last_rx = now
        self._last_ping = now
        self._pings.clear()
        self._begin_handshake(now)

    def receive(self, frame: Frame | None, now: float, received_at: float) -> None:
        """One frame from the port (None: a frame lost to noise at this point
        of the stream). Raises :class:`Mismatch` for a board the table does not
        expect."""
        if frame is None:
            self.stats.rx_errors += 1
            if self._state in (ConnState.SYNCING, ConnState.ONLINE):
                self._resync("crc", now, urgent=True)
            return
        self._handle(frame, now, received_at)

    def closed(self) -> None:
        """The session's port is closed: nothing more is queued, and the
        board's strip is unknown until the next session confirms it."""
        with self._lock:
            self.connected = False
            self._state = ConnState.OFFLINE
            self._out.clear()
            self._led_inflight = None
            self._led_confirmed = None
            self._hot_inflight = None
            self._hot_confirmed = None

    def want_leds(self, colors: Sequence[RGB], now: float) -> bool:
        """Want this whole LED frame on the board. Latest wins; True when the
        frame was queued right now (False: deferred by the rate limit, not
        connected, unchanged, or the board has no LEDs)."""
        frame = tuple((int(r) & 0xFF, int(g) & 0xFF, int(b) & 0xFF) for r, g, b in colors)
        with self._lock:
            self._now = now
            self._led_wanted = frame
            return self._maybe_send_leds(now)

    def want_hot(self, channels: Sequence[int], now: float) -> bool:
        """Want these channels read more often (the cells a legal move can
        touch). Latest wins, kept across sessions (a restarted board is told
        again); True when the HOT frame was queued right now (False: not
        online, unchanged, or a board without the capability)."""
        wanted = tuple(sorted({int(c) for c in channels}))
        with self._lock:
            self._now = now
            self._hot_wanted = wanted
            return self._maybe_send_hot(now)

    def flush_leds(self, now: float) -> None:
        """A deferred LED frame is due (see :meth:`take_led_flush`)."""
        with self._lock:
            self._now = now
            self._led_flush_due = False
            self._maybe_send_leds(now)

    def take_outgoing(self) -> list[OutFrame]:
        """The frames queued since the last call, in order, for the transport to write."""
        with self._lock:
            out, self._out = self._out, []
        return out

    def take_led_flush(self) -> float | None:
        """Seconds until :meth:`flush_leds` should be called, when a deferred
        LED frame asked for it since the last call; else None."""
        with self._lock:
            delay, self._flush_in = self._flush_in, None
        return delay

    @property
    def state(self) -> ConnState:
        return self._state

    @property
    def led_confirmed(self) -> tuple[RGB, ...] | None:
        """The LED frame the board acknowledged (None: unknown)."""
        return self._led_confirmed

    # --- the state machine ------------------------------------------------------

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


    def _begin_handshake(self, now: float) -> None:
        self._state = ConnState.HANDSHAKE
        self._hello_tries = 0
        self._hellos.clear()
        self._round = None
        self._set_frozen(True)
        self._send_hello(now)
        self.report(ConnState.HANDSHAKE, f"handshake on {self.port}")


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
            raise Mismatch(
                f"board {board} on {self.port} speaks protocol {d['protocol']}, host speaks {proto.VERSION}: "
                "update the board's firmware (tablesense flash)"
            )
        problem = self.listener.board_identified(self.owner, ident)
        self.identity = ident
        if problem:
            raise Mismatch(problem)
        if ident.has_leds and 2 + 3 * ident.leds > proto.MAX_FRAME:
            # the board would drop every LED frame as oversize: say so once, send none
            log.warning(
                "board %d has %d LEDs; one LED frame carries at most %d: LEDs disabled",
                board, ident.leds, (proto.MAX_FRAME - 2) // 3,
            )
            self._leds_disabled = True
        self._rx_seq = seq
        self._state = ConnState.SYNCING
        self.report(
            ConnState.SYNCING, f"board {board} identified (firmware {ident.fw_version}); syncing"
        )
        with self._lock:
            self._led_confirmed = None  # the board's strip is unknown after a (re)connect
            self._hot_confirmed = None  # and so are its hot cells (a restart forgets them)
            self._hot_inflight = None
        self._start_round(now)


    def _handle(self, frame: Frame, now: float, received_at: float) -> None:
        self._now = now
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
            self.report(ConnState.ONLINE, f"board {board} online on {self.port}")
            with self._lock:
                self._maybe_send_leds(now)
                self._maybe_send_hot(now)
        else:
            self.listener.board_cells(board, readings, True, received_at)
            self._set_frozen(False)


    def _on_ack(self, ack_seq: int) -> None:
        with self._lock:
            hot = self._hot_inflight
            if hot is not None and hot[0] == ack_seq:
                self._hot_confirmed = hot[1]
                self._hot_inflight = None
                self._maybe_send_hot(self._now)
            inflight = self._led_inflight
            if inflight is not None and inflight[0] == ack_seq:
                self._led_confirmed = inflight[1]
                self._led_inflight = None
                self._maybe_send_leds(self._now)


    def _on_nak(self, ack_seq: int, code: int, message: str) -> None:
        with self._lock:
            hot = self._hot_inflight
            if hot is not None and hot[0] == ack_seq:
                # (a channel the board does not have: the table file and the
                # board disagree, which the handshake reports; not resent)
                self._hot_inflight = None
                self._hot_confirmed = hot[1]
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
        self.report(ConnState.HANDSHAKE, f"board {board} restarted; handshaking again")
        self._begin_handshake(now)


    def tick(self, now: float) -> None:
        """Time passes: handshake retries, the watchdog, PINGs, resync requests,
        deferred LED frames. Raises :class:`SessionEnd` when the board is gone."""
        self._now = now
        o = self.options
        if self._state is ConnState.HANDSHAKE:
            if now - self._hello_at >= self._hello_wait():
                if self._hello_tries >= o.handshake_tries:
                    raise SessionEnd(
                        f"no IDENTITY from {self.port} after {self._hello_tries} HELLOs: "
                        "is this a tablesense board running its firmware?"
                    )
                self._send_hello(now)
            return
        watchdog = self.watchdog
        if now - self._last_rx > watchdog:
            raise SessionEnd(f"board {self.board} on {self.port} silent for {watchdog:.1f} s")
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
            self._maybe_send_hot(now)


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


    def _send(self, msg_type: int, payload: bytes = b"") -> int:
        """Queue a command for the transport; returns its sequence number."""
        with self._lock:
            seq = self._tx_seq
            self._tx_seq = (seq + 1) & 0xFF
            if not self.connected:
                return seq
            board = self.identity.board if self.identity else 0
            self._out.append((msg_type, board, seq, payload))
        return seq

    def _maybe_send_leds(self, now: float) -> bool:
        """Send the wanted LED frame if allowed now (caller holds _lock)."""
        wanted = self._led_wanted
        ident = self.identity
        if (
            wanted is None
            or not self.connected
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


    def _maybe_send_hot(self, now: float) -> bool:
        """Send the wanted hot cells if the board takes them and does not
        have them yet (caller holds _lock); an unanswered HOT is sent again
        after the LED acknowledgement wait."""
        wanted = self._hot_wanted
        ident = self.identity
        if wanted is None or not self.connected or self._state is not ConnState.ONLINE or ident is None:
            return False
        if not ident.takes_hot:
            return False
        inflight = self._hot_inflight
        if inflight is not None and inflight[1] == wanted and now - inflight[2] < self._wait(self.options.led_ack_timeout):
            return False
        if inflight is None and wanted == self._hot_confirmed:
            return False
        seq = self._send(proto.HOT, proto.encode_hot(wanted))
        self._hot_inflight = (seq, wanted, now)
        return True

    def _schedule_led_flush(self, delay: float) -> None:
        """Ask the transport to call :meth:`flush_leds` in ``delay`` seconds
        (caller holds _lock); one request at a time."""
        if self._led_flush_due:
            return
        self._led_flush_due = True
        self._flush_in = delay

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


    def report(self, state: ConnState, message: str) -> None:
        """Set and publish the connection's status (the transport reports
        port errors and stops through here too)."""
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

