"""Our small adapter over mpremote's serial transport (pinned: mpremote==1.27.0).

mpremote's transport works as a library, but its module header warns that
the API will change, so the flasher touches it only here: open a port, enter
the raw REPL *without* a soft reset (some boards, and the virtual WebAssembly
board, lack it; and a soft reset would start main.py's framing again on real
boards), run code and get its output or its traceback, write a file, hash
files, and hard-reset. Raw-paste mode is used when the board has it; mpremote
probes it and falls back to the plain raw REPL by itself.

Everything mpremote raises, and what it prints while failing, becomes a
:class:`ReplError` whose message says what to do.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import io
import math
from collections.abc import Callable
from types import TracebackType

from tablesense.sentence import say

#: The mpremote release this adapter was written against.
MPREMOTE_VERSION = "1.27.0"

#: Bytes of file data per exec when writing (base64 inflates it by 4/3).
#: 4 KiB: on the rp2 port (rp2040js) each exec costs a fixed ~0.2 s of
#: compile and round trip, so 2 KiB chunks made uploads ~30 % slower; a
#: 5.5 KB command is nothing for a board with ~190 KB free.
WRITE_CHUNK = 4096


class ReplError(RuntimeError):
    """The raw REPL failed (no REPL, a traceback, a timeout); the message says what to do."""

    def __init__(self, message: str, traceback: str = "") -> None:
        super().__init__(message)
        self.traceback = traceback


def check_mpremote_version() -> str | None:
    """None when the installed mpremote is the pinned one, else a warning."""
    try:
        from importlib.metadata import version

        found = version("mpremote")
    except Exception:  # noqa: BLE001 - metadata missing: nothing to compare
        return None
    if found != MPREMOTE_VERSION:
        return say("mpremote {found} is installed; tablesense is tested with {tested} ({command})", found=found,
                   tested=MPREMOTE_VERSION, command=f"pip install mpremote=={MPREMOTE_VERSION}")
    return None


_CHATTER = io.StringIO()


def _nothing() -> contextlib.nullcontext:
    return contextlib.nullcontext()


def _quiet_mpremote() -> None:
    """mpremote's transport prints what it received when it fails; keep that
    out of our stdout (which may carry --json) without redirecting
    sys.stdout, which is process-wide and unsafe with one thread per board."""
    import mpremote.transport_serial as ts

    def _print(*args: object, **kwargs: object) -> None:
        _CHATTER.write(" ".join(str(a) for a in args) + "\n")

    ts.print = _print  # type: ignore[attr-defined]


class ReplSession:
    """The raw REPL of one board. Use as a context manager; :meth:`close`
    leaves the raw REPL (the board stays at its friendly REPL unless
    :meth:`hard_reset` was called)."""

    def __init__(self, port: str, *, timeout: float = 10.0, fast_write: bool = True) -> None:
        self.port = port
        self.timeout = timeout
        self.fast_write = fast_write
        self._t = None  # mpremote.transport_serial.SerialTransport

    def open(self) -> None:
        from mpremote.transport import TransportError
        from mpremote.transport_serial import SerialTransport

        _quiet_mpremote()
        chatter = _CHATTER
        try:
            with _nothing():
                t = SerialTransport(self.port, baudrate=115200)
        except (TransportError, OSError) as exc:
            raise ReplError(say(
                "cannot open {port} ({error}): is the board plugged in, and no other program "
                "(tablesense play, a terminal) using the port?", port=self.port, error=str(exc)
            )) from None
        mark = len(chatter.getvalue())
        try:
            with _nothing():
                t.enter_raw_repl(soft_reset=False, timeout_overall=math.ceil(self.timeout))
        except (TransportError, OSError) as exc:
            with contextlib.suppress(Exception):
                t.close()
            seen = chatter.getvalue()[mark:].strip()[-200:]
            raise ReplError(say(
                "{port} did not give a MicroPython raw REPL ({error}). "
                "If the board runs firmware that ignores Ctrl-C, unplug it, hold BOOTSEL, plug it in and "
                "install MicroPython with `tablesense flash --port PATH --micropython FILE.uf2`",
                port=self.port, error=f"{exc}{'; it sent ' + seen if seen else ''}",
            )) from None
        self._t = t

    def close(self) -> None:
        t, self._t = self._t, None
        if t is None:
            return
        with contextlib.suppress(Exception):
            t.exit_raw_repl()
        with contextlib.suppress(Exception):
            t.close()

    def __enter__(self) -> ReplSession:
        self.open()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- running code -----------------------------------------------------

    def exec(self, code: str, timeout: float | None = None) -> bytes:
        """Run ``code`` in the raw REPL; return its stdout, raise ReplError on a traceback."""
        from mpremote.transport import TransportError

        t = self._t
        if t is None:
            raise ReplError(say("{port}: the raw REPL is not open", port=self.port))
        wait = self.timeout if timeout is None else timeout
        try:
            with _nothing():
                if self.fast_write:
                    out, err = self._exec_fast(code.encode(), wait)
                else:
                    out, err = t.exec_raw(code, timeout=math.ceil(wait))
        except (TransportError, OSError) as exc:
            raise ReplError(say("{port}: the board stopped answering the raw REPL ({error}); check the cable and retry",
                                port=self.port, error=str(exc))) from None
        if err:
            text = err.decode(errors="replace")
            last = text.strip().splitlines()[-1] if text.strip() else text
            raise ReplError(say("{port}: the board raised {error}", port=self.port, error=last), text)
        return out

    def _exec_fast(self, command: bytes, timeout: float) -> tuple[bytes, bytes]:
        """Plain raw REPL without mpremote's 10 ms pause per 256 bytes: USB CDC
        has flow control, so the whole command goes in one write."""
        t = self._t
        assert t is not None
        data = t.read_until(1, b">", timeout=math.ceil(timeout))
        if not data.endswith(b">"):
            raise ReplError(say("{port}: no raw REPL prompt", port=self.port))
        t.serial.write(command + b"\x04")
        # Normally "OK" comes first. A board that was slow to leave its
        # program (an emulated one, or one still booting when the Ctrl-C
        # arrived) may print a second raw-REPL banner before it, or the
        # friendly REPL's boot banner late: skip banners and prompts.
        data = t.read_until(2, b"OK", timeout=max(2, math.ceil(timeout)))
        junk = [line for line in data[:-2].replace(b"\r", b"").split(b"\n") if not _is_banner(line)]
        if not data.endswith(b"OK") or junk:
            raise ReplError(f"{self.port}: the raw REPL did not accept the code (answer {data[-80:]!r})")
        return t.follow(timeout)

    def eval(self, expression: str, timeout: float | None = None) -> object:
        """Evaluate on the board and parse the repr with ast.literal_eval."""
        out = self.exec(f"print(repr({expression}))", timeout)
        try:
            return ast.literal_eval(out.decode().strip())
        except (ValueError, SyntaxError) as exc:
            raise ReplError(f"{self.port}: unexpected answer {out[:80]!r} ({exc})") from None

    # --- files ------------------------------------------------------------

    def write_file(self, path: str, data: bytes, progress: Callable[[int], None] | None = None) -> None:
        """Write ``data`` to ``path`` on the board (the caller picks a temporary name)."""
        first = True
        for start in range(0, max(len(data), 1), WRITE_CHUNK):
            chunk = base64.b64encode(data[start : start + WRITE_CHUNK])
            head = f"import binascii\n_f=open({path!r},'wb')\n" if first else f"_f=open({path!r},'ab')\n"
            self.exec(f"{head}_f.write(binascii.a2b_base64({chunk!r}))\n_f.close()\n")
            first = False
            if progress is not None:
                progress(min(len(data), start + WRITE_CHUNK))

    def hashes(self, names: list[str] | None = None) -> tuple[int, dict[str, str]]:
        """(sys.implementation._mpy, {file name in / -> sha256 hex}) in one exec:
        the named files, or every .py/.mpy/.json/.bak/.tmp file when ``names`` is None."""
        wanted = "None" if names is None else repr(sorted(names))
        code = (
            "import os,sys,hashlib,binascii\n"
            "def _h(n):\n"
            " try:\n"
            "  h=hashlib.sha256();f=open('/'+n,'rb')\n"
            "  while 1:\n"
            "   b=f.read(1024)\n"
            "   if not b:break\n"
            "   h.update(b)\n"
            "  f.close();return binascii.hexlify(h.digest()).decode()\n"
            " except OSError:return None\n"
            f"_w={wanted}\n"
            "if _w is None:_w=[n for n in os.listdir('/') if n.split('.')[-1] in ('py','mpy','json','bak','tmp')]\n"
            "_r={}\n"
            "for n in _w:\n"
            " d=_h(n)\n"
            " if d:_r[n]=d\n"
            "print(repr((getattr(sys.implementation,'_mpy',0),_r)))\n"
        )
        out = self.exec(code)
        try:
            mpy, files = ast.literal_eval(out.decode().strip())
        except (ValueError, SyntaxError) as exc:
            raise ReplError(f"{self.port}: unexpected hash listing {out[:80]!r} ({exc})") from None
        return int(mpy), dict(files)

    def hard_reset(self) -> None:
        """machine.reset(): the board restarts and runs main.py (a USB board
        drops off the bus for a moment). The session is closed."""
        t = self._t
        if t is None:
            return
        with contextlib.suppress(Exception):
            data = t.read_until(1, b">", timeout=2)
            if data.endswith(b">"):
                t.serial.write(b"import machine\nmachine.reset()\x04")
        self._t = None
        with contextlib.suppress(Exception):
            t.close()


def _is_banner(line: bytes) -> bool:
    """A line MicroPython prints on its own (boot and REPL banners, prompts),
    never an answer to the code sent."""
    text = line.strip().lstrip(b">").strip()
    return (
        not text
        or text.startswith(b"raw REPL; CTRL-B to exit")
        or text.startswith(b"MicroPython ")
        or text.startswith(b'Type "help()" for more information')
    )
