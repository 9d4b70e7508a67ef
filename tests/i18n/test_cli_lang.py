"""Every command speaks the reader's language (issue 18, the command line).

``--lang`` (or ``tablesense --lang``, or the locale) chooses the language of
what ``flash``, ``boards list``, ``diag``, ``tags``, ``sim boards`` and the
tournament commands print. In the pseudo-locale ``qps`` every translated
string comes out bracketed (⟦…⟧), so a word left outside the brackets that is
not data (a path, a name, a number) is a message nobody marked: each run
below fails on it. pt-BR and ms runs check real translations arrive.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablesense.cli import app
from tablesense.i18n import Translator
from testsupport import REPO, need

runner = CliRunner()


def _bare_words(text: str, data: tuple[str, ...] = ()) -> list[str]:
    """Words of three letters or more outside every ⟦…⟧ and outside ``data``."""
    for d in sorted(data, key=len, reverse=True):
        text = text.replace(d, " ")
    previous = None
    while previous != text:  # innermost brackets first: sentences nest
        previous = text
        text = re.sub(r"⟦[^⟦⟧]*⟧", " ", text)
    return re.findall(r"[A-Za-z]{3,}", text)


def _run(*args: str) -> tuple[int, str]:
    r = runner.invoke(app, list(args))
    return r.exit_code, r.stdout + r.stderr


COMMANDS = [
    ["boards", "list"],
    ["flash"],
    ["diag"],
    ["tags", "check", "--registry", "virtual"],
    ["sim", "boards"],
    ["rules", "replay", "-"],
    ["tournament", "pair", "--db", "sqlite:///{tmp}/ev.db"],
    ["tournament", "club", "players", "--db", "sqlite:///{tmp}/ev.db"],
    ["play", "--table", "dominoes-4"],
    ["demo", "--no-web"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_language_without_a_catalog_stops_every_command_with_status_2(command: list[str], tmp_path: Path) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    code, out = _run(*args, "--lang", "de")
    assert code == 2, out
    assert "no translation for 'de': choose one of en, pt-BR, ms" in out
    assert not (tmp_path / "ev.db").exists()  # refused before doing anything
    code, out = _run("--lang", "xx", *args)
    assert code == 2 and "choose one of en, pt-BR, ms" in out


def test_root_option_the_command_option_and_the_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "tiles lengkap" in _run("--lang", "ms", "tags", "check", "--registry", "virtual")[1]
    # the command's own --lang wins over the root's
    assert "tiles completo" in _run("--lang", "ms", "tags", "check", "--registry", "virtual", "--lang", "pt-BR")[1]
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "pt_BR.UTF-8")
    assert "tiles completo" in _run("tags", "check", "--registry", "virtual")[1]
    monkeypatch.setenv("LANG", "de_DE.UTF-8")  # a locale we lack: English, not an error
    assert "tiles complete" in _run("tags", "check", "--registry", "virtual")[1]


def test_tags_in_every_language(tmp_path: Path) -> None:
    reg = tmp_path / "reg.json"
    csv = tmp_path / "tags.csv"
    assert _run("tags", "export", "--registry", "virtual", "--out", str(csv))[0] == 0
    data = (str(reg), str(csv), str(tmp_path), "tiles", "cards32", "cards52", "uid", "piece")
    outs = {}
    for lang in ("qps", "pt-BR", "ms"):
        reg.unlink(missing_ok=True)
        runs = [
            _run("tags", "check", "--registry", str(reg), "--set", "tiles", "--lang", lang),  # no file: exit 2
            _run("tags", "import", str(csv), "--registry", str(reg), "--lang", lang),
            _run("tags", "check", "--registry", str(reg), "--set", "tiles", "--lang", lang),
            _run("tags", "check", "--registry", str(reg), "--set", "chess", "--lang", lang),
            _run("tags", "check", "--registry", "virtual:x", "--lang", lang),
        ]
        assert [c for c, _ in runs] == [2, 0, 0, 2, 2], runs
        # the first run ends with what the OS says (`No such file or directory`, English): the rest are ours
        outs[lang] = "\n".join(o for _, o in runs[1:])
    assert not _bare_words(outs["qps"], data), outs["qps"]
    assert "etiqueta(s) importada(s)" in outs["pt-BR"] and "completo" in outs["pt-BR"]
    assert "diimport" in outs["ms"] and "lengkap" in outs["ms"] and "set tidak dikenali" in outs["ms"]


def test_missing_pieces_are_counted_in_the_reader_language(tmp_path: Path) -> None:
    reg, csv = tmp_path / "reg.json", tmp_path / "some.csv"
    assert _run("tags", "export", "--registry", "virtual", "--out", str(csv))[0] == 0
    csv.write_text("\n".join(csv.read_text().splitlines()[:3]) + "\n")  # the header and two tiles
    assert _run("tags", "import", str(csv), "--registry", str(reg))[0] == 0
    code, out = _run("tags", "check", "--registry", str(reg), "--set", "tiles", "--lang", "pt-BR")
    assert code == 1 and out.startswith("faltam 26 em tiles:"), out
    code, out = _run("tags", "check", "--registry", str(reg), "--set", "tiles", "--lang", "ms")
    assert code == 1 and out.startswith("26 tiada dalam tiles:"), out


def test_flash_and_boards_list_without_a_board() -> None:
    for lang, words in (("pt-BR", "Nenhuma placa encontrada"), ("ms", "Tiada papan ditemui")):
        code, out = _run("boards", "list", "--no-handshake", "--lang", lang)
        assert code == 0 and words in out.replace("\n", " ")
    for args in (["boards", "list", "--no-handshake"], ["flash"], ["flash", "--check"], ["flash", "--all"]):
        code, out = _run(*args, "--lang", "qps")
        assert code in (0, 2) and "⟦" in out
        assert not _bare_words(out, ("tablesense", "boards list", "--port", "--all", "--table", "--micropython",
                                     "--check", "BOOTSEL", "PATH", "FILE", "uf2")), out


@pytest.fixture(scope="module")
def virtual_board():
    """The first board of the virtual dominoes table (the real firmware on a pty)."""
    from tablesense.sim.virtual_table import VirtualTable
    from tablesense.table.geometry import TableGeometry

    vt = VirtualTable(TableGeometry.load("dominoes-4"), seed=0)
    paths = vt.start()
    yield paths[min(paths)]
    vt.stop()


DIAG = ("--table", "dominoes-4", "--no-runtime", "--pings", "5")


def test_diag_on_a_virtual_board_in_the_pseudo_locale(virtual_board: str) -> None:
    code, out = _run("diag", "--port", virtual_board, *DIAG, "--lang", "qps")
    assert code == 0, out
    assert out.count("⟦") > 15
    # data only outside the brackets: the port, versions, hashes, numbers, units
    leftover = _bare_words(out, (virtual_board,))
    assert set(leftover) <= {"dev", "pts"}, leftover


@pytest.mark.parametrize(("lang", "words"), [
    ("pt-BR", ("verificação", "apresentação", "leitores", "todas as verificações passaram", "casas leem sem erros")),
    ("ms", ("semakan", "jabat tangan", "pembaca", "semua semakan lulus", "sel dibaca dengan bersih")),
])
def test_diag_speaks_portuguese_and_malay_and_json_stays_english(virtual_board: str, lang: str, words) -> None:
    code, out = _run("diag", "--port", virtual_board, *DIAG, "--lang", lang)
    assert code == 0, out
    flat = " ".join(out.split())
    for w in words:
        assert w in flat, (w, out)
    code, out = _run("diag", "--port", virtual_board, *DIAG, "--json", "--lang", lang)
    report = json.loads(out[out.index("{"):])
    checks = report["boards"][0]["checks"]
    assert {c["name"] for c in checks} >= {"handshake", "readers", "cells", "link"}
    from tablesense.table.geometry import TableGeometry

    readers = len(TableGeometry.load("dominoes-4").cells_of_board(1))  # board 1: line-west
    assert any(c["detail"].startswith(f"all {readers} readers answer") for c in checks)  # JSON: English for scripts


def test_sim_boards_in_the_pseudo_locale(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tablesense.cli", "sim", "boards", "--table", "kems-6", "--no-tabletop",
         "--link-dir", str(tmp_path), "--lang", "qps"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    try:
        assert proc.stdout is not None
        from tablesense.table.geometry import TableGeometry

        paths = [proc.stdout.readline().strip() for _ in TableGeometry.load("kems-6").boards]
        assert all(p.startswith("/dev/pts/") for p in paths)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "⟦" in err and err.count("⟦") >= 4
    assert not _bare_words(err, (*paths, str(tmp_path), "Ctrl")), err


def test_tournament_commands_in_the_pseudo_locale_and_in_portuguese(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'ev.db'}"
    assert _run("tournament", "create", "Open", "--db", db, "--format", "round-robin", "-o", "target=150")[0] == 0
    names = [f"Team{i}" for i in range(4)]
    for n in names:
        assert _run("tournament", "register", n, "--db", db, "--member", n + "a", "--member", n + "b")[0] == 0
    keys = tmp_path / "keys"
    data = (*names, str(tmp_path), str(keys), db, "table-1.key", "reason", "Open")
    runs = {}
    for lang in ("qps", "pt-BR"):
        runs[lang] = [
            _run("tournament", "add-table", str(1 if lang == "qps" else 2), "--db", db, "--key-dir", str(keys),
                 "--lang", lang),
            _run("tournament", "pair", "--db", db, "--lang", lang) if lang == "qps" else (0, ""),
            _run("tournament", "confirm", "--db", db, "--all", "--lang", lang),
            _run("tournament", "correct", "1", "--score", "150-x", "--reason", "r", "--db", db, "--lang", lang),
            _run("tournament", "confirm", "--db", db, "--lang", lang),
            _run("tournament", "club", "ratings", "--family", "chess", "--db", db, "--lang", lang),
            _run("tournament", "export", "--db", db, "--csv", "nope", "--lang", lang),
        ]
        assert [c for c, _ in runs[lang]] == [0, 0, 0, 2, 2, 2, 2], runs[lang]
    qps = "\n".join(o for _, o in runs["qps"])
    public_key = re.findall(r"[A-Za-z0-9_\-]{40,}", qps)
    assert not _bare_words(qps, (*data, *public_key, "--score", "--all", "--csv", "--family", "standings", "results",
                                 "dominoes-pairs", "dominoes-individual", "kems", "chess", "nope")), qps
    pt = "\n".join(o for _, o in runs["pt-BR"])
    for w in ("chave privada", "nenhum resultado informado a confirmar", "não é um placar", "erro:",
              "família desconhecida 'chess'", "--csv aceita standings ou results"):
        assert w in pt, (w, pt)
    code, out = _run("tournament", "standings", "--db", db, "--lang", "ms")
    assert code == 0 and Translator("ms")("Standings") in out and "Standings" not in out


def test_console_output_lines_in_the_table_language() -> None:
    from tablesense.outputs.console import describe
    from tablesense.outputs.events import TableEvent

    events = [
        TableEvent("correction_cleared", {"reason": "x"}, 0, 0.0),
        TableEvent("board_status", {"board": 2, "online": False}, 0, 0.0),
        TableEvent("hand_started", {"hand_no": 1}, 0, 0.0),
        TableEvent("hand_ended", {"hand_no": 1, "result": {"outcome": "domino"}, "score": "10-0"}, 0, 0.0),
        TableEvent("match_ended", {"winner": None, "score": "10-0"}, 0, 0.0),
        TableEvent("suggestion", {"seat": 0, "kind": "play"}, 0, 0.0),
        TableEvent("call", {"seat": 1, "call": "kems", "target": 2}, 0, 0.0),
        TableEvent("match_started", {"game": "dominoes", "variant": "pairs-pips"}, 0, 0.0),
    ]
    for ev in events:
        assert describe(ev, "qps").startswith("⟦"), describe(ev, "en")
    assert describe(events[1], "pt-BR") == "placa 2 DESCONECTADA"
    assert describe(events[6], "en") == "seat 2 calls kems on seat 3"  # seats counted from 1
    assert describe(events[6], "ms") == "tempat 2 memanggil kems terhadap tempat 3"


def test_director_answers_at_the_table_in_its_language() -> None:
    from tablesense.i18n.cli import activate, active
    from tablesense.referee.reporting import director_says

    before = active()
    try:
        activate("pt-BR")
        assert director_says("confirmação", "accepted") == "diretor: confirmação aceito"
        assert director_says("resultado", None) == "diretor: resultado ainda sem confirmação de recebimento"
        activate("ms")
        assert director_says("pengesahan", "refused") == "pengarah: pengesahan ditolak"
    finally:
        activate(before)


def test_flash_on_a_virtual_micropython_board_in_portuguese_then_pseudo() -> None:
    from tablesense.sim import mpboard

    need(mpboard.available() is None, f"virtual MicroPython board: {mpboard.available()}")
    with mpboard.MicroPythonBoard() as board:
        path = board.start()
        code, out = _run("flash", "--port", path, "--lang", "pt-BR")
        assert code == 0, out
        assert "firmware" in out and ("instalado" in out or "em dia" in out), out
        code, out = _run("flash", "--port", path, "--lang", "qps")
        assert code == 0, out
        # the result line: the port, then the bracketed sentence; the progress bar's stage bracketed too
        line = next(x for x in out.splitlines() if x.startswith(path + ":"))
        assert line.split(": ", 1)[1].startswith("⟦"), line


def test_tournament_simulate_progress_in_the_pseudo_locale(tmp_path: Path) -> None:
    from tablesense.tournament.mosquitto import mosquitto_binary

    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    r = runner.invoke(app, ["tournament", "simulate", "--entrants", "4", "--rounds", "1", "--tables", "2",
                            "--target", "25", "--confirm", "director", "--db", f"sqlite:///{tmp_path / 's.db'}",
                            "--lang", "qps"])
    assert r.exit_code == 0, r.output
    assert r.stderr.count("⟦") >= 3, r.stderr  # round paired, then the director confirms each match
    assert not _bare_words(r.stderr), r.stderr
    r = runner.invoke(app, ["tournament", "simulate", "--club", "4", "--evenings", "1", "--rounds", "1",
                            "--db", f"sqlite:///{tmp_path / 'c.db'}", "--lang", "pt-BR"])
    assert r.exit_code == 0, r.output
    assert re.match(r"noite 1: \d+ inscritos, 1 rodadas; líder da temporada", r.stderr), r.stderr


def test_diag_gpio_checks_count_seats_from_1_and_name_them_in_the_reader_language(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tablesense.diag.core import check_seat_gpio
    from tablesense.i18n import translate
    from tablesense.table.geometry import TableGeometry

    monkeypatch.setenv("TABLESENSE_GPIO", "sim")
    checks = check_seat_gpio(TableGeometry.load("dominoes-4"))
    names = [c.name for c in checks]
    assert names[0] == "seat 1 (South) turn LED" and "seat 4 (West) call button" in names
    assert not any(n.startswith("seat 0") for n in names)
    assert translate(names[0], "pt-BR") == "LED de vez do lugar 1 (Sul)"
    assert translate(names[1], "ms") == "butang tempat 1 (Selatan)"


def test_a_damaged_uf2_is_explained_in_the_reader_language(tmp_path: Path) -> None:
    bad = tmp_path / "half.uf2"
    bad.write_bytes(b"\0" * 700)
    code, out = _run("flash", "--micropython", str(bad), "--check", "--lang", "pt-BR")
    assert code == 2 and "não é múltiplo de 512: está truncado ou não é um arquivo UF2" in " ".join(out.split()), out
    code, out = _run("flash", "--micropython", str(bad), "--check", "--lang", "ms")
    assert code == 2 and "bukan gandaan 512" in " ".join(out.split()), out
    code, out = _run("flash", "--micropython", str(bad), "--check", "--lang", "en")
    assert code == 2 and "is 700 bytes, not a multiple of 512: it is truncated or not a UF2 file" in " ".join(out.split())
    bad.write_bytes(b"\0" * 512)
    code, out = _run("flash", "--micropython", str(bad), "--check", "--lang", "qps")
    assert code == 2 and not _bare_words(out, (str(bad), "UF2")), out


def test_boards_list_names_the_state_in_the_reader_language_and_json_in_english(virtual_board: str) -> None:
    r = runner.invoke(app, ["boards", "list", "--port", virtual_board, "--lang", "pt-BR"], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "firmware do tablesense" in r.stdout and "Placas" in r.stdout, r.stdout
    r = runner.invoke(app, ["boards", "list", "--port", virtual_board, "--lang", "ms", "--json"])
    states = [b["state"] for b in json.loads(r.stdout)]
    assert "tablesense firmware" in states
