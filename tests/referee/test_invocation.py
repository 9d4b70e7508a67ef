"""The commands the demo prints can be typed as printed (issue 15: a newcomer
follows one printed line): `tablesense` by name when it is on the PATH, else
the path it was started by (`bash scripts/demo.sh` runs `.venv/bin/tablesense`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tablesense.referee.options import invocation as _invocation


def _exe(folder: Path) -> Path:
    exe = folder / "tablesense"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    return exe


def test_not_on_the_path_the_printed_command_is_the_path_it_was_started_by(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    exe = _exe(bin_dir)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(exe), "demo"])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert _invocation() == os.path.join(".venv", "bin", "tablesense")


def test_on_the_path_it_is_just_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = _exe(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(exe), "demo"])
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}/usr/bin")
    assert _invocation() == "tablesense"


def test_started_some_other_way_it_says_tablesense(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["/usr/lib/python3/site-packages/pytest/__main__.py"])
    assert _invocation() == "tablesense"
