"""The director's ingestion pipeline against a real Mosquitto: the checks and
replays run in worker processes, each message is answered "queued" on
receipt and then acknowledged after its batch's commit, and a batch's audit
entries chain as if written one by one."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tablesense.tournament import protocol as proto
from tablesense.tournament.bridge import BrokerURL, DirectorBridge, wait_until
from tablesense.tournament.mosquitto import DIRECTOR_USER, table_user
from tablesense.tournament.security import TableKey
from tablesense.tournament.table_link import DirectorLink

from .conftest import Broker
from .test_director import make_event, result_for
from .test_hostile_table import Watched


def test_results_checked_in_worker_processes_are_queued_then_acknowledged(broker: Broker, db_url: str) -> None:
    d, key1 = make_event(db_url, n=4)
    d.pair_next_round()
    key2 = TableKey.from_seed(b"table-2")
    by_table = {m.table_no: m for m in d.matches(1) if m.table_no is not None}
    good1 = json.dumps(result_for(d, by_table[1].id, key1, revision=1)).encode()
    forged = result_for(d, by_table[2].id, key2, revision=1)
    forged["score"] = [999.0, 0.0]  # changed after signing
    url = BrokerURL("127.0.0.1", broker.port, DIRECTOR_USER, broker.files.credentials[DIRECTOR_USER])
    bridge = DirectorBridge(d, url, check_workers=2).start()
    t1, t2 = Watched(broker, table_user(1), "t1"), Watched(broker, table_user(2), "t2")
    try:
        assert bridge.wait_connected(30) and t1.up.wait(30) and t2.up.wait(30)
        t1.client.subscribe(proto.ack_topic(1), 1)
        t2.client.subscribe(proto.ack_topic(2), 1)
        time.sleep(0.3)
        t1.client.publish(proto.outbox_topic(1), good1, qos=1)
        t2.client.publish(proto.outbox_topic(2), json.dumps(forged).encode(), qos=1)

        def answers(t: Watched) -> list[dict[str, object]]:
            return [json.loads(m[1]) for m in t.messages]

        assert wait_until(lambda: len(answers(t1)) >= 2 and len(answers(t2)) >= 2, 60), (answers(t1), answers(t2))
    finally:
        for c in (t1, t2):
            c.close()
        bridge.stop()
    first1, ack1 = answers(t1)[:2]
    assert first1 == {"status": "queued", "raw": hashlib.sha256(good1).hexdigest()}
    assert ack1["status"] == "accepted" and ack1["key"] == f"result/{d.event_id}/1/1/1"
    ack2 = answers(t2)[1]
    assert ack2["status"] == "refused" and "forged" in str(ack2["reason"])
    m1 = next(m for m in d.matches(1) if m.table_no == 1)
    assert m1.status == "reported" and m1.result_id is not None
    assert d.verify_audit_chain(full=True)


def test_a_batch_chains_its_audit_entries_and_refuses_each_message_on_its_own(db_url: str) -> None:
    d, key1 = make_event(db_url, n=8)
    keys = {1: key1, **{t: TableKey.from_seed(f"table-{t}".encode()) for t in (2, 3, 4)}}
    for t, k in keys.items():
        d.add_table(t, k.public)
    d.pair_next_round()
    items = []
    for m in d.matches(1):
        assert m.table_no is not None
        body = result_for(d, m.id, keys[m.table_no], revision=1)
        items.append((m.table_no, body, 100))
    stale = dict(items[0][1])
    items.append((items[0][0], stale, 100))  # the same message twice in one batch: a duplicate
    wrong_topic = items[1][1]
    items.append((3 if items[1][0] != 3 else 4, wrong_topic, 100))
    acks = d.ingest_many(items)
    assert [a.status for a in acks] == ["accepted"] * 4 + ["duplicate", "refused"]
    assert "published on" in acks[-1].reason
    assert all(m.result_id is not None for m in d.matches(1))
    assert d.verify_audit_chain(full=True)
    accepted = [a for a in d.audit_log() if a["action"] == "result-accepted"]
    assert len(accepted) == 4


def test_a_message_and_its_body_are_encoded_exactly_as_signed() -> None:
    from tablesense.tournament.checks import _canonical_pair
    from tablesense.tournament.security import canonical

    for body in ({"kind": "result", "é": "ü", "score": [1.5, 2.0], "n": None, "z": {"b": 1, "a": [True, "\u2028"]}},
                 {"kind": "checkin"}, {"zzz": 1, "aaa": {"sig": 2}}):
        m = TableKey.from_seed(b"x").sign(body)
        whole, signed = _canonical_pair(m)
        assert whole == canonical(m)
        assert signed == canonical(body)


def test_a_result_its_correction_and_their_confirmation_in_one_batch(db_url: str) -> None:
    """The batch writes its results in one statement at its end: a confirmation
    later in the same batch still finds the revision that stands, and the match
    ends with the last revision's score, pointing at that revision's row."""
    d, key = make_event(db_url)
    d.pair_next_round()
    m1 = next(m for m in d.matches(1) if m.table_no == 1)
    first, second = result_for(d, m1.id, key, revision=1, seed=1), result_for(d, m1.id, key, revision=2, seed=9)
    assert first["score"] != second["score"]
    badges = {e.id: e.badges for e in d.entrants()}
    assert m1.entrant_b is not None
    confirm = key.sign({"kind": "confirm", "event": d.event_id, "round": 1, "table": 1, "revision": 2, "match": m1.id,
                        "badges": [badges[m1.entrant_a][0], badges[m1.entrant_b][1]]})
    stale = key.sign({"kind": "confirm", "event": d.event_id, "round": 1, "table": 1, "revision": 1, "match": m1.id,
                      "badges": [badges[m1.entrant_a][0], badges[m1.entrant_b][1]]})
    acks = d.ingest_many([(1, first, 100), (1, second, 100), (1, stale, 100), (1, confirm, 100)])
    assert [a.status for a in acks] == ["accepted", "accepted", "refused", "accepted"], acks
    assert "not the result standing" in acks[2].reason
    m = next(x for x in d.matches(1) if x.id == m1.id)
    assert m.confirmed and m.status == "confirmed"
    assert [m.score_a, m.score_b] == second["score"]
    from tablesense.tournament.db import Result

    with d.db.session() as s:
        standing = s.get(Result, m.result_id)
        assert standing is not None and standing.revision == 2 and standing.payload["score"] == second["score"]
    assert [a["action"] for a in d.audit_log()][-4:] == ["result-accepted", "result-accepted", "result-confirmed", "refused"]
    assert d.verify_audit_chain(full=True)


def test_a_queued_result_is_not_sent_again_while_the_director_checks_it(broker: Broker, sqlite_url: str,
                                                                         tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A director that takes 3 s to check a batch: the table's first re-send
    would be due after 0.2 s and three more would follow before the answer;
    the ``queued`` notice holds them, so the table sends its result once and
    still gets its answer (a real table's back-off starts at 0.5 s)."""
    d, key1 = make_event(sqlite_url, n=4)
    d.pair_next_round()
    match = next(m for m in d.matches(1) if m.table_no == 1)
    body = {k: v for k, v in result_for(d, match.id, key1, revision=1).items() if k != "sig"}
    slow = DirectorBridge._check_batch

    def check_slowly(self: DirectorBridge, batch: list[tuple[int, str, bytes]]) -> Any:
        time.sleep(3.0)
        return slow(self, batch)

    monkeypatch.setattr(DirectorBridge, "_check_batch", check_slowly)
    bridge = DirectorBridge(d, BrokerURL("127.0.0.1", broker.port, DIRECTOR_USER,
                                         broker.files.credentials[DIRECTOR_USER])).start()
    table = DirectorLink(1, key1, tmp_path / "outbox.sqlite",
                         BrokerURL("127.0.0.1", broker.port, table_user(1), broker.files.credentials[table_user(1)]),
                         resend_interval=0.2)
    try:
        assert bridge.wait_connected(30)
        table.start()
        assert table.hearing.wait(30), "the broker never confirmed the table's subscriptions"
        key = table.send(body)
        assert wait_until(lambda: table.outbox.ack_status(key) is not None, 60), "the director never answered"
    finally:
        table.stop()
        bridge.stop()
    assert table.outbox.ack_status(key) == "accepted"
    assert table.queued_notices == 1
    assert table.sent == 1, f"sent {table.sent} times while the director held it in its queue"


def test_a_queued_notice_for_no_pending_message_changes_nothing(tmp_path: Path) -> None:
    """A notice naming bytes the table never sent (or sent and had answered) is
    ignored: nothing pending is held back by it."""
    table = DirectorLink(1, TableKey.from_seed(b"table-1"), tmp_path / "outbox.sqlite",
                         BrokerURL("127.0.0.1", 1, table_user(1), "unused"))
    try:
        assert table.queued(hashlib.sha256(b"never sent").hexdigest()) is False
        assert table.queued_notices == 0
    finally:
        table.close()
