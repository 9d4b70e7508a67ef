"""Issue 13: what an attacker with one table's password (and a careless operator)
did to the director, each reproduced and now refused, with an audit row where
the director is the one refusing; storage tests run on SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import threading
import zipfile
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event, select, text
from sqlalchemy.exc import OperationalError
from typer.testing import CliRunner

from tablesense.cli import app as cli_app
from tablesense.journal.outbox import TableOutbox
from tablesense.tournament import protocol as proto
from tablesense.tournament.bridge import BrokerURL, DirectorBridge
from tablesense.tournament.db import AuditEntry, Database, Result
from tablesense.tournament.export import export_event, records_archive, results_csv, standings_csv
from tablesense.tournament.security import digest
from tablesense.tournament.service import AUDIT_BUDGET, Director, DirectorError
from tablesense.tournament.web import create_app, hash_password

from .test_director import make_event, result_for

runner = CliRunner()


class _Published:
    """Stands in for the bridge's MQTT client: keeps what would be published."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes]] = []

    def publish(self, topic: str, payload: Any, qos: int = 0, retain: bool = False) -> None:
        self.sent.append((topic, payload.encode() if isinstance(payload, str) else bytes(payload)))


def _bridge(d: Director) -> tuple[DirectorBridge, _Published]:
    b = DirectorBridge(d, BrokerURL("127.0.0.1", 1))
    pub = _Published()
    b._client = pub  # type: ignore[assignment]
    return b, pub


def _refusals(d: Director) -> list[dict[str, Any]]:
    return [a for a in d.audit_log() if a["action"] == "refused"]


def _junk_audit(d: Director, count: int) -> None:
    """``count`` chained refusal rows written in one go (what a flood left before the fix)."""
    import time

    from tablesense.tournament.audit import _audit_hash

    with d.db.session() as s:
        last = s.scalar(select(AuditEntry).where(AuditEntry.event_id == d.event_id).order_by(AuditEntry.id.desc()).limit(1))
        prev = last.hash if last is not None else "0" * 64
        rows = []
        for i in range(count):
            ts = time.time()
            h = _audit_hash(prev, ts, "table-1", "refused", None, "junk", {"i": i})
            rows.append(AuditEntry(event_id=d.event_id, ts=ts, actor="table-1", action="refused", match_id=None,
                                   reason="junk", detail={"i": i}, prev_hash=prev, hash=h))
            prev = h
        s.add_all(rows)


# ------------------------------------------------------------------ size


def test_oversized_message_is_refused_by_digest_and_size_never_copied(db_url: str) -> None:
    d, _ = make_event(db_url)
    d.pair_next_round()
    bridge, pub = _bridge(d)
    junk = json.dumps({"kind": "result", "event": d.event_id, "pad": "x" * 3_000_000}).encode()
    bridge._handle(proto.outbox_topic(1), junk)
    [ref] = _refusals(d)
    assert ref["detail"]["digest"] == hashlib.sha256(junk).hexdigest() and ref["detail"]["size"] == len(junk)
    assert len(json.dumps(ref)) < 1000, "the audit row must not carry the payload"
    [(topic, ack)] = pub.sent
    assert topic == proto.ack_topic(1) and len(ack) < 600 and b"xxxx" not in ack
    assert json.loads(ack)["status"] == "refused"
    # a refusal of a parsed message (a forgery with a huge field) is audited by digest and size too
    bridge._handle(proto.outbox_topic(1), json.dumps({"kind": "result", "event": 1, "table": 1, "round": 1,
                                                      "revision": 1, "match": 1, "sig": "A" * 900_000}).encode())
    ref2 = _refusals(d)[-1]
    assert ref2["detail"]["size"] > 900_000 and len(json.dumps(ref2)) < 1000
    assert len(pub.sent[-1][1]) < 600
    data = export_event(d)
    assert len(json.dumps(data)) < 50_000
    # what arrives over a broker without the size limit is dropped as it arrives, not queued
    import paho.mqtt.client as mqtt

    msg = mqtt.MQTTMessage(topic=proto.outbox_topic(1).encode())
    msg.payload = junk
    bridge._on_message(bridge._client, None, msg)  # type: ignore[arg-type]
    item = bridge._intake.take(0)
    assert item is not None
    _table, topic, queued = item
    assert len(queued) == 0 and queued.sha256 == hashlib.sha256(junk).hexdigest()  # type: ignore[attr-defined]
    bridge._handle(topic, queued)
    assert json.loads(pub.sent[-1][1])["status"] == "refused"
    assert _refusals(d)[-1]["detail"] == {**ref["detail"], "key": "?"}


def test_the_generated_broker_drops_packets_over_the_limit(tls_broker) -> None:  # type: ignore[no-untyped-def]
    import paho.mqtt.client as mqtt

    from tablesense.tournament.bridge import make_client

    got: list[int] = []
    ready = threading.Event()
    d = make_client("d-size", BrokerURL.parse(tls_broker.url("director")), clean=True)
    def on_connect(c: mqtt.Client, *_a: Any) -> None:
        c.subscribe(f"{proto.TOPIC_ROOT}/tables/#", 1)
        ready.set()

    d.on_connect = on_connect
    d.on_message = lambda _c, _u, m: got.append(len(m.payload))
    b = BrokerURL.parse(tls_broker.url("director"))
    d.connect(b.host, b.port)
    d.loop_start()
    assert ready.wait(5)
    t = make_client("t-size", BrokerURL.parse(tls_broker.url("table-1")), clean=True)
    t.connect(b.host, b.port)
    t.loop_start()
    try:
        small = t.publish(proto.outbox_topic(1), b"x" * 10_000, qos=1)
        small.wait_for_publish(5)
        t.publish(proto.outbox_topic(1), b"y" * (proto.MAX_MESSAGE_BYTES + 100_000), qos=1)
        import time

        time.sleep(1.5)
        assert got == [10_000], "only the message under the limit reaches the director"
        conf = tls_broker.files.conf.read_text()
        assert f"max_packet_size {proto.MAX_MESSAGE_BYTES + 4096}" in conf
    finally:
        for c in (t, d):
            c.disconnect()
            c.loop_stop()
    assert isinstance(mqtt.MQTT_ERR_SUCCESS, int)


# ------------------------------------------------------------------ audit log at scale


def test_refusals_and_failed_logins_are_rate_limited_per_source(db_url: str) -> None:
    d, _ = make_event(db_url)
    d.pair_next_round()
    bridge, pub = _bridge(d)
    for i in range(120):
        bridge._handle(proto.outbox_topic(1), b"not json %d" % i)
    for i in range(3):
        bridge._handle(proto.outbox_topic(2), b"also junk %d" % i)
    assert len(pub.sent) == 123, "every message is still answered"
    by_table = [a["actor"] for a in _refusals(d)]
    assert by_table.count("table-1") == AUDIT_BUDGET and by_table.count("table-2") == 3
    d.flush_audit_budget(force=True)
    [sup] = [a for a in d.audit_log() if a["action"] == "refusals-suppressed"]
    assert sup["actor"] == "table-1" and sup["detail"]["count"] == 120 - AUDIT_BUDGET
    assert d.verify_audit_chain(full=True)


def test_pages_never_read_the_whole_audit_log(db_url: str) -> None:
    d, _ = make_event(db_url)
    _junk_audit(d, 3000)
    c = TestClient(create_app(d, password_hash=hash_password("letmein-long-enough"), secret_key="k"))
    assert c.get("/standings").status_code == 200  # the first check of a director is a full one
    statements: list[str] = []

    def seen(_conn: Any, _cur: Any, statement: str, *_a: Any) -> None:
        if "ts_audit" in statement and "SELECT" in statement:
            statements.append(statement)

    event.listen(d.db.engine, "before_cursor_execute", seen)
    try:
        for page in ("/standings", "/pairings", "/crosstable", "/api/event", "/standings.csv"):
            assert c.get(page).status_code == 200
        c.post("/login", data={"password": "letmein-long-enough"})
        r = c.get("/audit?page=3")
        assert r.status_code == 200 and "junk" in r.text
    finally:
        event.remove(d.db.engine, "before_cursor_execute", seen)
    assert statements
    for st in statements:
        assert "LIMIT" in st or "ts_audit.id >" in st or "ts_audit.id = " in st or "count(" in st, st
    assert len(c.get("/api/event").json()["audit"]) == 100


def test_audit_chain_check_is_incremental_but_catches_removal(db_url: str) -> None:
    d, _ = make_event(db_url)
    assert d.verify_audit_chain()
    d.audit("director", "note", reason="one more")
    assert d.verify_audit_chain()
    upto = d.audit_trail._verified[0]
    assert upto == d.audit_log()[-1]["id"]
    # someone drops the append-only triggers and deletes the newest entry: the next (incremental) check says so
    from sqlalchemy import delete

    from tablesense.tournament.db import downgrade

    downgrade(d.db.engine, "0001")
    with d.db.session() as s:
        s.execute(delete(AuditEntry).where(AuditEntry.id == upto))
    assert not d.verify_audit_chain()


# ------------------------------------------------------------------ a forged copy


def test_a_forged_copy_cannot_cancel_the_real_result(db_url: str, tmp_path: Path) -> None:
    d, key = make_event(db_url)
    d.pair_next_round()
    m1 = next(m for m in d.matches(1) if m.table_no == 1)
    real = result_for(d, m1.id, key, revision=1)
    journal = TableOutbox(tmp_path / "table.sqlite", 1, digest)
    k = proto.message_key(real)
    journal.queue(k, real)
    # the director stores the real result, then dies before its ack goes out
    assert d.ingest(1, real).status == "accepted"
    # a copy with a broken signature arrives: refused, and its ack names the copy, not the real one
    forged = dict(real, sig=real["sig"][:-4] + "AAAA")
    ack = d.ingest(1, forged)
    assert ack.status == "refused" and ack.reason.startswith("forged")
    assert _refusals(d)[-1]["detail"]["digest"] == digest(forged)
    assert not journal.acked(ack.key, ack.digest, ack.status), "the refusal of a copy must not touch the real result"
    assert journal.ack_status(k) is None and [p[0] for p in journal.pending()] == [k]
    # the table re-sends the real one: a duplicate, acknowledged with the real message's digest
    again = d.ingest(1, real)
    assert again.status == "duplicate" and again.digest == digest(real)
    assert journal.acked(again.key, again.digest, again.status) and journal.ack_status(k) == "duplicate"
    journal.close()


def test_a_table_cannot_read_its_own_outgoing_topic(broker) -> None:  # type: ignore[no-untyped-def]
    import time

    from tablesense.tournament.bridge import make_client

    got: list[str] = []
    b = BrokerURL.parse(broker.url("table-1"))
    spy = make_client("spy", b, clean=True)
    def on_connect(c: Any, *_a: Any) -> None:
        c.subscribe(f"{proto.TOPIC_ROOT}/tables/table-1/#", 1)

    spy.on_connect = on_connect
    spy.on_message = lambda _c, _u, m: got.append(m.topic)
    spy.connect(b.host, b.port)
    spy.loop_start()
    t = make_client("real-table-1", b, clean=True)
    t.connect(b.host, b.port)
    t.loop_start()
    try:
        time.sleep(0.5)
        t.publish(proto.outbox_topic(1), b'{"kind":"result"}', qos=1).wait_for_publish(5)
        time.sleep(0.8)
        assert got == [], "table-1's password must not read table-1's results"
    finally:
        for c in (t, spy):
            c.disconnect()
            c.loop_stop()


# ------------------------------------------------------------------ concurrent writers


def test_audit_appends_from_two_processes_never_fork_the_chain(db_url: str) -> None:
    d, _ = make_event(db_url)
    # The CLI and a running director: two engines (two connection pools) on one database.
    other = Director(Database(db_url), d.event_id)
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def write(director: Director, who: str) -> None:
        try:
            start.wait()
            for i in range(15):
                director.audit(who, "check-in", reason=str(i))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(x, f"w{i}")) for i, x in enumerate((d, other, d, other))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with d.db.session() as s:
        prevs = list(s.scalars(select(AuditEntry.prev_hash).where(AuditEntry.event_id == d.event_id)))
    assert len(prevs) == len(set(prevs)), "two entries chained to the same predecessor: the chain forked"
    assert d.verify_audit_chain(full=True) and other.verify_audit_chain(full=True)


# ------------------------------------------------------------------ NaN and Infinity


def test_nan_and_infinity_scores_are_refused_everywhere(db_url: str, tmp_path: Path) -> None:
    d, key = make_event(db_url)
    d.pair_next_round()
    m = d.matches(1)[0]
    for bad in ((math.nan, 0.0), (math.inf, 0.0), (0.0, -math.inf), (-1.0, 3.0)):
        with pytest.raises(DirectorError, match="NaN and Infinity are not scores"):
            d.correct(m.id, bad, None, "typo", "td")
    assert sum(a["action"] == "correction-refused" for a in d.audit_log()) == 4
    json.dumps(export_event(d), allow_nan=False)  # strict JSON still
    # a table's message with NaN is refused at the parser, and audited
    bridge, pub = _bridge(d)
    m1 = next(x for x in d.matches(1) if x.table_no == 1)
    body = {k: v for k, v in result_for(d, m1.id, key, revision=1).items() if k != "sig"}
    raw = json.dumps(key.sign(body)).replace('"score": [', '"score": [NaN, ', 1).encode()
    bridge._handle(proto.outbox_topic(1), raw)
    assert json.loads(pub.sent[-1][1])["status"] == "refused" and "NaN" in _refusals(d)[-1]["reason"]


def test_cli_correct_says_what_a_score_looks_like_and_what_it_did(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'ev.db'}"
    assert runner.invoke(cli_app, ["tournament", "create", "Open", "--db", db, "-o", "target=50"]).exit_code == 0
    for i in range(2):
        assert runner.invoke(cli_app, ["tournament", "register", f"Team {i}", "--db", db]).exit_code == 0
    assert runner.invoke(cli_app, ["tournament", "add-table", "1", "--db", db, "--key-dir", str(tmp_path)]).exit_code == 0
    assert runner.invoke(cli_app, ["tournament", "pair", "--db", db]).exit_code == 0
    for bad in ("abc", "nan-0", "inf-0", "1e999-0", "-"):
        r = runner.invoke(cli_app, ["tournament", "correct", "1", "--score", bad, "--reason", "x", "--db", db])
        assert r.exit_code == 2, (bad, r.output)
        assert "is not a score" in r.output and "150-97" in r.output
    first = Director(Database(db), 1).matches(1)[0].entrant_a
    r = runner.invoke(cli_app, ["tournament", "correct", "1", "--score", "50-20", "--winner", str(first), "--reason", "sheet",
                                "--db", db])
    assert r.exit_code == 0, r.output
    assert "round 1, table 1" in r.stdout and "no result -> 50-20" in r.stdout and f"winner #{first} Team {first - 1}" in r.stdout
    assert "audit log" in r.stdout
    # a wrong argument exits 2, a failure 1 (docs/troubleshooting.md)
    assert runner.invoke(cli_app, ["tournament", "export", "--db", db, "--csv", "nope"]).exit_code == 2
    assert runner.invoke(cli_app, ["tournament", "create", "X", "--db", db, "-o", "novalue"]).exit_code == 2
    assert runner.invoke(cli_app, ["tournament", "create", "X", "--db", db, "-o", "target=NaN"]).exit_code == 2
    assert runner.invoke(cli_app, ["director", "serve", "--db", db, "--broker", "http://h"]).exit_code == 2
    assert runner.invoke(cli_app, ["tournament", "correct", "99", "--score", "1-0", "--winner", "1", "--reason", "x",
                                   "--db", db]).exit_code == 1
    r = runner.invoke(cli_app, ["tournament", "export", "--db", db, "--json"])
    json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"non-standard JSON: {c}"))


def test_help_texts_name_commands_that_exist() -> None:
    r = runner.invoke(cli_app, ["play", "--help"], terminal_width=200)
    assert r.exit_code == 0
    flat = " ".join(re.sub(r"[│╭╮╰╯─]", " ", r.stdout).split())
    assert "tournament mosquitto-config" in flat and "tournament add-table" in flat
    assert "broker-config" not in flat and "director add-table" not in flat
    for cmd in (["tournament", "mosquitto-config", "--help"], ["tournament", "add-table", "--help"]):
        assert runner.invoke(cli_app, cmd).exit_code == 0


# ------------------------------------------------------------------ sessions and logins


def _login(c: TestClient, password: str = "letmein-long-enough") -> str:
    r = c.post("/login", data={"password": password}, follow_redirects=True)
    assert r.status_code == 200, r.text
    m = re.search(r'name="csrf" value="([^"]+)"', r.text)
    assert m
    return m.group(1)


def _app(d: Director, **kw: Any) -> TestClient:
    return TestClient(create_app(d, password_hash=hash_password("letmein-long-enough"), secret_key="k",
                                 login_delay_s=0.01, **kw))


def test_logout_ends_the_session_server_side(sqlite_url: str) -> None:
    d, _ = make_event(sqlite_url)
    c = _app(d)
    token = _login(c)
    copied = dict(c.cookies)
    assert c.post("/logout", follow_redirects=False).status_code == 303
    thief = _app(d)
    thief = TestClient(c.app)
    thief.cookies.update(copied)
    r = thief.post("/director/register", data={"csrf": token, "name": "Ghost pair", "members": "G, H"},
                   follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/login"
    assert "Ghost pair" not in [e.name for e in d.entrants()]
    assert thief.get("/director", follow_redirects=False).headers["location"] == "/login"


def test_session_cookie_is_secure_over_tls_and_short_lived(sqlite_url: str) -> None:
    d, _ = make_event(sqlite_url)
    c = TestClient(create_app(d, password_hash=hash_password("letmein-long-enough"), secure_cookies=True),
                   base_url="https://testserver")
    r = c.post("/login", data={"password": "letmein-long-enough"}, follow_redirects=False)
    cookie = r.headers["set-cookie"].lower()
    assert "secure" in cookie and "max-age=28800" in cookie and "samesite=strict" in cookie and "httponly" in cookie


def test_wrong_passwords_are_slowed_then_locked_out(db_url: str) -> None:
    import time

    d, _ = make_event(db_url)
    c = _app(d)
    t0 = time.monotonic()
    for _ in range(5):
        assert c.post("/login", data={"password": "guess"}).status_code == 401
    assert time.monotonic() - t0 >= 0.01 * (1 + 2 + 4 + 8 + 16)
    r = c.post("/login", data={"password": "letmein-long-enough"})
    assert r.status_code == 429 and "too many wrong passwords" in r.text
    actions = [a["action"] for a in d.audit_log()]
    assert actions.count("login-failed") == 5 and "login-locked" in actions
    for _ in range(40):
        c.post("/login", data={"password": "guess"})
    assert len([a for a in d.audit_log() if a["actor"].startswith("web:")]) <= AUDIT_BUDGET


def test_director_password_has_a_minimum_length(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'ev.db'}"
    assert runner.invoke(cli_app, ["tournament", "create", "Open", "--db", db]).exit_code == 0
    r = runner.invoke(cli_app, ["director", "serve", "--db", db, "--no-broker"], env={"TABLESENSE_DIRECTOR_PASSWORD": "short"})
    assert r.exit_code == 1 and "at least 12" in r.output


# ------------------------------------------------------------------ private badges


def test_badge_ids_are_not_in_the_public_export(db_url: str) -> None:
    d, key = make_event(db_url)
    d.pair_next_round()
    m1 = next(m for m in d.matches(1) if m.table_no == 1)
    res = result_for(d, m1.id, key, revision=1)
    assert d.ingest(1, res).status == "accepted"
    check = key.sign({"kind": "checkin", "event": d.event_id, "round": 1, "table": 1, "match": m1.id,
                      "badges": ["b1a", "b2a", "b3a", "b4a"]})
    d.ingest(1, check)
    conf = key.sign({"kind": "confirm", "event": d.event_id, "round": 1, "table": 1, "revision": 1, "match": m1.id,
                     "badges": ["b1a", "b2a", "b3a", "b4a"]})
    assert d.ingest(1, conf).status == "accepted"
    c = TestClient(create_app(d, password_hash=hash_password("x" * 12)))
    blobs = [c.get("/export.json").text, c.get("/api/event").text]
    z = zipfile.ZipFile(io.BytesIO(c.get("/records.zip").content))
    blobs += [z.read(n).decode() for n in z.namelist()]
    for blob in blobs:
        for badge in ("b1a", "b2a", "b3a", "b4a"):
            assert f'"{badge}"' not in blob  # as a JSON string (hashes hold such hex by chance)
    assert any(a["action"] == "result-confirmed" and a["detail"].get("taps") == 4 for a in d.audit_log())
    assert d.verify_audit_chain(full=True)


# ------------------------------------------------------------------ messages with no answer


def test_deep_nesting_and_huge_ids_are_refused_and_audited(db_url: str) -> None:
    d, key = make_event(db_url)
    d.pair_next_round()
    bridge, pub = _bridge(d)
    deep = b'{"kind": "result", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    bridge._handle(proto.outbox_topic(1), deep)
    assert "nested deeper" in _refusals(d)[-1]["reason"]
    m1 = next(m for m in d.matches(1) if m.table_no == 1)
    for revision in (2**64, 2**63 + 1, 2**31):
        body = {k: v for k, v in result_for(d, m1.id, key, revision=1).items() if k != "sig"}
        raw = json.dumps(key.sign(dict(body, revision=revision))).encode()
        bridge._handle(proto.outbox_topic(1), raw)
        assert "revision is out of range" in _refusals(d)[-1]["reason"]
    # and straight to the director (another transport): the same refusal
    body = {k: v for k, v in result_for(d, m1.id, key, revision=1).items() if k != "sig"}
    assert d.ingest(1, key.sign(dict(body, revision=2**64))).status == "refused"
    assert len(pub.sent) == 4 and all(json.loads(p)["status"] == "refused" for _t, p in pub.sent)
    assert len(_refusals(d)) == 5
    with d.db.session() as s:
        assert s.scalar(select(Result.id)) is None


# ------------------------------------------------------------------ web forms


@pytest.mark.parametrize("form", [
    ("/director/register", {"name": "N" * 201, "members": "A, B"}, "at most 200 characters"),
    ("/director/register", {"name": "Pair\x00X", "members": "A, B"}, "control characters"),
    ("/director/register", {"name": "Pair Y", "members": "A" * 300 + ", B"}, "at most 200 characters"),
    ("/director/register", {"name": "Pair Z", "members": "A, B", "seed": "9" * 40}, "whole number"),
    ("/director/checkin", {"entrant": "9" * 5000}, "whole number"),
    ("/director/withdraw", {"entrant": str(2**63), "reason": "ill"}, "whole number"),
    ("/director/correct", {"match": "1" * 30, "score_a": "1", "score_b": "0", "reason": "r"}, "whole number"),
    ("/director/correct", {"match": "1", "score_a": "nan", "score_b": "0", "reason": "r"}, "a score is"),
    ("/director/correct", {"match": "1", "score_a": "1e999", "score_b": "0", "reason": "r"}, "a score is"),
])
def test_web_forms_answer_bad_input_with_the_form_and_a_message(sqlite_url: str, form: tuple[str, dict[str, str], str]) -> None:
    """The forms' checks come before any storage: one backend (the audit's
    storage on both is tested above)."""
    d, _ = make_event(sqlite_url)
    d.pair_next_round()
    c = _app(d)
    token = _login(c)
    url, data, message = form
    r = c.post(url, data={**data, "csrf": token}, follow_redirects=True)
    assert r.status_code == 200 and message in r.text
    assert len(d.entrants()) == 4
    assert [a["detail"]["path"] for a in d.audit_log() if a["action"] == "form-refused"] == [url]


# ------------------------------------------------------------------ CSV and durability


def test_csv_names_are_never_run_as_formulas(sqlite_url: str) -> None:
    d, key = make_event(sqlite_url, n=2)
    d.register("=HYPERLINK(\"http://x\",\"y\")", ["+A", "-B"])
    d.register("@SUM(A1)", ["a", "b"])
    d.pair_next_round()
    out = standings_csv(d) + results_csv(d)
    import csv

    cells = [c for row in csv.reader(io.StringIO(out)) for c in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "@")]
    assert "'=HYPERLINK(\"http://x\",\"y\")" in cells and "'@SUM(A1)" in cells
    assert "-" not in [c[:1] for c in cells if c and not c.lstrip("-").replace(".", "").isdigit()]
    assert records_archive(d)


def test_director_sqlite_commits_are_durable_before_any_ack(sqlite_url: str) -> None:
    db = Database(sqlite_url)
    with db.engine.connect() as conn:
        assert conn.execute(text("PRAGMA synchronous")).scalar() == 2  # FULL
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"


def test_a_failed_commit_during_ingestion_sends_no_ack_and_the_resend_lands_once(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy.orm import Session

    d, key = make_event(db_url)
    d.pair_next_round()
    m1 = next(m for m in d.matches(1) if m.table_no == 1)
    good = result_for(d, m1.id, key, revision=1)
    bridge, pub = _bridge(d)
    real_commit = Session.commit
    fail = {"left": 1}

    def commit(self: Session) -> None:
        if fail["left"]:  # the first commit of the ingestion below: the one that stores the result
            fail["left"] -= 1
            raise OperationalError("COMMIT", {}, Exception("disk I/O error"))
        real_commit(self)

    monkeypatch.setattr(Session, "commit", commit)
    with pytest.raises(OperationalError):
        bridge._handle(proto.outbox_topic(1), json.dumps(good).encode())
    assert pub.sent == [], "nothing stored, nothing acknowledged"
    with d.db.session() as s:
        assert s.scalar(select(Result.id)) is None
    # the table re-sends (no ack came): it lands, once
    bridge._handle(proto.outbox_topic(1), json.dumps(good).encode())
    bridge._handle(proto.outbox_topic(1), json.dumps(good).encode())
    assert [json.loads(p)["status"] for _t, p in pub.sent] == ["accepted", "duplicate"]
    with d.db.session() as s:
        assert len(list(s.scalars(select(Result.id)))) == 1
    assert next(m for m in d.matches(1) if m.id == m1.id).status == "reported"


# ------------------------------------------------------------------ TLS


def test_mqtt_over_tls_verifies_the_broker(tls_broker, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import ssl

    from tablesense.tournament.bridge import make_client
    from tablesense.tournament.mosquitto import write_tls_files

    conf = tls_broker.files.conf.read_text()
    assert "cafile" in conf and "certfile" in conf and "keyfile" in conf
    url = tls_broker.url("table-1")
    assert url.startswith("mqtts://") and "?ca=" in url
    b = BrokerURL.parse(url)
    assert b.tls and b.ca and Path(b.ca).exists()
    ok = make_client("tls-ok", b, clean=True)
    assert ok.connect(b.host, b.port) == 0
    ok.disconnect()
    # a broker whose certificate another CA signed (an impostor) is refused by the table
    other = tmp_path / "other"
    other.mkdir()
    other_ca, _c, _k = write_tls_files(other, ["127.0.0.1"])
    impostor = make_client("tls-bad", BrokerURL(b.host, b.port, "table-1", "x", True, str(other_ca)), clean=True)
    with pytest.raises(ssl.SSLError):
        impostor.connect(b.host, b.port)
    # and a client speaking MQTT in clear gets nowhere
    plain = make_client("plain", BrokerURL(b.host, b.port, "table-1", tls_broker.files.credentials["table-1"]), clean=True)
    with pytest.raises((OSError, ConnectionError)):
        plain.connect(b.host, b.port)
        plain.loop(timeout=1.0)
        plain.loop(timeout=1.0)
        if not plain.is_connected():
            raise ConnectionError("refused")


def test_mosquitto_config_writes_tls_by_default(tmp_path: Path) -> None:
    r = runner.invoke(cli_app, ["tournament", "mosquitto-config", "--out", str(tmp_path / "b"), "--tables", "2",
                                "--name", "director.local"])
    assert r.exit_code == 0, r.output
    conf = (tmp_path / "b" / "mosquitto.conf").read_text()
    assert "listener 8883 127.0.0.1" in conf and "cafile" in conf and "tls_version tlsv1.2" in conf
    from cryptography import x509

    cert = x509.load_pem_x509_certificate((tmp_path / "b" / "server.crt").read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "director.local" in names.get_values_for_type(x509.DNSName)
    assert (tmp_path / "b" / "server.key").stat().st_mode & 0o077 == 0
    assert not (tmp_path / "b" / "ca.key").exists()
    r = runner.invoke(cli_app, ["tournament", "mosquitto-config", "--out", str(tmp_path / "c"), "--tables", "2", "--no-tls"])
    assert "listener 1883 127.0.0.1" in (tmp_path / "c" / "mosquitto.conf").read_text()


def test_a_table_flapping_its_status_cannot_grow_the_log(db_url: str) -> None:
    d, _ = make_event(db_url)
    bridge, _pub = _bridge(d)
    for i in range(200):
        bridge._handle(proto.status_topic(1), b"online" if i % 2 == 0 else b"offline")
    flips = [a for a in d.audit_log() if a["action"] in ("online", "offline")]
    assert len(flips) == AUDIT_BUDGET


def test_twenty_page_loads_at_once_over_a_long_log(db_url: str) -> None:
    """64k junk rows made a standings load 3.5 s and 20 at once gave HTTP 500s."""
    import socket
    import time
    from concurrent.futures import ThreadPoolExecutor

    import httpx
    import uvicorn

    d, _ = make_event(db_url)
    _junk_audit(d, 5000)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(d, password_hash=hash_password("x" * 12)), host="127.0.0.1",
                                           port=port, log_level="warning"))
    th = threading.Thread(target=server.run, daemon=True)
    th.start()
    try:
        end = time.monotonic() + 10
        while not server.started and time.monotonic() < end:
            time.sleep(0.05)
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/standings", timeout=30).status_code == 200
        with ThreadPoolExecutor(20) as pool:
            codes = list(pool.map(lambda p: httpx.get(f"{base}{p}", timeout=30).status_code,
                                  ["/standings", "/pairings", "/crosstable", "/api/event"] * 5))
        assert codes == [200] * 20
    finally:
        server.should_exit = True
        th.join(timeout=10)
