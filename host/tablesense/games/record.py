"""Game records (format ``tablesense.record/1``, ``docs/record-format.md``): read, write, replay.

A record is the evidence of a match: the table archives it after every hand,
the tournament director stores it and re-checks it. :func:`replay` validates
the fields every game shares, then hands the record to the game's engine,
which checks it move by move. The same call backs ``tablesense rules replay``.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from tablesense.games.common import (
    MAX_NUMBER,
    RecordFormatError,
    ReplayResult,
    is_plain_number,
    message_of,
    say,
    short_repr,
)
from tablesense.games.registry import find_game, names

__all__ = ["FORMAT", "MAX_RECORD_BYTES", "dumps", "load", "loads", "read_limited", "replay", "write"]

MAX_RECORD_BYTES = 8 * 1024 * 1024
"""The largest record read (8 MiB): a long match's record is a few hundred
kilobytes, and the director takes at most 1 MB per message."""

FORMAT = "tablesense.record/1"
"""The value of a record's ``format`` field."""


_COMMON = ("format", "game", "variant", "options", "hands")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise RecordFormatError(say("the key {key!r} appears twice in one object", key=key))
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise RecordFormatError(say("{name} is not a JSON number", name=name))


MAX_DEPTH = 32
"""How deeply arrays and objects may nest. A record needs 6 levels (record,
hands, round, events, event, swap); the limit keeps a hostile file from exhausting the
parser or the engines (which quote values in their messages)."""


def _int(text: str) -> int:
    digits = text.lstrip("-")
    # compare lengths first: int() of thousands of digits is slow and limited
    if len(digits) > len(str(MAX_NUMBER)) or abs(value := int(text)) > MAX_NUMBER:
        raise RecordFormatError(
            say("the integer {text}{text2} ({n_digits} digits) is too large: numbers in a record are at most {MAX_NUMBER} in size", text=text[:20], text2='...' if len(text) > 20 else '', n_digits=len(digits), MAX_NUMBER=MAX_NUMBER)
        )
    return value


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or abs(value) > MAX_NUMBER:
        shown = text if len(text) <= 24 else text[:21] + "..."
        raise RecordFormatError(
            say("the number {shown} is out of range: numbers in a record are finite and at most {MAX_NUMBER} in size", shown=shown, MAX_NUMBER=MAX_NUMBER)
        )
    return value


def _depth_ok(obj: Any) -> bool:
    """Whether ``obj`` nests at most :data:`MAX_DEPTH` levels (iterative: a deep
    value must not exhaust the stack here either)."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > MAX_DEPTH:
                return False
            items = value.values() if isinstance(value, dict) else value
            stack.extend((v, depth + 1) for v in items if isinstance(v, dict | list))
    return True


def _plain_ok(obj: Any, depth: int = 1) -> bool:
    """True when ``obj`` is plain JSON (exact dict, list, str, int, float, bool,
    None) within the nesting and number limits; False when it is not, or when it
    holds anything else (then :func:`_check_parsed` walks it the careful way and
    names the fault). Recursive, but never deeper than ``MAX_DEPTH`` + 1 calls.
    The director checks every record of every result: this is about eight
    times faster than the careful walk."""
    t = type(obj)
    if t is dict:
        if depth > MAX_DEPTH:
            return False
        for v in obj.values():
            tv = type(v)
            if tv is not str and tv is not bool and v is not None and not _plain_ok(v, depth + 1):
                return False
        return True
    if t is list:
        if depth > MAX_DEPTH:
            return False
        for v in obj:
            tv = type(v)
            if tv is not str and tv is not bool and v is not None and not _plain_ok(v, depth + 1):
                return False
        return True
    if t is int:
        return -MAX_NUMBER <= obj <= MAX_NUMBER
    if t is float:
        return math.isfinite(obj) and -MAX_NUMBER <= obj <= MAX_NUMBER
    return t is str or t is bool or obj is None


def _check_parsed(obj: Any) -> None:
    """For a record handed over already parsed (the director, the table): the
    limits :func:`loads` applies while parsing — nesting, and numbers that are
    finite and at most :data:`MAX_NUMBER` in size."""
    if _plain_ok(obj):
        return
    if not _depth_ok(obj):
        raise RecordFormatError(
            say("arrays and objects are nested more than {MAX_DEPTH} levels deep: not a game record", MAX_DEPTH=MAX_DEPTH)
        )
    stack: list[Any] = [obj]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
        elif (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and not is_plain_number(value)
        ):
            raise RecordFormatError(
                say("the number {short_value} is out of range: numbers in a record are finite and at most {MAX_NUMBER} in size", short_value=short_repr(value), MAX_NUMBER=MAX_NUMBER)
            )


def loads(text: str | bytes) -> dict[str, Any]:
    """Parse a record's JSON text (UTF-8). Raises :class:`RecordFormatError`."""
    _check_size(len(text))  # characters of a str: each is at least a byte
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordFormatError(say("a record is UTF-8 text: {exc}", exc=message_of(exc))) from None
    too_deep = RecordFormatError(
        say("arrays and objects are nested more than {MAX_DEPTH} levels deep: not a game record", MAX_DEPTH=MAX_DEPTH)
    )
    try:
        obj = json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_no_constant,
            parse_int=_int,
            parse_float=_float,
        )
    except json.JSONDecodeError as exc:
        raise RecordFormatError(
            say("not valid JSON: {msg} at line {lineno}, column {colno}", msg=exc.msg, lineno=exc.lineno, colno=exc.colno)
        ) from None
    except RecursionError:
        raise too_deep from None
    if not _depth_ok(obj):
        raise too_deep
    if not isinstance(obj, dict):
        raise RecordFormatError(say("a game record is one JSON object"))
    return obj


def load(path: str | Path) -> dict[str, Any]:
    """Read a record file. Raises :class:`RecordFormatError` (also when unreadable).

    Only a regular file is read (``/dev/zero`` or a pipe would never end), and
    no more than ``MAX_RECORD_BYTES`` of it."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the open
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise RecordFormatError(say("{path} is not a regular file: a game record is a file (or - for stdin)",
                                            path=path))
            data = read_limited(f)
    except OSError as exc:
        raise RecordFormatError(say("cannot read {path}: {exc_strerror}", path=path, exc_strerror=exc.strerror or exc)) from None
    return loads(data)


def read_limited(stream: BinaryIO) -> bytes:
    """At most ``MAX_RECORD_BYTES`` of ``stream`` (a file, stdin); a longer one is refused unread."""
    data = stream.read(MAX_RECORD_BYTES + 1)
    _check_size(len(data))
    return data


def _check_size(n: int) -> None:
    if n > MAX_RECORD_BYTES:
        raise RecordFormatError(say("a game record has at most {limit} bytes; this one has more", limit=MAX_RECORD_BYTES))


def dumps(record: Mapping[str, Any]) -> str:
    """A record as JSON text: stable field order, one hand per block, UTF-8."""
    return json.dumps(record, ensure_ascii=False, indent=1) + "\n"


def write(record: Mapping[str, Any], path: str | Path) -> None:
    """Write a record file atomically (a crash leaves the old file or the new one)."""
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(dumps(record), encoding="utf-8")
    tmp.replace(target)


def check_common(obj: Mapping[str, Any]) -> None:
    """Validate the fields every game shares; raises :class:`RecordFormatError`."""
    if not isinstance(obj, Mapping):
        raise RecordFormatError(say("a game record is one JSON object"))
    unknown = [k for k in obj if k not in _COMMON and not str(k).startswith("x-")]
    if unknown:
        raise RecordFormatError(say("unknown fields {unknown} (writer fields start with 'x-')", unknown=unknown))
    missing = [k for k in _COMMON if k not in obj and k != "options"]
    if missing:
        raise RecordFormatError(say("missing fields {missing}", missing=missing))
    if obj["format"] != FORMAT:
        raise RecordFormatError(say("'format' must be {FORMAT!r}, got {obj_format!r}", FORMAT=FORMAT, obj_format=obj['format']))
    if not isinstance(obj["game"], str) or obj["game"] not in names():  # a list is not hashable: check the type first
        game = obj["game"] if isinstance(obj["game"], str) else short_repr(obj["game"])
        raise RecordFormatError(say("'game' is one of {games}; got {obj_game!r}", games=', '.join(names()), obj_game=game))
    if not isinstance(obj["variant"], str):
        raise RecordFormatError(say("'variant' is a string, got {obj_variant!r}", obj_variant=obj['variant']))
    if not isinstance(obj.get("options", {}), dict):
        raise RecordFormatError(say("'options' is a JSON object"))
    if not isinstance(obj["hands"], list):
        raise RecordFormatError(say("'hands' is a list"))


def replay(obj: Mapping[str, Any] | str | bytes) -> ReplayResult:
    """Check a record (a parsed object or its JSON text) and score it.

    Raises :class:`RecordFormatError` (exit status 2) or
    :class:`~tablesense.games.common.IllegalStepError` (exit status 1).
    """
    if isinstance(obj, str | bytes | bytearray):
        obj = loads(obj)
    else:
        _check_parsed(obj)
    check_common(obj)
    return find_game(obj["game"]).replay(obj)
