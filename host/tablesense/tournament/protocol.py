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
