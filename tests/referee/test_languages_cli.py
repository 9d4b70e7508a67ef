"""``play``/``demo`` options of the table's language and voice (issue 18):
a clear message and a documented exit code for each bad input, and a resumed
demo keeps the language it was started in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from tablesense.referee.cli import register
from tablesense.referee.demo import DemoConfig, run_demo

runner = CliRunner()
app = typer.Typer()
register(app)


@app.callback()
def _root() -> None:
    """A root like tablesense's, with only this room's commands."""


def _demo(*args: str, env: dict[str, str] | None = None) -> Any:
    return runner.invoke(app, ["demo", "--no-web", "--hands", "1", "--link", "direct", *args], env=env)


def test_unknown_language_is_refused_with_exit_2() -> None:
    res = _demo("--lang", "de")
    assert res.exit_code == 2
    assert "no translation for 'de'" in res.output and "pt-BR" in res.output


def test_bad_quiet_hours_exit_2() -> None:
    res = _demo("--speech", "--quiet-hours", "22-8")
    assert res.exit_code == 2
    assert "HH:MM-HH:MM" in res.output


def test_speech_without_espeak_exits_3_with_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name, *a, **k: None)
    res = _demo("--speech", "--lang", "pt-BR")
    assert res.exit_code == 3
    assert "apt-get install espeak-ng" in res.output


def test_a_resumed_demo_keeps_its_language(tmp_path: Path) -> None:
    """Started in Malay, stopped after a hand (the match still running in the
    journal); resumed with another --lang, it still speaks Malay: the journal
    keeps the table's language."""
    journal = str(tmp_path / "j.sqlite")
    texts: list[str] = []

    def record(bus: Any) -> None:
        bus.add_listener(lambda ev: texts.append(str(ev.data.get("text") or "")))

    first = DemoConfig(hands=1, seed=3, web=False, link="direct", timeout=60, lang="ms",
                       journal=journal)
    assert not run_demo(first).match_over
    again = DemoConfig(hands=1, seed=3, web=False, link="direct", timeout=60, lang="pt-BR",
                       journal=journal)
    run_demo(again, on_bus=record)
    said = " ".join(texts)
    assert "disambung dari jurnal" in said and "retomada" not in said, said[:300]
