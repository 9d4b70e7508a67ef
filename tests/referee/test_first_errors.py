"""Issue 31: the first errors a new user meets are answered with a sentence
and the command that helps.

A busy display port names a free one (never uvicorn's ``[Errno 98]``, never
a page served elsewhere without a word); ``--variant foo`` is a usage error
(exit 2) like every other bad option; a value that is not a number is
answered in words, not the validator's; ``play --help`` and ``demo --help``
read at 80 columns (one line per option and its value's name, no ``<bool>``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest
from test_play_cli import run

from tablesense.table.geometry import TableGeometry


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port another program listens on while the test runs."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield int(other.getsockname()[1])


def test_a_busy_demo_port_names_a_free_one_and_serves_nowhere(held_port: int) -> None:
    done = run("demo", "--port", str(held_port), "--hands", "1", "--seed", "3")
    assert done.returncode == 1, done.stderr
    err = " ".join(done.stderr.split())
    assert f"port {held_port} is in use by another program" in err
    assert "Errno" not in done.stderr and "Traceback" not in done.stderr
    suggested = err.split("choose another port: ")[1].split(" (")[0]
    assert suggested.startswith("tablesense demo --port ") and suggested.endswith("--hands 1 --seed 3")
    port = int(suggested.split("--port ")[1].split()[0])
    assert port != held_port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:  # the suggested port is free
        probe.bind(("127.0.0.1", port))
    assert "display page:" not in done.stderr  # not served elsewhere


def test_a_busy_play_web_port_is_refused_with_its_own_option(held_port: int, tmp_path: object) -> None:
    done = run(
        "play", "--table", "dominoes-4", "--journal", f"{tmp_path}/j.sqlite", "--no-keys",
        "--host", "127.0.0.1", "--web-port", str(held_port), "--ports", "/dev/null",
    )
    assert done.returncode == 1, done.stderr
    err = " ".join(done.stderr.split())
    assert f"port {held_port} is in use by another program" in err
    assert "--web-port " in err.split("choose another port: ")[1]
    assert "Errno" not in done.stderr and "display:" not in done.stderr


def test_an_unknown_variant_is_a_usage_error() -> None:
    for game in ("dominoes", "kems"):
        done = run("demo", "--game", game, "--variant", "foo", "--no-web", "--hands", "1")
        assert done.returncode == 2, done.stderr
        assert f"unknown {game} variant 'foo': use " in done.stderr
        assert "cannot set up" not in done.stderr


@pytest.mark.parametrize(
    ("args", "sentence"),
    [
        (("demo", "--speed", "fast"), "'fast' is not a number (for example: --speed 1.5)"),
        (("demo", "--hands", "two"), "'two' is not a whole number (for example: --hands 3)"),
        (("play", "--table", "dominoes-4", "--web-port", "web"), "'web' is not a whole number"),
    ],
)
def test_a_word_where_a_number_goes_gets_a_sentence(args: tuple[str, ...], sentence: str) -> None:
    done = run(*args)
    assert done.returncode == 2, done.stderr
    assert sentence in " ".join(done.stderr.replace("│", " ").split())
    assert "Input should be" not in done.stderr and "unable to parse" not in done.stderr


@pytest.mark.parametrize("command", ["play", "demo"])
def test_help_reads_at_80_columns(command: str) -> None:
    done = run(command, "--help", columns=80)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) < 90  # was 162 for play in Rich's six-column table
    assert all(len(line) <= 80 for line in lines)
    assert "<bool>" not in done.stdout and "<str>" not in done.stdout and "<int" not in done.stdout
    assert "--web / --no-web" in done.stdout
    # the sentences have at least 40 columns beside their options, not three words' width
    help_line = next(line for line in lines if line.lstrip().startswith("--seed"))
    assert help_line.index("Seed") < 40


def test_sim_boards_help_reads_at_80_columns() -> None:
    """The newcomer's second command (README: ``sim boards``) reads as ``play`` does."""
    done = run("sim", "boards", "--help", columns=80)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) < 70  # was 125 in Rich's table
    assert all(len(line) <= 80 for line in lines)
    assert "<bool>" not in done.stdout and "<str>" not in done.stdout and "<int" not in done.stdout
    assert "--tabletop / --no-tabletop" in done.stdout and "--web-port PORT" in done.stdout
    help_line = next(line for line in lines if line.lstrip().startswith("--seed"))
    assert help_line.index("Seed") < 40


#: The boards of dominoes-4 as the messages list them ("1, 2, 3, 4, 5, 6").
BOARDS = ", ".join(str(b.id) for b in TableGeometry.load("dominoes-4").boards)


def _play_until(journal: str, wanted: str, *extra: str) -> str:
    """Start ``play`` without boards, read its stderr until ``wanted`` shows
    (or 60 s), stop it with Ctrl-C; returns what it printed."""
    import signal
    import threading

    env = {**os.environ, "COLUMNS": "250", "TABLESENSE_GPIO": "sim"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tablesense.cli", "play", "--table", "dominoes-4", "--journal", journal,
         "--no-web", "--no-keys", *extra],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )
    seen: list[str] = []
    found = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            if wanted in " ".join("".join(seen).split()):
                found.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        found.wait(60)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(5)
    return " ".join("".join(seen).split())


def test_play_without_boards_says_how_to_try_and_is_not_resumed(tmp_path: object) -> None:
    from tablesense.journal.store import Journal

    journal = f"{tmp_path}/j.sqlite"
    first = _play_until(journal, f"boards {BOARDS} are offline")
    assert "no boards found on USB yet" in first
    assert "tablesense sim boards --table dominoes-4 in another terminal" in first
    second = _play_until(journal, f"boards {BOARDS} are offline", "--seats", "Ana,Bia,Caio,Duda")
    assert "resuming match" not in second and "holds an unfinished match" not in second
    with Journal(journal) as j:
        rows = j.matches()
        assert [row.status for row in rows].count("running") == 1
        running = j.running()
        assert running is not None and running.spec["seat_names"] == ["Ana", "Bia", "Caio", "Duda"]


def test_a_virtual_board_is_never_told_about_a_usb_cable(tmp_path: object) -> None:
    """A pseudo-terminal's board that does not answer (``sim boards`` was
    stopped) is asked about ``sim boards``."""
    import pty

    leader, follower = pty.openpty()
    try:
        said = _play_until(f"{tmp_path}/j.sqlite", "not answering", "--port", os.ttyname(follower))
    finally:
        os.close(leader)
        os.close(follower)
    assert f"virtual boards {BOARDS} are not answering" in said
    assert "is tablesense sim boards still running in its terminal?" in said
    assert "USB" not in said


def test_the_demos_own_virtual_boards_are_not_sent_to_a_cable_or_a_terminal() -> None:
    from tablekit import Hands, kinds, make_referee

    ref, events, _ = make_referee()
    ref.boards_kind = "built-in"
    h = Hands(ref)
    h.settle()
    h.offline = (2,)
    h.show(0.05)
    text = kinds(events, "view")[-1]["message"]["text"]
    assert text.startswith("virtual board 2 is not answering: play is paused and resumes by itself")
    assert "USB" not in text and "sim boards" not in text


def test_rules_replay_on_a_terminal_tells_a_refusal_once(tmp_path: object) -> None:
    """stdout and stderr on one terminal: the sentence appears once (the
    summary); piped, the result object still carries it."""
    import pty

    record = f"{tmp_path}/bad.json"
    with open(record, "w") as f:
        f.write('{"format": "x"}')
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tablesense.cli", "rules", "replay", record],
            stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, timeout=60,
            env={**os.environ, "COLUMNS": "250"},
        )
        os.close(follower)
        chunks: list[bytes] = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    shown = b"".join(chunks).decode()
    assert done.returncode == 2
    assert shown.count("missing fields") == 1, shown
    assert "not a valid record" in shown
    piped = run("rules", "replay", record)
    assert piped.returncode == 2 and '"ok": false' in piped.stdout and "missing fields" in piped.stderr


def test_speech_says_that_it_speaks(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``--speech`` prints a sign before its first word (a muted speaker
    would otherwise give none); the voice itself is stood in for."""
    import tablesense.outputs.speech as speech
    from tablesense.i18n.cli import activate
    from tablesense.referee import options

    class QuietVoice:
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

    monkeypatch.setattr(speech, "EspeakVoice", QuietVoice)
    activate("pt-BR")
    try:
        announcer = options.announcer("pt-BR", True, 70, "22:00-08:00")
    finally:
        activate("en")
    announcer.close()
    said = " ".join(capsys.readouterr().err.split())
    assert said == "a mesa fala em voz alta em pt-BR no volume 70 (espeak-ng), exceto 22:00-08:00"
