"""The journals of a remote match: the host's (what it needs to start again)
and the joining table's (the frames it applied: the match as it saw it).

One JSON line per entry in ``<folder>/<CODE>.jsonl``: first the match (code,
seed, options, the joining table's user), then every input of the
:class:`~tablesense.remote.authority.Authority` as it happens (fsynced), so
``play --remote host CODE`` rebuilds the very same facts after a crash or a
kill (the engine is deterministic) and the tables go on where they were. The
host's table key lies beside it (``<CODE>.key``, mode 0600): the joining
table already trusts that key.

The joining table's journal, ``<folder>/<CODE>.join.jsonl``: first the match
(code, the host's user), then every frame the table applied, in order,
fsynced (:class:`TableJournal`). Its frames rebuild the table's
:class:`~tablesense.remote.view.TableView` and end with the authority's
record, so the journals on both sides agree; a joining table started again
with the code takes its view from it and applies only the frames after.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tablesense.games.common import say
from tablesense.tournament.security import TableKey


class RemoteJournalError(ValueError):
    """No journal for that code here, or one that cannot be read."""


def _drop_cut_line(path: Path) -> None:
    """A last line cut by a crash (no newline) is cut off before appending:
    the next entry would otherwise be glued to it."""
    if not path.is_file():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)
            f.flush()
            os.fsync(f.fileno())


class HostJournal:
    """Append-only; see the module docstring."""

    def __init__(self, path: Path) -> None:
        self.path = path
        _drop_cut_line(path)
        self._file = path.open("a", encoding="utf-8")

    @staticmethod
    def key_path(folder: Path, code: str) -> Path:
        return folder / f"{code}.key"

    @classmethod
    def create(cls, folder: Path, code: str, header: dict[str, Any], key: TableKey) -> HostJournal:
        folder.mkdir(parents=True, exist_ok=True)
        key.save(cls.key_path(folder, code))
        journal = cls(folder / f"{code}.jsonl")
        journal.append({"match": header})
        return journal

    @classmethod
    def open(cls, folder: Path, code: str) -> tuple[HostJournal, dict[str, Any], list[dict[str, Any]], TableKey]:
        """The journal of ``code``: itself (to go on appending), the match, its inputs, the host's key."""
        path = folder / f"{code}.jsonl"
        if not path.is_file():
            raise RemoteJournalError(say("no remote match {code} was hosted here (no {path})", code=code, path=str(path)))
        entries = _read_lines(path)  # a last line cut by a crash: its input was never answered
        if not entries or "match" not in entries[0]:
            raise RemoteJournalError(say("{path} does not start with its match", path=str(path)))
        key = TableKey.load(cls.key_path(folder, code))
        match = dict(entries[0]["match"])
        for e in entries[1:]:
            if "joiner_key" in e:  # the joining table started again since: its newest key
                match["joiner_key"] = e["joiner_key"]
        return cls(path), match, [e["input"] for e in entries[1:] if "input" in e], key

    def append(self, entry: dict[str, Any]) -> None:
        self._file.write(json.dumps(entry, separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def add_input(self, entry: dict[str, Any]) -> None:
        self.append({"input": entry})

    def close(self) -> None:
        self._file.close()


def _read_lines(path: Path) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, 1):
        try:
            entries.append(json.loads(line))
        except ValueError:
            if n == len(lines):
                break  # a line cut by a crash: that frame comes again from the host
            raise RemoteJournalError(say("{path}, line {n}: not JSON", path=str(path), n=n)) from None
    return entries


class TableJournal(HostJournal):
    """The joining table's journal; see the module docstring."""

    @staticmethod
    def path_of(folder: Path, code: str) -> Path:
        return folder / f"{code}.join.jsonl"

    @classmethod
    def open_or_create(cls, folder: Path, code: str, host: str) -> tuple[TableJournal, list[dict[str, Any]]]:
        """The journal of ``code`` (made when missing) and the frames it holds."""
        folder.mkdir(parents=True, exist_ok=True)
        path = cls.path_of(folder, code)
        if not path.is_file() or path.stat().st_size == 0:
            journal = cls(path)
            journal.append({"match": {"code": code, "host": host}})
            return journal, []
        entries = _read_lines(path)
        if not entries or entries[0].get("match", {}).get("code") != code:
            raise RemoteJournalError(say("{path} does not start with its match", path=str(path)))
        frames = [e["frame"] for e in entries[1:] if "frame" in e]
        if [f.get("no") for f in frames] != list(range(len(frames))):
            raise RemoteJournalError(say("{path}: its frames are not numbered 0, 1, 2, ...", path=str(path)))
        return cls(path), frames

    def add_frame(self, frame: dict[str, Any]) -> None:
        self.append({"frame": frame})
