"""No room branches on a game's name: outside ``games/`` a caller asks the
game (:mod:`tablesense.games.registry`) what it needs to know, so that a new
game or variant does not send anyone hunting for ``if game == "kems"`` across
the rooms.

Caught anywhere outside ``host/tablesense/games/``: a comparison with a
game's name (``game == "dominoes"``, ``spec.game != "kems"``,
``record.get("game") in ("dominoes", ...)``), an ``isinstance`` check against
a game's classes (``DominoRules``, ``KemsRound``...), and a table keyed by a
game's name (a dict literal with one as a key), unless it is a table of
words only (every value marked for translation: the pages' labels name the
games as words to show, which is vocabulary, not behaviour).

Beyond branches, every game name spelled outside ``games/`` is counted, file
by file, against :data:`SPELLED`: a small list of the places a name may stay
(a command's default, a word that happens to be spelled like a game), each
with its reason; one more anywhere fails. The pages (the JavaScript, CSS and
templates the host serves) may not spell a game's name in a comparison, as a
table's key or in a selector: they read what differs per game from the
``facts`` a view or a layout carries (``Game.page_facts``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tablesense.games.registry import names
from testsupport import REPO

PACKAGE = REPO / "host" / "tablesense"
GAME_NAMES = frozenset(names())
#: Class-name fragments of one game's engine or rules (``DominoMatch``, ``KemsRules``).
GAME_CLASSES = ("Domino", "Kems")


def _game_names_in(node: ast.AST) -> set[str]:
    """The game names a comparison operand spells: a string, or a tuple, list
    or set of strings."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & GAME_NAMES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(*(_game_names_in(e) for e in node.elts)) if node.elts else set()
    return set()


#: The calls that mark a text for translation.
WORD_MARKERS = frozenset({"N_", "NC_", "say", "_"})


def _words_only(node: ast.Dict) -> bool:
    return all(
        isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in WORD_MARKERS for v in node.values
    )


def _class_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.Tuple):
        return [n for e in node.elts for n in _class_names(e)]
    return []


def game_branches(source: str, filename: str = "<source>") -> list[tuple[int, str]]:
    """(line, what) of every branch on a game in ``source``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Compare):
            spelled = set().union(*(_game_names_in(n) for n in (node.left, *node.comparators)))
            if spelled:
                found.append((node.lineno, f"compares with the game name(s) {sorted(spelled)}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass"):
            if len(node.args) == 2:
                hits = [n for n in _class_names(node.args[1]) if any(g in n for g in GAME_CLASSES)]
                if hits:
                    found.append((node.lineno, f"{node.func.id} against the game class(es) {hits}"))
        elif isinstance(node, ast.Dict) and not _words_only(node):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            if keys & GAME_NAMES:
                found.append((node.lineno, f"a table keyed by the games {sorted(keys & GAME_NAMES)}"))
    return found


#: Where a game's name may be spelled outside games/ (file -> how many times,
#: why). Anything else that spells one asks the registry instead.
SPELLED: dict[str, tuple[int, str]] = {
    "web/cli.py": (1, "display preview --game: the option's default"),
    "tournament/cli.py": (3, "--game of new-event, simulate and rehearse: the options' defaults"),
    "tournament/service.py": (1, "create_event(game=...): the default of a new event"),
    "tournament/club_sim.py": (1, "the simulated club evening's default game"),
    "tournament/simulate.py": (1, "the simulated event's default game"),
    "tournament/rehearsal.py": (1, "the rehearsal's default game"),
    "referee/demo.py": (1, "DemoConfig.game: demo's default"),
    "remote/board_judge.py": (2, 'the Kems calls a seat button makes, {"call": "kems"}: the word of the call, not the game'),
    "sim/layouts.py": (1, "a generated layout names its game as plain data (the table room knows no game)"),
    "referee/rules.py": (2, "each game's table rules name the game they lay out (rules_for finds them by it)"),
    "referee/buttons.py": (1, 'a Kems call\'s kind, Call(seat, "kems"): the word of the call, not the game'),
    "referee/view.py": (2, "the words for a Kems result and a Kems call (their keys are outcomes and calls)"),
    "tournament/record_view.py": (2, "the words for a Kems result and a Kems call, as in referee/view.py"),
    "referee/session.py": (1, "the label of the computer seats' random stream for a Kems call (renaming it would "
                              "change every simulated game)"),
}


def spelled_names(source: str, filename: str = "<source>") -> list[int]:
    """The lines of every string constant that is exactly a game's name."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source, filename=filename))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in GAME_NAMES
    )


def test_a_game_name_is_spelled_outside_games_only_where_listed() -> None:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("games/"):
            continue
        lines = spelled_names(path.read_text(encoding="utf-8"), str(path))
        allowed = SPELLED.get(rel, (0, ""))[0]
        if len(lines) != allowed:
            problems.append(f"host/tablesense/{rel}: a game's name spelled {len(lines)} times (lines {lines}), "
                            f"{allowed} listed")
    assert not problems, "ask the registry (games/registry.py), or list the place with its reason:\n" + "\n".join(
        problems
    )
    assert all(reason for _, reason in SPELLED.values())


#: The page files the host serves.
PAGES = [p for d in ("web", "tournament") for p in (PACKAGE / d).rglob("*") if p.suffix in (".js", ".css", ".html")]


def page_branches(text: str) -> list[tuple[int, str]]:
    """(line, text) of every place a page spells a game's name as code: in a
    comparison (JavaScript or a template), as an object's key, in a CSS
    attribute selector or class."""
    alt = "|".join(sorted(GAME_NAMES))
    patterns = [
        rf"""(===?|!==?)\s*["']({alt})["']""",
        rf"""["']({alt})["']\s*(===?|!==?)""",
        rf"""(?<![\w"'.-])({alt})\s*:(?!:)""",
        rf"""\[\s*["']({alt})["']\s*\]""",
        rf"""=\s*["']({alt})["']\s*\]""",
        rf"""\.({alt})\b(?![-\w(])""",
    ]
    found = []
    for no, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith(("/*", "*", "//", "{#", "<!--")):
            continue  # prose: a comment may name a game
        if any(re.search(p, line) for p in patterns):
            found.append((no, line.strip()))
    return found


def test_no_page_branches_on_a_game() -> None:
    problems = [
        f"{page.relative_to(PACKAGE)}:{no}: {line}" for page in PAGES for no, line in page_branches(page.read_text("utf-8"))
    ]
    assert not problems, "read the view's or layout's facts (Game.page_facts) instead:\n" + "\n".join(problems)


def test_the_page_check_sees_each_spelling_and_passes_facts() -> None:
    caught = [
        'if (view.game === "kems") x();',
        "const w = layout.game !== 'dominoes' ? a : b;",
        'const LABELS = { dominoes: t("a"), kems: t("b") };',
        'const n = NAMES["kems"];',
        'body[data-game="kems"] #line { display: none; }',
        ".club .replay.kems .card { color: red; }",
        '{% elif rec.game == "kems" %}',
    ]
    for source in caught:
        assert page_branches(source), source
    fine = [
        'if (facts().play_area === "board") x();',
        'const labels = { pass: t("btn_" + words.pass) };',
        "btn_kems: \"Kems!\", hint_no_turns: \"Swap\",",
        'body[data-pieces="card"] #line { display: none; }',
        '<div id="kems-board" class="cards"></div>',
        "/* Draws a dominoes line of play as SVG tiles */",
        "  /* the step a hand opens on (dominoes: its first move) */",
    ]
    for source in fine:
        assert not page_branches(source), source


def test_no_room_branches_on_a_game_outside_the_games_room() -> None:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "games":
            continue
        for line, what in game_branches(path.read_text(encoding="utf-8"), str(path)):
            problems.append(f"host/tablesense/{rel}:{line}: {what}")
    assert not problems, "ask the game (games/registry.py) instead:\n" + "\n".join(problems)


def test_the_check_sees_each_spelling_of_a_game_branch() -> None:
    """The check must be able to fail: each way a branch was written before
    the registry is caught, and asking the game is not."""
    caught = [
        'if game == "kems":\n    pass',
        'x = a if spec.game != "dominoes" else b',
        'ok = record.get("game") in ("dominoes", "kems")',
        'if "dominoes" == self.spec.game:\n    pass',
        'if isinstance(self.rules, DominoRules):\n    pass',
        'if isinstance(m, (kems.KemsRound, int)):\n    pass',
        'TABLES = {"dominoes": "dominoes-4", "kems": "kems-4"}',
        'TITLES = {"dominoes": N_("Dominoes"), "kems": "Kems"}',
        'TABLE = {"kems": "kems-4"}',
    ]
    for source in caught:
        assert game_branches(source), source
    fine = [
        "word = self.game.per_deal(hand=a, round=b)",
        'call = Call(seat, "kems")',
        'words = {"kems": say("Kems"), "double": say("Double Kems")}',
        'LABELS = {"dominoes": N_("Dominoes"), "kems": N_("Kems")}',
        'if game.has_turns:\n    pass',
    ]
    for source in fine:
        assert not game_branches(source), source


def test_the_module_walk_reaches_every_room() -> None:
    rooms = {p.relative_to(PACKAGE).parts[0] for p in PACKAGE.rglob("*.py")}
    assert {"referee", "tournament", "web", "table", "sim"} <= rooms
    assert Path(__file__).name.startswith("test_")
