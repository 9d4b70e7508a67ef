"""The MQTT conversation between tables and the director: topics and message shapes.

Tables publish under ``tablesense/tables/table-N/`` (the broker's ACL allows
nothing else to them); the director addresses a table under
``tablesense/director/table-N/``. Every message a table must not lose goes
through its durable outbox and carries a *key*; the director answers each
with an ``ack`` naming that key, and the table deletes it only then. Keys:

- ``result/E/R/T/V``  — a result, keyed by (event, round, table, revision)
- ``confirm/E/R/T/V`` — the badge taps that confirm result revision V
- ``checkin/E/R/T/M`` — the badges tapped at the start of match M

All outbox messages are JSON objects signed by the table (``sig``).
"""

from __future__ import annotations

from typing import Any

TOPIC_ROOT = "tablesense"

STATUS_ONLINE = "online"
STATUS_OFFLINE = "offline"

KINDS = ("result", "confirm", "checkin")


def table_name(number: int) -> str:
    return f"table-{number}"


def status_topic(table: int) -> str:
    """Retained ``online``/``offline``; ``offline`` is also the table's last will."""
    return f"{TOPIC_ROOT}/tables/{table_name(table)}/status"


def outbox_topic(table: int) -> str:
    return f"{TOPIC_ROOT}/tables/{table_name(table)}/out"


def heartbeat_topic(table: int) -> str:
    return f"{TOPIC_ROOT}/tables/{table_name(table)}/heartbeat"


def assign_topic(table: int) -> str:
    """Retained: the table's matches for the current round (the director's echo)."""
    return f"{TOPIC_ROOT}/director/{table_name(table)}/assign"


def ack_topic(table: int) -> str:
    return f"{TOPIC_ROOT}/director/{table_name(table)}/ack"


#: An ack's status that only says "received, queued": the message passed the
#: intake and will be answered (accepted, duplicate or refused) after its
#: batch is committed. It names the message by the SHA-256 of the bytes the
#: table published (``raw``): the director has not parsed it yet.
QUEUED = "queued"
#: How long a table waits for the real ack of a queued message before it
#: sends it again (a director that crashed meanwhile lost its queue).
QUEUED_WAIT_S = 10.0


def queued_notice(raw_sha256: str) -> bytes:
    """The ``queued`` notice for a message whose bytes hash to ``raw_sha256``."""
    import json

    return json.dumps({"status": QUEUED, "raw": raw_sha256}).encode()


def table_from_topic(topic: str) -> int | None:
    """The table number in ``tablesense/tables/table-N/...``, or None."""
    parts = topic.split("/")
    if len(parts) < 4 or parts[0] != TOPIC_ROOT or parts[1] != "tables":
        return None
    name = parts[2]
    if not name.startswith("table-") or not name[6:].isdigit():
        return None
    return int(name[6:])


def message_key(body: dict[str, Any]) -> str:
    """The idempotency key of an outbox message (see the module docstring)."""
    kind = body.get("kind")
    if kind not in KINDS:
        raise ValueError(f"unknown message kind {kind!r}")
    last = body["match"] if kind == "checkin" else body["revision"]
    return f"{kind}/{body['event']}/{body['round']}/{body['table']}/{last}"


# ------------------------------------------------------------------ limits

#: The largest outbox message the director reads (and the broker passes on):
#: a best-of-five Kems match with every record is well below 300 kB, and a
#: table that sends more is refused without the payload being parsed or stored.
MAX_MESSAGE_BYTES = 1_000_000

#: How deep a message's JSON may nest (a result with its records nests about
#: eight levels); deeper is refused before it can exhaust the parser.
MAX_DEPTH = 32

#: The largest number a message's ids may carry: the database's integer columns
#: are 32-bit (PostgreSQL ``integer``), so larger ids could never be stored.
MAX_ID = 2**31 - 1

ID_FIELDS = ("event", "round", "table", "revision", "match")


class MessageError(ValueError):
    """A message that cannot be read as a table's outbox message (the text says why)."""


def _no_constant(name: str) -> Any:
    raise MessageError(f"{name} is not a number a result may carry")


def parse_message(raw: bytes) -> dict[str, Any]:
    """Parse one outbox message strictly: bounded size and depth, standard JSON only
    (no NaN or Infinity), a JSON object whose ids are integers in range.

    Raises :class:`MessageError` with a short reason that never quotes the payload.
    """
    import json

    if len(raw) > MAX_MESSAGE_BYTES:
        raise MessageError(f"message of {len(raw)} bytes is over the limit of {MAX_MESSAGE_BYTES}")
    try:
        data = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:
        raise MessageError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except MessageError:
        raise
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, too many digits
        raise MessageError(f"not JSON: {str(exc)[:80]}") from None
    if not isinstance(data, dict):
        raise MessageError("not a JSON object")
    if not _nested_within(data, MAX_DEPTH):
        raise MessageError(f"JSON nested deeper than {MAX_DEPTH} levels")
    check_ids(data)
    return data


def _nested_within(obj: Any, limit: int, level: int = 1) -> bool:
    """``depth(obj) <= limit`` for what :func:`json.loads` returns, a few times
    faster than :func:`depth` (every message is walked); recursive, but never
    more than ``limit`` + 1 calls deep."""
    t = type(obj)
    if t is dict:
        if level > limit:
            return False
        return all(_nested_within(v, limit, level + 1) for v in obj.values() if type(v) is dict or type(v) is list)
    if t is list:
        if level > limit:
            return False
        return all(_nested_within(v, limit, level + 1) for v in obj if type(v) is dict or type(v) is list)
    return depth(obj) <= limit - level + 1


def depth(obj: Any) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0), without recursion."""
    best = 0
    stack: list[tuple[Any, int]] = [(obj, 0)]
    while stack:
        value, d = stack.pop()
        if isinstance(value, dict):
            best = max(best, d + 1)
            stack.extend((v, d + 1) for v in value.values())
        elif isinstance(value, list):
            best = max(best, d + 1)
            stack.extend((v, d + 1) for v in value)
    return best


def check_ids(body: dict[str, Any]) -> None:
    """Every id field present must be an integer in 1..MAX_ID (not a bool, not a float)."""
    for name in ID_FIELDS:
        if name not in body:
            continue
        v = body[name]
        if isinstance(v, bool) or not isinstance(v, int):
            raise MessageError(f"{name} must be an integer, not {type(v).__name__}")
        if not 0 < v <= MAX_ID:
            raise MessageError(f"{name} is out of range (1 to {MAX_ID})")
