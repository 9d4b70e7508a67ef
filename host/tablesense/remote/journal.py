"""The host's journal of a remote match: what it needs to start again.

One JSON line per entry in ``<folder>/<CODE>.jsonl``: first the match (code,
seed, options, the joining table's user), then every input of the
:class:`~tablesense.remote.authority.Authority` as it happens (fsynced), so
``play --remote host CODE`` rebuilds the very same facts after a crash or a
kill (the engine is deterministic) and the tables go on where they were. The
host's table key lies beside it (``<CODE>.key``, mode 0600): the joining
table already trusts that key.
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


class HostJournal:
    """Append-only; see the module docstring."""

    def __init__(self, path: Path) -> None:
        self.path = path
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
        entries: list[dict[str, Any]] = []
        lines = path.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines, 1):
            try:
                entries.append(json.loads(line))
            except ValueError:
                if n == len(lines):
                    break  # a line cut by the crash itself: its input was never answered
                raise RemoteJournalError(say("{path}, line {n}: not JSON", path=str(path), n=n)) from None
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
