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

The state machine is :class:`~tablesense.link.protocol.BoardProtocol`, which
does no I/O; this module is its transport: the port, the thread, the reconnect
loop with its growing delay, and the timer that sends deferred LED frames.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Callable, Sequence

from tablesense.link.protocol import (
    HOST_PROTOCOL,
    RGB,
    BoardIdentity,
    BoardProtocol,
    BoardStatus,
    ConnListener,
    ConnState,
    ConnStats,
    LinkOptions,
    Mismatch,
    SessionEnd,
    reading_from_proto,
)
from tablesense.link.serial_link import FrameLink, LinkError, SerialLink

__all__ = [
    "HOST_PROTOCOL",
    "RGB",
    "BoardConnection",
    "BoardIdentity",
    "BoardStatus",
    "ConnListener",
    "ConnState",
    "ConnStats",
    "LinkOptions",
    "reading_from_proto",
]

log = logging.getLogger(__name__)


class _Flusher:
    """One shared thread that runs deferred LED sends at their due time (a
    timer thread per deferral would cost a thread start, ~1 ms under load,
    on the caller's path). Real time only: a protocol driven by a test's
    clock is flushed by the test (:meth:`BoardProtocol.flush_leds`)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._count = 0
        self._thread: threading.Thread | None = None

    def schedule(self, delay: float, fn: Callable[[], None]) -> None:
        with self._cond:
            self._count += 1
            heapq.heappush(self._heap, (time.monotonic() + delay, self._count, fn))
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


class BoardConnection:
    """Keeps one board connected and in sync; see the module docstring.

    ``link`` is a :class:`~tablesense.link.serial_link.SerialLink` by default;
    tests may give any :class:`FrameLink`. ``locate(identity)`` may return a
    new path for a board that vanished from its old one (rediscovery by USB
    serial). ``protocol`` is the state machine it drives.
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
        self.protocol = BoardProtocol(port, listener, options or LinkOptions(), owner=self)
        self._link_factory = link_factory or (
            lambda p: SerialLink(p, read_timeout=self.options.read_timeout)
        )
        self._locate = locate
        self._clock = clock
        self._link: FrameLink | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.RLock()  # the link, and the order of writes on it
        self._broken: str | None = None

    # --- public API ----------------------------------------------------------

    @property
    def port(self) -> str:
        return self.protocol.port

    @port.setter
    def port(self, path: str) -> None:
        self.protocol.port = path

    @property
    def listener(self) -> ConnListener:
        return self.protocol.listener

    @property
    def options(self) -> LinkOptions:
        return self.protocol.options

    @property
    def stats(self) -> ConnStats:
        return self.protocol.stats

    @property
    def identity(self) -> BoardIdentity | None:
        return self.protocol.identity

    @property
    def status(self) -> BoardStatus:
        return self.protocol.status

    @property
    def board(self) -> int | None:
        return self.protocol.board

    @property
    def round_trip(self) -> float:
        """The slowest round trip (s) measured in the last ``rtt_window`` seconds (0: none)."""
        return self.protocol.round_trip

    @property
    def watchdog(self) -> float:
        """The silence (s) after which the board is declared offline (see LinkOptions)."""
        return self.protocol.watchdog

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
        self.protocol.report(ConnState.STOPPED, "stopped")

    def send_leds(self, colors: Sequence[RGB]) -> bool:
        """Want this whole LED frame on the board. Latest wins; returns True when
        the frame was written right now (False: deferred by the rate limit, not
        connected, unchanged, or the board has no LEDs). Never raises."""
        sent = self.protocol.want_leds(colors, self._clock())
        self._write()
        return sent

    def send_hot(self, channels: Sequence[int]) -> bool:
        """Want these channels read more often (see BoardProtocol.want_hot);
        True when the HOT frame was written right now. Never raises."""
        sent = self.protocol.want_hot(channels, self._clock())
        self._write()
        return sent

    # --- the transport -------------------------------------------------------

    def _write(self) -> None:
        """Write what the protocol queued, in order, and arm the LED timer it
        asked for. A write failure ends the session (the thread sees it)."""
        with self._lock:
            link = self._link
            for frame in self.protocol.take_outgoing():
                if link is None:
                    break
                try:
                    link.send(*frame)
                except LinkError as exc:
                    self._broken = str(exc)
                    break
        delay = self.protocol.take_led_flush()
        if delay is not None:
            _LED_FLUSHER.schedule(delay, self._flush_leds)

    def _flush_leds(self) -> None:
        self.protocol.flush_leds(self._clock())
        self._write()

    def _run(self) -> None:
        delay = self.options.reconnect_delay
        while not self._stop.is_set():
            link = self._link_factory(self.port)
            try:
                link.open()
            except LinkError as exc:
                self.protocol.report(ConnState.OFFLINE, str(exc))
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
            except Mismatch as exc:
                self.protocol.report(ConnState.MISMATCH, str(exc))
                retry_after = self.options.mismatch_retry
            except (LinkError, SessionEnd) as exc:
                delay = self.options.reconnect_delay
                retry_after = delay
                self.protocol.report(ConnState.OFFLINE, str(exc))
            except Exception as exc:  # a bug must not kill the table: report and retry
                log.exception("board connection %s crashed", self.port)
                self.protocol.report(ConnState.OFFLINE, f"internal error: {exc!r}")
            finally:
                with self._lock:
                    self._link = None
                    self.protocol.closed()
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
        protocol = self.protocol
        self._broken = None
        protocol.begin(self._clock())
        self._write()
        while not self._stop.is_set():
            frames = link.receive()
            now = self._clock()
            received_at = time.perf_counter()
            if self._broken:
                raise SessionEnd(self._broken)
            for frame in frames:
                protocol.receive(frame, now, received_at)
            protocol.tick(now)
            self._write()
