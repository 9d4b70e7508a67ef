"""What stops `play`, `demo`, `rules replay`, `sim boards` and `diag` is said in
the reader's language (issue 18).

Each error path runs in pt-BR and ms and must print the translated sentence
with its documented exit status (docs/troubleshooting.md: 2 for a wrong
option or input, 1 for a failure such as a damaged journal). The sentences
come from other rooms as well as the commands: the table room's geometry and
tag registry errors, the link's port errors, the journal's, the referee's
and the engines' (a Sentence remembers its template; the table room's
errors are the same kind of string, made in ``tablesense.table.words``).
In the pseudo-locale ``qps`` no word a person reads is left outside ⟦…⟧.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablesense.cli import app
from tablesense.i18n import Translator
from tablesense.journal.store import Journal
from tablesense.table.geometry import TableGeometry
from tablesense.table.words import message_of

runner = CliRunner()


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # one line per message: no wrapping inside a sentence
    monkeypatch.setenv("TABLESENSE_GPIO", "sim")


def _run(*args: str) -> tuple[int, str]:
    r = runner.invoke(app, list(args))
    return r.exit_code, " ".join((r.stdout + r.stderr).split())


def _files(tmp: Path) -> dict[str, str]:
    bad_toml = tmp / "bad.toml"
    bad_toml.write_text('name = "x"\n')
    damaged = tmp / "damaged.sqlite"
    damaged.write_text("not a database")
    bad_json = tmp / "tags.json"
    bad_json.write_text("{")
    record = tmp / "record.json"
    record.write_text("[]")
    a_file = tmp / "a-file"
    a_file.write_text("")
    return {
        "tmp": str(tmp),
        "bad_toml": str(bad_toml),
        "damaged": str(damaged),
        "bad_json": str(bad_json),
        "record": str(record),
        "journal": str(tmp / "j.sqlite"),
        "no_dir": str(a_file / "j.sqlite"),  # its folder cannot be made: a file is in the way
    }


# (command, exit status, pt-BR words, ms words); {name} is a file of _files
CASES: list[tuple[str, list[str], int, str, str]] = [
    ("play: no such table", ["play", "--table", "nosuchtable", "--seats", "A,B,C,D"], 2,
     "erro: nenhum arquivo de geometria de mesa em 'nosuchtable'",
     "ralat: tiada fail geometri meja di 'nosuchtable'"),
    ("play: a geometry file with problems", ["play", "--table", "{bad_toml}"], 2,
     "5 problema(s) na geometria da mesa: - games must be",
     "5 masalah dalam geometri meja: - games must be"),
    ("play: seats of another table", ["play", "--table", "dominoes-4", "--seats", "A,B"], 2,
     "a mesa dominoes-4 tem 4 lugares; --seats nomeia 2",
     "meja dominoes-4 mempunyai 4 tempat; --seats menamakan 2"),
    ("play: --deal", ["play", "--table", "dominoes-4", "--deal", "foo"], 2,
     "--deal é 'table' (lido dos suportes)", "--deal ialah 'table' (dibaca dari rak)"),
    ("play: missing port", ["play", "--table", "dominoes-4", "--port", "/dev/ttyNONE", "--journal", "{journal}"], 2,
     "--port /dev/ttyNONE: dispositivo inexistente (a placa está conectada?",
     "--port /dev/ttyNONE: peranti tidak wujud (adakah papan dipasang?"),
    ("play: missing tag registry", ["play", "--table", "dominoes-4", "--tags", "{tmp}/none.json"], 2,
     "none.json: não foi possível ler:", "none.json: tidak dapat dibaca:"),
    ("play: a tag registry that is not JSON", ["play", "--table", "dominoes-4", "--tags", "{bad_json}"], 2,
     "tags.json: JSON inválido:", "tags.json: JSON tidak sah:"),
    ("play: unknown game", ["play", "--table", "dominoes-4", "--game", "chess", "--journal", "{journal}",
                            "--port", "/dev/null"], 2,
     "jogo desconhecido 'chess': os jogos são dominoes, kems",
     "permainan tidak dikenali 'chess': permainan yang ada ialah dominoes, kems"),
    ("play: unknown variant", ["play", "--table", "dominoes-4", "--variant", "nosuch", "--journal", "{journal}",
                               "--port", "/dev/null"], 2,
     "não foi possível preparar dominoes nosuch:", "tidak dapat menyediakan dominoes nosuch:"),
    ("play: a damaged journal", ["play", "--table", "dominoes-4", "--journal", "{damaged}", "--port", "/dev/null"], 1,
     "não foi possível abrir o diário {damaged}: file is not a database (o arquivo foi deixado como está); "
     "para começar do zero",
     "tidak dapat membuka jurnal {damaged}: file is not a database (fail dibiarkan seperti sedia ada); "
     "untuk bermula semula"),
    ("play: a journal whose folder cannot be made", ["play", "--table", "dominoes-4", "--journal", "{no_dir}",
                                                     "--port", "/dev/null"], 1,
     "não foi possível abrir o diário {no_dir}:", "tidak dapat membuka jurnal {no_dir}:"),
    ("play: unknown player", ["play", "--table", "dominoes-4", "--player", "nosuch", "--journal", "{journal}"], 2,
     "jogador de dominó desconhecido 'nosuch'", "pemain domino tidak dikenali 'nosuch'"),
    ("play: unknown Kems player", ["play", "--table", "kems-4", "--player", "nosuch", "--journal", "{journal}"], 2,
     "jogador de Kems desconhecido 'nosuch'", "pemain Kems tidak dikenali 'nosuch'"),
    ("play: quiet hours", ["play", "--table", "dominoes-4", "--quiet-hours", "25"], 2,
     "horário de silêncio '25': escreva como HH:MM-HH:MM", "waktu senyap '25': tulis sebagai HH:MM-HH:MM"),
    ("demo: unknown game", ["demo", "--no-web", "--game", "chess"], 2,
     "jogo desconhecido 'chess'", "permainan tidak dikenali 'chess'"),
    ("demo: unknown variant", ["demo", "--no-web", "--hands", "1", "--variant", "nosuch", "--link", "direct"], 2,
     "variante de dominoes desconhecida 'nosuch': use", "varian dominoes tidak dikenali 'nosuch': gunakan"),
    ("demo: seats", ["demo", "--no-web", "--hands", "1", "--seats", "7", "--link", "direct"], 2,
     "não há mesa de demonstração de dominoes com 7 lugares", "tiada meja demo untuk dominoes dengan 7 tempat"),
    ("demo: unknown player", ["demo", "--no-web", "--hands", "1", "--player", "nosuch", "--link", "direct"], 2,
     "jogador de dominó desconhecido 'nosuch'", "pemain domino tidak dikenali 'nosuch'"),
    ("demo: unknown Kems player", ["demo", "--no-web", "--hands", "1", "--game", "kems", "--player", "nosuch",
                                   "--link", "direct"], 2,
     "jogador de Kems desconhecido 'nosuch'", "pemain Kems tidak dikenali 'nosuch'"),
    ("demo: --boards", ["demo", "--no-web", "--boards", "nosuch"], 2,
     "--boards é virtual ou rp2040", "--boards ialah virtual atau rp2040"),
    ("demo: --link", ["demo", "--no-web", "--link", "nosuch"], 2,
     "--link é virtual ou direct", "--link ialah virtual atau direct"),
    ("demo: no such seat", ["demo", "--sit", "9"], 2,
     "não existe lugar 9 nesta mesa (1 = Sul, 2 = Leste, 3 = Norte, 4 = Oeste)",
     "tiada tempat 9 di meja ini (1 = Selatan, 2 = Timur, 3 = Utara, 4 = Barat)"),
    ("demo: seat 0", ["demo", "--sit", "0"], 2,
     "nesta mesa os lugares contam a partir de 1", "tempat di meja ini dikira dari 1"),
    ("demo: every seat taken", ["demo", "--sit", "1,2,3,4"], 2,
     "--sit não deixa nenhum lugar para o computador", "--sit tidak meninggalkan sebarang tempat untuk komputer"),
    ("demo: --open-hands alone", ["demo", "--no-web", "--open-hands"], 2,
     "--open-hands vai com --sit", "--open-hands digunakan dengan --sit"),
    ("demo: a damaged journal", ["demo", "--no-web", "--hands", "1", "--journal", "{damaged}", "--link", "direct"], 1,
     "não foi possível abrir o diário {damaged}", "tidak dapat membuka jurnal {damaged}"),
    ("rules replay: not a record", ["rules", "replay", "{record}"], 2,
     "registro inválido: um registro de partida é um único objeto JSON", "rekod tidak sah:"),
    ("sim boards: no such table", ["sim", "boards", "--table", "nosuchtable"], 2,
     "nenhum arquivo de geometria de mesa em 'nosuchtable'", "tiada fail geometri meja di 'nosuchtable'"),
    ("sim boards: a geometry file with problems", ["sim", "boards", "--table", "{bad_toml}"], 2,
     "problema(s) na geometria da mesa", "masalah dalam geometri meja"),
    ("sim boards: fault rate", ["sim", "boards", "--table", "dominoes-4", "--faults", "9"], 2,
     "taxa de falhas 9 fora de 0..0.5", "kadar kerosakan 9 di luar 0..0.5"),
    ("sim boards: burst", ["sim", "boards", "--table", "dominoes-4", "--burst", "0"], 2,
     "comprimento de rajada 0 menor que 1", "panjang letusan 0 kurang daripada 1"),
    ("sim boards: missing scenario", ["sim", "boards", "--table", "dominoes-4", "--scenario", "{tmp}/none.toml"], 2,
     "não foi possível ler o cenário", "tidak dapat membaca senario"),
    ("diag: a port that is not there", ["diag", "--port", "/dev/ttyNONE"], 1,
     "não foi possível abrir /dev/ttyNONE: dispositivo inexistente (desconectado?)",
     "tidak dapat membuka /dev/ttyNONE: peranti tidak wujud (tercabut?)"),
]


@pytest.mark.parametrize(("what", "command", "code", "pt", "ms"), CASES, ids=[c[0] for c in CASES])
def test_an_error_in_portuguese_and_malay(
    what: str, command: list[str], code: int, pt: str, ms: str, tmp_path: Path
) -> None:
    files = _files(tmp_path)
    args = [a.format(**files) for a in command]
    for lang, words in (("pt-BR", pt), ("ms", ms)):
        for name in ("j.sqlite",):
            (tmp_path / name).unlink(missing_ok=True)
        got, out = _run(*args, "--lang", lang)
        assert got == code, (what, lang, out)
        assert words.format(**files) in out, (what, lang, out)
        assert "Traceback" not in out


def test_an_unfinished_match_the_options_contradict(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    spec = {"game": "dominoes", "variant": "pairs-pips", "options": {},
            "seat_names": ["South", "East", "North", "West"], "seat_kinds": ["human"] * 4,
            "seed": None, "table": "dominoes-4"}
    with Journal(journal) as j:
        mid = j.begin(spec)
        j.append({"type": "match", "spec": spec, "deal": "table"})
        tiles = [f"{a}-{b}" for a in range(7) for b in range(a, 7)]  # a hand was dealt: a match to resume
        j.append({"type": "hand", "deal": [tiles[i::4] for i in range(4)], "boneyard": []})
    args = ["play", "--table", "dominoes-4", "--variant", "brazilian-points", "--journal", str(journal)]
    code, out = _run(*args, "--lang", "pt-BR")
    assert code == 2, out
    assert f"o diário {journal} tem uma partida inacabada {mid}" in out
    assert "dominoes pairs-pips na mesa dominoes-4, lugares Sul, Leste, Norte, Oeste" in out
    assert "a variante dela é pairs-pips, não brazilian-points" in out
    assert "retome-a como estava: tablesense play --table dominoes-4" in out
    assert "acrescente --new" in out
    code, out = _run(*args, "--lang", "ms")
    assert code == 2, out
    assert f"jurnal {journal} menyimpan perlawanan {mid} yang belum selesai" in out
    assert "tempat Selatan, Timur, Utara, Barat" in out
    assert "variannya ialah pairs-pips, bukan brazilian-points" in out
    assert "tambah --new" in out


def _bare_words(text: str, data: tuple[str, ...]) -> list[str]:
    """Words outside every ⟦…⟧ and outside ``data`` (paths, identifiers)."""
    for d in sorted(data, key=len, reverse=True):
        text = text.replace(d, " ")
    previous = None
    while previous != text:
        previous = text
        text = re.sub(r"⟦[^⟦⟧]*⟧", " ", text)
    return re.findall(r"[A-Za-z]{3,}", text)


def test_no_word_of_an_error_is_left_untranslated(tmp_path: Path) -> None:
    files = _files(tmp_path)
    data = (
        *files.values(), "nosuchtable", "dominoes-4", "dominoes", "kems", "chess", "nosuch", "pairs-pips",
        "pips-two-player", "brazilian-points", "virtual", "rp2040", "direct", "tablesense", "play", "boards", "list",
        "sim", "/dev/ttyNONE", "/dev/null", "--port", "--seats", "--deal", "table", "host", "--sit", "--open-hands",
        "--link", "--boards", "--journal", "--new", "--variant", "random", "greedy", "montecarlo", "search",
        "PATH", "HH", "MM", "TOML", "JSON",
    )
    runs = [
        _run("play", "--table", "nosuchtable", "--lang", "qps"),
        _run("play", "--table", "dominoes-4", "--port", "/dev/ttyNONE", "--journal", files["journal"], "--lang", "qps"),
        _run("play", "--table", "dominoes-4", "--seats", "A,B", "--lang", "qps"),
        _run("play", "--table", "dominoes-4", "--journal", files["damaged"], "--port", "/dev/null", "--lang", "qps"),
        _run("demo", "--no-web", "--hands", "1", "--player", "nosuch", "--link", "direct", "--lang", "qps"),
        _run("demo", "--sit", "9", "--lang", "qps"),
        _run("sim", "boards", "--table", "nosuchtable", "--lang", "qps"),
        _run("sim", "boards", "--table", "dominoes-4", "--faults", "9", "--lang", "qps"),
    ]
    text = "\n".join(out for _, out in runs)
    # what SQLite says inside the journal's message is the OS's, not ours
    assert not _bare_words(text.replace("file is not a database", " "), data), text


def test_the_table_rooms_errors_stay_english_for_logs_and_translate_where_shown(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as caught:
        TableGeometry.load(tmp_path / "none")
    assert str(caught.value) == f"no table geometry file at {str(tmp_path / 'none')!r}"
    message = message_of(caught.value)
    assert Translator("pt-BR")(message).startswith("nenhum arquivo de geometria de mesa em")
    assert Translator("ms")(message).startswith("tiada fail geometri meja di")


def test_the_keyboard_answers_in_the_tables_language() -> None:
    from types import SimpleNamespace

    from tablesense.referee.keyboard import key_command

    session = SimpleNamespace(referee=SimpleNamespace(spec=SimpleNamespace(seat_names=["S", "E", "N", "W"])),
                              press=lambda seat, button: None, referee_press=lambda: None)
    no_seat, unknown = key_command(session, "p 9"), key_command(session, "x")
    assert no_seat == "there is no seat 9: the seats are 1 to 4"  # English for logs and tests
    pt, ms = Translator("pt-BR"), Translator("ms")
    assert pt(no_seat) == "não existe lugar 9: os lugares vão de 1 a 4"
    assert ms(no_seat) == "tiada tempat 9: tempat ialah 1 hingga 4"
    assert pt(unknown).startswith("tecla desconhecida 'x'; teclas: p N = botão do lugar N")
    assert ms(unknown).startswith("kekunci tidak dikenali 'x'; kekunci: p N = butang tempat N")


def test_why_the_seat_buttons_are_unavailable(tmp_path: Path) -> None:
    """`play` says "seat buttons unavailable (WHY); use the keyboard" and goes
    on: WHY is a sentence too (a seat header that is not there, RPi.GPIO
    missing on a Pi)."""
    from tablesense.outputs.gpio import GPIOError, RPiGPIOBackend
    from tablesense.referee.sit import SocketHeaderBackend

    with pytest.raises(GPIOError) as caught:
        SocketHeaderBackend(str(tmp_path / "none.sock"))
    why = message_of(caught.value)
    assert Translator("pt-BR")(why).startswith("não foi possível alcançar o conector virtual dos lugares em")
    assert Translator("ms")(why).startswith("tidak dapat mencapai penyambung tempat maya di")
    try:
        RPiGPIOBackend()
    except GPIOError as exc:
        why = message_of(exc)
        if "not installed" in why:
            assert Translator("pt-BR")(why).startswith("o módulo RPi.GPIO não está instalado")
            assert Translator("ms")(why).startswith("modul RPi.GPIO tidak dipasang")


def test_sit_takes_the_seat_names_the_error_lists() -> None:
    """The refusal lists `1 = Sul, 2 = Leste, ...`: those names are taken too."""
    from tablesense.referee.sit import parse_seats

    names = ["South", "East", "North", "West"]
    assert parse_seats("sul,Oeste", names, ["Sul", "Leste", "Norte", "Oeste"]) == (0, 3)
    assert parse_seats("timur", names, ["Selatan", "Timur", "Utara", "Barat"]) == (1,)
    assert parse_seats("north", names, ["Sul", "Leste", "Norte", "Oeste"]) == (2,)  # the layout's own names still
    assert parse_seats("lugar 3", ["Seat 1", "Seat 2", "Seat 3", "Seat 4"],
                       ["Lugar 1", "Lugar 2", "Lugar 3", "Lugar 4"]) == (2,)
    code, out = _run("demo", "--sit", "norte", "--no-web", "--lang", "pt-BR")  # parsed, then: needs the page
    assert code == 2 and "--sit precisa da página e das placas virtuais" in out, out
