"""Every room is nameable in one sentence, and says it itself: the rooms
table of docs/architecture.md gives each room of ``host/tablesense/`` its
sentence, and the room's package docstring opens with that same sentence
("The games room: ..."), so the code and the document cannot drift apart,
and a new room must be named in both."""

from __future__ import annotations

import ast
import re

from testsupport import REPO

PACKAGE = REPO / "host" / "tablesense"
DOC = REPO / "docs" / "architecture.md"
ROW = re.compile(r"^\| (\w+) \| `host/tablesense/(\w+)/` \| (.+?) \|$", re.M)


def _plain(text: str) -> str:
    """Markdown links as their text, whitespace as single spaces."""
    return " ".join(re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text).split())


def named_rooms() -> dict[str, str]:
    """Room folder -> its sentence, from the document's table."""
    return {path: _plain(sentence) for _, path, sentence in ROW.findall(DOC.read_text(encoding="utf-8"))}


def opening(folder: str) -> str:
    """The first paragraph of a room's package docstring, whitespace made single."""
    doc = ast.get_docstring(ast.parse((PACKAGE / folder / "__init__.py").read_text(encoding="utf-8"))) or ""
    return " ".join(doc.split("\n\n")[0].split())


def test_every_room_folder_is_named_in_the_document() -> None:
    folders = {p.parent.name for p in PACKAGE.glob("*/__init__.py")} - {"firmware"}  # firmware: its own row
    assert folders - set(named_rooms()) == set(), "name the new room in docs/architecture.md's rooms table"
    assert set(named_rooms()) - folders == set(), "the document names a room that is not there"


def test_each_room_opens_with_its_sentence() -> None:
    wrong = []
    for folder, sentence in named_rooms().items():
        want = f"The {folder} room: {sentence[0].lower()}{sentence[1:]}"
        if opening(folder) != want:
            wrong.append(f"host/tablesense/{folder}/__init__.py: {opening(folder)!r}\n  document: {want!r}")
    assert not wrong, "\n".join(wrong)


def test_the_check_can_fail() -> None:
    """A placeholder is not a sentence: the check compares the words, not only
    that a docstring is there."""
    assert opening("games").startswith("The games room: the pure rules engines")
    assert opening("games") != "The games room."
    assert len(named_rooms()) >= 14
