"""The tag registry: which RFID tag UID is which tile, card or player badge.

RFID ids are learned, not hard-coded (enrolment is ``tablesense tags enroll``):
the registry is a small JSON file the host loads at start. A UID the registry
does not know is reported as :class:`UnknownTag`, never as a piece and never as
an empty cell, so the referee can tell the players exactly what is wrong.

File format (``tablesense.tags/1``)::

    {"format": "tablesense.tags/1",
     "tags": {"04a1b2c3d4e5f6": "3-5", "0411223344": "TH", "04aabbccdd": "badge:Alice"}}

This module is pure (no I/O except :meth:`TagRegistry.load` / :meth:`save`)
and imports nothing else of ours: the piece names are parsed here with the same
spelling the game records use (tiles ``"a-b"`` low first, cards rank+suit).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from tablesense.table.words import joined, message_of, say

FORMAT = "tablesense.tags/1"

PieceKind: TypeAlias = Literal["tile", "card", "badge"]
SetKind: TypeAlias = Literal["tiles", "cards32", "cards52"]

RANKS = "23456789TJQKA"
SUITS = "SHDC"
RANKS32 = "789TJQKA"


class TagRegistryError(ValueError):
    """A registry file that cannot be read, or an enrolment that would make it
    ambiguous (a UID twice, or one piece under two UIDs)."""


@dataclass(frozen=True, order=True)
class Piece:
    """What a tag stands for: a domino tile, a playing card or a player badge.

    ``text`` is the canonical spelling: ``"3-5"`` (low first), ``"TH"``,
    ``"badge:Alice"``; ``str(piece)`` gives it back.
    """

    kind: PieceKind
    text: str

    @classmethod
    def parse(cls, text: str) -> Piece:
        """Parse ``"5-3"``, ``"3-5"``, ``"TH"``, ``"th"`` or ``"badge:NAME"``.

        :raises ValueError: for anything else, quoting the input.
        """
        raw = text.strip()
        if raw.startswith("badge:"):
            name = raw[len("badge:") :].strip()
            if not name:
                raise ValueError(say("badge without a name: {text!r}", text=text))
            return cls("badge", f"badge:{name}")
        if "-" in raw:
            parts = raw.split("-")
            if len(parts) == 2 and all(p.isdigit() and len(p) == 1 for p in parts):
                a, b = sorted(int(p) for p in parts)
                if b <= 6:
                    return cls("tile", f"{a}-{b}")
            raise ValueError(say("not a double-six tile: {text!r}", text=text))
        up = raw.upper()
        if len(up) == 2 and up[0] in RANKS and up[1] in SUITS:
            return cls("card", up)
        raise ValueError(say("not a tile, card or badge: {text!r}", text=text))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Piece.parse({self.text!r})"


@dataclass(frozen=True)
class UnknownTag:
    """A tag the registry does not know (a foreign sticker, a spare not yet
    enrolled). Its own state: the referee asks for it to be removed."""

    uid: bytes

    def __str__(self) -> str:
        return f"unknown tag {self.uid.hex()}"


def all_tiles() -> list[str]:
    """The 28 tiles of a double-six set, canonical spelling."""
    return [f"{a}-{b}" for a in range(7) for b in range(a, 7)]


def all_cards(size: int = 52) -> list[str]:
    """The cards of a 32- or 52-card deck, canonical spelling."""
    ranks = RANKS32 if size == 32 else RANKS
    return [r + s for s in SUITS for r in ranks]


def _set_members(kind: SetKind) -> list[str]:
    if kind == "tiles":
        return all_tiles()
    if kind == "cards32":
        return all_cards(32)
    if kind == "cards52":
        return all_cards(52)
    raise ValueError(say("unknown set {kind!r}: use tiles, cards32 or cards52", kind=kind))


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object that names a key twice (a tag enrolled twice) is refused, not
    silently reduced to its last entry."""
    out: dict[str, object] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(say("tag or field {key!r} appears twice", key=k[:40]))
        out[k] = v
    return out


def _uid_hex(uid: bytes | str) -> str:
    if isinstance(uid, bytes):
        return uid.hex()
    text = uid.strip().lower().replace(":", "")
    try:
        bytes.fromhex(text)
    except ValueError:
        raise TagRegistryError(say("not a hexadecimal UID: {uid!r}", uid=uid)) from None
    if not text:
        raise TagRegistryError(say("empty UID"))
    return text


class TagRegistry:
    """UID -> piece, one to one.

    >>> reg = TagRegistry()
    >>> reg.add(bytes.fromhex("04a1b2c3"), "5-3")
    >>> reg.piece(bytes.fromhex("04a1b2c3"))
    Piece.parse('3-5')
    """

    def __init__(self, tags: dict[str, str] | None = None) -> None:
        self._by_uid: dict[str, Piece] = {}
        self._by_piece: dict[Piece, str] = {}
        for uid, piece in (tags or {}).items():
            self.add(uid, piece)

    # -- lookups ---------------------------------------------------------
    def piece(self, uid: bytes) -> Piece | UnknownTag:
        """The piece this tag stands for, or :class:`UnknownTag`."""
        found = self._by_uid.get(uid.hex())
        return found if found is not None else UnknownTag(bytes(uid))

    def uid_of(self, piece: Piece | str) -> bytes:
        """The UID enrolled for ``piece``. :raises KeyError: when none is."""
        p = piece if isinstance(piece, Piece) else Piece.parse(piece)
        return bytes.fromhex(self._by_piece[p])

    def __contains__(self, piece: object) -> bool:
        if isinstance(piece, str):
            try:
                piece = Piece.parse(piece)
            except ValueError:
                return False
        return piece in self._by_piece

    def __len__(self) -> int:
        return len(self._by_uid)

    def __iter__(self) -> Iterator[tuple[bytes, Piece]]:
        for uid, piece in sorted(self._by_uid.items()):
            yield bytes.fromhex(uid), piece

    # -- changes ---------------------------------------------------------
    def add(self, uid: bytes | str, piece: Piece | str) -> None:
        """Enrol ``uid`` as ``piece``.

        :raises TagRegistryError: when the UID is already enrolled, or the
            piece already has a tag (a set must stay one to one, or the table
            could not tell two tiles apart).
        :raises ValueError: when ``piece`` is not a tile, card or badge.
        """
        key = _uid_hex(uid)
        p = piece if isinstance(piece, Piece) else Piece.parse(piece)
        if key in self._by_uid:
            raise TagRegistryError(say("tag {uid} is already enrolled as {piece}", uid=key, piece=str(self._by_uid[key])))
        if p in self._by_piece:
            raise TagRegistryError(say("{piece} is already enrolled with tag {uid}", piece=str(p), uid=self._by_piece[p]))
        self._by_uid[key] = p
        self._by_piece[p] = key

    def remove(self, uid: bytes | str) -> Piece:
        """Forget a tag (a lost or damaged sticker); returns what it was."""
        key = _uid_hex(uid)
        try:
            p = self._by_uid.pop(key)
        except KeyError:
            raise TagRegistryError(say("tag {uid} is not enrolled", uid=key)) from None
        del self._by_piece[p]
        return p

    def missing(self, kind: SetKind = "tiles") -> list[str]:
        """Pieces of a full set that have no tag yet, in set order."""
        return [name for name in _set_members(kind) if Piece.parse(name) not in self._by_piece]

    # -- files -----------------------------------------------------------
    def to_json(self) -> dict[str, object]:
        return {"format": FORMAT, "tags": {uid: p.text for uid, p in sorted(self._by_uid.items())}}

    @classmethod
    def from_json(cls, obj: object, source: str = "registry") -> TagRegistry:
        """Build from the decoded file; every problem is listed in one error."""
        if not isinstance(obj, dict):
            raise TagRegistryError(say("{source}: expected a JSON object", source=source))
        if obj.get("format") != FORMAT:
            raise TagRegistryError(
                say("{source}: format must be {expected!r}, got {got!r}", source=source, expected=FORMAT,
                    got=obj.get("format"))
            )
        tags = obj.get("tags")
        if not isinstance(tags, dict):
            raise TagRegistryError(say("{source}: 'tags' must be an object uid -> piece", source=source))
        extra = sorted(set(obj) - {"format", "tags"})
        problems: list[str] = [say("unknown field {field!r}", field=k) for k in extra if not k.startswith("x-")]
        reg = cls()
        for uid, piece in tags.items():
            if not isinstance(piece, str):
                problems.append(say("tag {uid}: piece must be a string, got {type}", uid=uid[:40], type=type(piece).__name__))
                continue
            try:
                reg.add(uid, piece)
            except ValueError as exc:
                problems.append(say("tag {uid}: {error}", uid=uid, error=message_of(exc)))
        if problems:
            raise TagRegistryError(say("{source}: {problems}", source=source, problems=joined(problems)))
        return reg

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> TagRegistry:
        """Read a registry file. :raises TagRegistryError: with every problem."""
        p = Path(path)
        try:
            obj = json.loads(p.read_text(encoding="utf-8"), object_pairs_hook=_no_duplicates)
        except OSError as exc:
            raise TagRegistryError(say("{file}: cannot read: {error}", file=str(p), error=exc.strerror or str(exc))) from None
        except json.JSONDecodeError as exc:
            raise TagRegistryError(say("{file}: not valid JSON: {error}", file=str(p), error=str(exc))) from None
        except RecursionError:
            raise TagRegistryError(say("{file}: nested too deeply to be a tag registry", file=str(p))) from None
        except ValueError as exc:  # a duplicate tag id, a number of thousands of digits
            reason = message_of(exc)
            raise TagRegistryError(say("{file}: {error}", file=str(p),
                                       error=reason if hasattr(reason, "template") else reason[:120])) from None
        return cls.from_json(obj, source=str(p))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the file atomically (temporary file, fsync, rename), so a power
        cut never leaves a half-written registry."""
        p = Path(path)
        # A registry's folder (/var/lib/tablesense on a fresh Pi) may not exist yet.
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        data = json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)

    @classmethod
    def virtual(cls, seed: int = 0) -> TagRegistry:
        """The registry of the virtual table: every tile and every card of a
        52-card deck (which holds the 32-card deck) with a made-up 7-byte
        NXP-style UID (first byte 0x04), the same for the same seed."""
        rng = random.Random(f"tablesense-virtual-tags-{seed}")
        reg = cls()
        used: set[bytes] = set()
        for name in all_tiles() + all_cards(52):
            while True:
                uid = bytes([0x04]) + bytes(rng.getrandbits(8) for _ in range(6))
                if uid not in used:
                    break
            used.add(uid)
            reg.add(uid, name)
        return reg

