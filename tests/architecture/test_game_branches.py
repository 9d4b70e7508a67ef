"""No room branches on a game's name: outside ``games/`` a caller asks the
game (:mod:`tablesense.games.registry`) what it needs to know, so that a new
game or variant does not send anyone hunting for ``if game == "kems"`` across
the rooms.

Caught anywhere outside ``host/tablesense/games/``: a comparison with a
game's name (``game == "dominoes"``, ``spec.game != "kems"``,
``record.get("game") in ("dominoes", ...)``), an ``isinstance`` check against
a game's classes (``DominoRules``, ``KemsRound``...), and a table keyed by the
games' names (a dict literal with two of them as keys), unless it is a table of
words only (every value marked for translation: the pages' labels name the
games as words to show, which is vocabulary, not behaviour)."""

from __future__ import annotations

import ast
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
            if len(keys & GAME_NAMES) >= 2:
                found.append((node.lineno, f"a table keyed by the games {sorted(keys & GAME_NAMES)}"))
    return found


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
