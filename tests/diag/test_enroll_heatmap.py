"""Enrolment (against a scripted board), heatmaps, and the tags commands."""

from __future__ import annotations

import json
import zlib

from typer.testing import CliRunner

from tablesense.cli import app
from tablesense.diag import heatmap
from tablesense.diag.core import CellResult
from tablesense.diag.enroll import Enroller
from tablesense.flash.client import Identity
from tablesense.table.tags import TagRegistry


class ScriptedBoard:
    """Answers snapshot() from a script of cell states, one per call."""

    def __init__(self, script: list[object]) -> None:
        self.script = list(script)
        self.frames: list[list[tuple[int, int, int]]] = []

    def hello(self, timeout: float | None = None, retries: int = 2) -> Identity:
        return Identity(1, 1, b"\x01" * 8, "1.0.0", 1, 4, 1, b"\0\0\0\0")

    def snapshot(self) -> list[object]:
        return [self.script.pop(0) if len(self.script) > 1 else self.script[0]]

    def leds(self, colors: list[tuple[int, int, int]]) -> None:
        self.frames.append(colors)


A, B, RANDOM = bytes.fromhex("04a1b2c3d4e5f6"), bytes.fromhex("04112233445566"), bytes.fromhex("08aabbcc")


def test_enroll_confirms_refuses_duplicates_and_random_uids(tmp_path) -> None:
    reg = TagRegistry()
    path = tmp_path / "tags.json"
    flicker = [None, A, None, A, A, A, A]  # settles only after 4 equal reads
    # per piece: the "cell is free" check, the reads, then the "taken off" check
    script = [None, *flicker, None, None, A, A, A, A, None, None, RANDOM, RANDOM, RANDOM, RANDOM, None,
              None, B, B, B, B, None]
    board = ScriptedBoard(script)
    said: list[str] = []
    steps = Enroller(board, reg, path, 0, 0, interval=0, timeout=5, say=said.append).run(["0-0", "0-1"])  # type: ignore[arg-type]
    assert [s.outcome for s in steps] == ["enrolled", "refused", "refused", "enrolled"]
    assert "already enrolled as 0-0" in steps[1].message
    assert "random UID" in steps[2].message
    assert str(reg.piece(A)) == "0-0" and str(reg.piece(B)) == "0-1"
    saved = json.loads(path.read_text())
    assert saved["tags"] == {A.hex(): "0-0", B.hex(): "0-1"}
    assert board.frames[-1] == [(0, 0, 0)] * 4  # LEDs off at the end


def test_heatmaps() -> None:
    cells = [CellResult("a", 0, reads=20, good=20), CellResult("b", 1, reads=20, good=10), CellResult("c", 2)]
    svg = heatmap.svg(cells)
    assert svg.startswith("<svg") and "100%" in svg and "50%" in svg and "n/a" in svg
    png = heatmap.png(cells)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    idat = png.index(b"IDAT")
    length = int.from_bytes(png[idat - 4 : idat], "big")
    raw = zlib.decompress(png[idat + 4 : idat + 4 + length])
    assert bytes(heatmap.color(1.0)) in raw and bytes(heatmap.color(0.5)) in raw
    assert heatmap.color(1.0)[1] > heatmap.color(1.0)[0]  # green
    assert heatmap.color(0.5)[0] > heatmap.color(0.5)[1]  # red


def test_tags_export_import_check(tmp_path) -> None:
    runner = CliRunner()
    reg = TagRegistry()
    reg.add(A, "0-0")
    path = tmp_path / "r.json"
    reg.save(path)
    res = runner.invoke(app, ["tags", "check", "--registry", str(path), "--set", "tiles"])
    assert res.exit_code == 1 and "27 missing" in res.output
    csv = tmp_path / "x.csv"
    assert runner.invoke(app, ["tags", "export", "--registry", str(path), "--out", str(csv)]).exit_code == 0
    assert csv.read_text().splitlines()[1] == f"{A.hex()},0-0"
    other = tmp_path / "o.csv"
    other.write_text(f"uid,piece\n{B.hex()},0-0\n")
    res = runner.invoke(app, ["tags", "import", str(other), "--registry", str(path)])
    assert res.exit_code == 1 and "already enrolled" in res.output
    other.write_text(f"uid,piece\n{B.hex()},0-1\n")
    assert runner.invoke(app, ["tags", "import", str(other), "--registry", str(path)]).exit_code == 0
    assert str(TagRegistry.load(path).piece(B)) == "0-1"
