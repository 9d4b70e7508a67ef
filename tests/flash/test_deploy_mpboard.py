"""Deploy end to end on the virtual MicroPython board (WebAssembly MicroPython
under Node.js on a pty), with the real mpremote underneath."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tablesense.flash import deploy as dp
from tablesense.flash.client import BoardClient
from tablesense.flash.repl import ReplError, ReplSession
from tablesense.sim import mpboard
from testsupport import REPO, need

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def payload() -> dp.Payload:
    return dp.build_payload(fallback_config=dp.bench_config())


@pytest.fixture()
def board():
    need(mpboard.available() is None, f"virtual MicroPython board: {mpboard.available()}")
    b = mpboard.MicroPythonBoard()
    b.start()
    yield b
    b.stop()


def _fw_copy(tmp_path: Path, edit: str | None = None, target: str = "leds.py") -> Path:
    d = tmp_path / "fw"
    shutil.copytree(dp.FIRMWARE_DIR, d, ignore=shutil.ignore_patterns(".*", "__pycache__"))
    if edit is not None:
        p = d / target
        p.write_text(p.read_text() + edit)
    return d


def test_full_then_nochange_then_one_file(board, payload, tmp_path) -> None:
    r1 = dp.deploy(board.path, payload)
    assert r1.action == "deployed"
    assert "main.py" in r1.uploaded and "board.mpy" in r1.uploaded and "config.json" in r1.uploaded
    assert r1.identity is not None and r1.identity.fw_version == payload.fw_version
    r2 = dp.deploy(board.path, payload)
    assert r2.action == "up-to-date" and r2.uploaded == []
    changed = dp.build_payload(_fw_copy(tmp_path, "\n# changed\n"), fallback_config=dp.bench_config())
    r3 = dp.deploy(board.path, changed)
    assert r3.action == "deployed"
    assert r3.uploaded == ["leds.mpy"]
    with BoardClient(board.path) as c:
        files = c.files()
    assert files["leds.mpy"] == bytes.fromhex(next(f.sha256 for f in changed.compiled if f.name == "leds.mpy"))[:8]


def test_table_config_is_written_and_confirmed(board, payload) -> None:
    from tablesense.table.geometry import TableGeometry

    g = TableGeometry.load(REPO / "hardware" / "tables" / "dominoes-4.toml")
    p = payload.with_config(g.board_config(2))
    r = dp.deploy(board.path, p)
    assert r.identity is not None
    assert r.identity.board == 2 and r.identity.config_hash == p.config_hash
    assert r.identity.cells == g.board(2).channels


def test_board_without_soft_reset(payload) -> None:
    need(mpboard.available() is None, f"virtual MicroPython board: {mpboard.available()}")
    with mpboard.MicroPythonBoard(soft_reset=False) as b:
        path = b.start()
        assert dp.deploy(path, payload).action == "deployed"
        assert dp.deploy(path, payload).action == "up-to-date"


def test_broken_firmware_is_rolled_back(board, payload, tmp_path) -> None:
    dp.deploy(board.path, payload)
    broken = dp.build_payload(_fw_copy(tmp_path, "\nraise ImportError('boom')\n", "leds.py"),
                              fallback_config=dp.bench_config())
    with pytest.raises(dp.DeployError) as info:
        dp.deploy(board.path, broken, confirm_timeout=6)
    assert info.value.previous_running
    assert "previous files were put back" in str(info.value)
    with BoardClient(board.path) as c:
        assert c.hello().fw_version == payload.fw_version
        files = c.files()
    good = next(f for f in payload.compiled if f.name == "leds.mpy")
    assert files["leds.mpy"] == bytes.fromhex(good.sha256)[:8]


class _CutCable(ReplSession):
    """A session whose cable is cut after the first file chunk."""

    writes = 0

    def write_file(self, path, data, progress=None):
        type(self).writes += 1
        if type(self).writes > 1:
            raise ReplError("cable cut")
        super().write_file(path, data, progress)


def test_cut_cable_during_upload_changes_nothing(board, payload, tmp_path) -> None:
    dp.deploy(board.path, payload)
    changed = dp.build_payload(_fw_copy(tmp_path, "\n# v2\n", "board.py"), fallback_config=dp.bench_config())
    changed = dp.Payload("9.9.9", changed.compiled, changed.source, None, changed.fallback_config)
    with pytest.raises(dp.DeployError) as info:
        dp.deploy(board.path, changed, session_factory=_CutCable)
    assert info.value.previous_running
    with BoardClient(board.path) as c:
        assert c.hello().fw_version == payload.fw_version
    with ReplSession(board.path) as s:
        _mpy, names = s.hashes()
        s.hard_reset()
    assert not [n for n in names if n.endswith(".tmp")]


def test_cli_sim_flash_diag(tmp_path) -> None:
    need(mpboard.available() is None, f"virtual MicroPython board: {mpboard.available()}")
    exe = [sys.executable, "-m", "tablesense.cli"]
    sim = subprocess.Popen([*exe, "sim", "boards", "--micropython", "--count", "2"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    try:
        assert sim.stdout is not None
        paths = [sim.stdout.readline().strip() for _ in range(2)]
        assert all(p.startswith("/dev/") for p in paths) and paths[0] != paths[1]
        out = subprocess.run([*exe, "flash", "--port", paths[0], "--port", paths[1], "--json"],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        res = json.loads(out.stdout)
        assert [r["action"] for r in res["results"]] == ["deployed", "deployed"]
        diag = subprocess.run([*exe, "diag", "--port", paths[0], "--json"], capture_output=True, text=True, timeout=60)
        assert diag.returncode == 0, diag.stdout + diag.stderr
        report = json.loads(diag.stdout)
        assert report["ok"] is True
        names = {c["name"]: c["ok"] for c in report["boards"][0]["checks"]}
        assert names["handshake"] and names["readers"] and names["link"]
        assert report["boards"][0]["link"]["lost"] == 0
    finally:
        sim.terminate()
        sim.wait(timeout=10)
    assert sim.returncode == 0


def test_diag_on_a_board_without_firmware_fails_with_the_fix(board) -> None:
    out = subprocess.run([sys.executable, "-m", "tablesense.cli", "diag", "--port", board.path, "--json", "--pings", "2"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    report = json.loads(out.stdout)
    check = report["boards"][0]["checks"][0]
    assert check["ok"] is False and "tablesense flash --port" in check["fix"]
