"""What every board on a pseudo-terminal shares: the USB cable's lifecycle.

A board here is a device path the host opens as it opens ``/dev/ttyACM0``
(the slave end of an ``os.openpty``), a thread serving it, and byte faults
(:mod:`tablesense.sim.faults`) between the two. :class:`PtyBoard` owns that
lifecycle -- ``start``/``stop``/``unplug``/``replug``, the stable
``link_dir`` name, the wake-up pipe of the serving thread, fault filters
drawn afresh per plug-in -- so that the two kinds of board a table can be made
of behave alike when a cable is pulled:

- :class:`tablesense.sim.virtual_board.VirtualBoard`, the firmware's step
  core running in this process;
- :class:`tablesense.sim.rp2040.board.Rp2040Board`, an emulated RP2040
  running the real MicroPython in a Node.js process.

A subclass says what powering up and down means (:meth:`_power_on`,
:meth:`_power_off`, both called with the lock held) and serves the pty in
:meth:`_run`, which ends when ``self._stop`` is set.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import tty
from collections.abc import Callable
from pathlib import Path

from tablesense.sim.faults import ByteFaults, FaultPlan


class _Pty:
    """The board's end of a pseudo-terminal (the master) plus its slave path."""

    def __init__(self, link_path: Path | None) -> None:
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)  # no echo, no line discipline: binary frames pass untouched
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self._slave)
        self.link_path = link_path
        if link_path is not None:
            with contextlib.suppress(FileNotFoundError):
                link_path.unlink()
            link_path.symlink_to(self.path)
        self.closed = False

    def read(self) -> bytes:
        try:
            return os.read(self.master, 4096)
        except BlockingIOError:
            return b""
        except OSError as exc:
            if exc.errno == errno.EIO:
                return b""  # nobody has the slave open
            raise

    def write(self, data: bytes) -> int:
        """Write what fits; a host that does not read loses the rest (like USB CDC)."""
        sent = 0
        while sent < len(data):
            try:
                sent += os.write(self.master, data[sent:])
            except BlockingIOError:
                return sent
            except OSError:
                return sent
        return sent

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.link_path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.link_path.unlink()
        for fd in (self._slave, self.master):
            with contextlib.suppress(OSError):
                os.close(fd)


class PtyBoard:
    """A board plugged in through a pseudo-terminal; see the module docstring."""

    #: how long stop() waits for the serving thread
    join_timeout = 2.0

    def __init__(
        self,
        board_id: int,
        *,
        faults: FaultPlan | None = None,
        link_dir: Path | None = None,
        on_path: Callable[[int, str], None] | None = None,
    ) -> None:
        self.board_id = board_id
        self.plan = faults or FaultPlan()
        self.link_dir = link_dir
        self.on_path = on_path
        self._pty: _Pty | None = None
        self._to_host: ByteFaults | None = None
        self._to_board: ByteFaults | None = None
        self._generation = 0  # plug-ins so far: each draws its own fault sequence
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._thread: threading.Thread | None = None

    # --- what a subclass provides ------------------------------------------------------

    def _power_on(self) -> None:
        """The board gets power (a new pty is in place); lock held."""
        raise NotImplementedError

    def _power_off(self) -> None:
        """The board loses power (its pty is about to close); lock held."""
        raise NotImplementedError

    def _run(self) -> None:
        """Serve the pty until ``self._stop`` is set."""
        raise NotImplementedError

    def _thread_name(self) -> str:
        return f"{type(self).__name__} {self.board_id}"

    # --- the cable -----------------------------------------------------------------------

    @property
    def path(self) -> str | None:
        """The current device path (``/dev/pts/N``), None while unplugged."""
        pty = self._pty
        return pty.path if pty is not None else None

    @property
    def stable_path(self) -> str | None:
        """The symlink in ``link_dir`` that follows the board across replugs (like a udev name)."""
        return str(self.link_dir / f"board-{self.board_id}") if self.link_dir is not None else None

    @property
    def lock(self) -> threading.RLock:
        """Held while the board works: hold it to change the world under this board."""
        return self._lock

    @property
    def plugged(self) -> bool:
        return self._pty is not None

    def start(self) -> str:
        """Plug the board in and start serving it; returns the device path."""
        with self._lock:
            if self._pty is None:
                self._plug()
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name=self._thread_name(), daemon=True)
            self._thread.start()
        path = self.path
        assert path is not None
        return path

    def stop(self) -> None:
        """Unplug and stop the thread; idempotent."""
        self._stop.set()
        self._wake()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(self.join_timeout)
        self._thread = None
        with self._lock:
            self._unplug()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._wake_r = self._wake_w = -1

    def unplug(self) -> None:
        """Pull the USB cable: the device path vanishes and the board loses power."""
        with self._lock:
            self._unplug()
        self._wake()

    def replug(self) -> str:
        """Plug it back: a new pty (a new path, told to ``on_path``), powered up again."""
        with self._lock:
            if self._pty is None:
                self._plug()
            path = self.path
        self._wake()
        assert path is not None
        return path

    def fault_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for name, f in (("to_host", self._to_host), ("to_board", self._to_board)):
            if f is not None:
                c = f.counts
                out[f"{name}_dropped"] = c.dropped
                out[f"{name}_corrupted"] = c.corrupted
                out[f"{name}_duplicated"] = c.duplicated
                out[f"{name}_delayed"] = c.delayed
        return out

    # --- internals -------------------------------------------------------------------------

    def _plug(self) -> None:
        link = self.link_dir / f"board-{self.board_id}" if self.link_dir is not None else None
        self._pty = _Pty(link)
        self._generation += 1
        self._to_host = self.plan.byte_faults(self.board_id, "to_host", self._generation)
        self._to_board = self.plan.byte_faults(self.board_id, "to_board", self._generation)
        self._power_on()
        if self.on_path is not None:
            self.on_path(self.board_id, self._pty.path)

    def _unplug(self) -> None:
        self._power_off()
        pty, self._pty = self._pty, None
        if pty is not None:
            pty.close()

    def _wake(self) -> None:
        """Wake the serving thread (it waits on ``self._wake_r`` with the pty)."""
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"!")
