"""One hostile table against a real Mosquitto and the director: its password
cannot take another client's connection (client ids are bound to users), and
its flood slows only itself (token bucket and bounded queue per table)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest

import testsupport
from tablesense.tournament import protocol as proto
from tablesense.tournament.bridge import (
    PASSWORD_ENV,
    BrokerURL,
    DirectorBridge,
    director_client_id,
    make_client,
    wait_until,
)
from tablesense.tournament.intake import TABLE_QUEUE_BYTES, Intake, TokenBucket, message_cost
from tablesense.tournament.mosquitto import DIRECTOR_USER, table_user
from tablesense.tournament.security import TableKey, badge_digest, badges_tapped

from .conftest import Broker
from .test_director import make_event, result_for


class Watched:
    """A paho client that records its connections, disconnections and messages."""

    def __init__(self, broker: Broker, user: str, client_id: str, *, will: tuple[str, str] | None = None) -> None:
        self.url = BrokerURL("127.0.0.1", broker.port, user, broker.files.credentials[user])
        self.client = make_client(client_id, self.url, clean=True)
        self.connects = 0
        self.disconnects = 0
        self.messages: list[tuple[str, bytes, float]] = []
        self.up = threading.Event()
        if will is not None:
            self.client.will_set(will[0], will[1], qos=1, retain=True)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = lambda _c, _u, m: self.messages.append((m.topic, bytes(m.payload), time.monotonic()))
        self.client.connect_async(self.url.host, self.url.port, keepalive=5)
        self.client.loop_start()

    def _on_connect(self, _c: mqtt.Client, _u: object, _f: object, rc: Any, _p: object = None) -> None:
        if not rc.is_failure:
            self.connects += 1
            self.up.set()

    def _on_disconnect(self, *_a: object) -> None:
        self.disconnects += 1

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def test_a_tables_password_cannot_take_another_clients_id(broker: Broker) -> None:
    director_url = BrokerURL("127.0.0.1", broker.port, DIRECTOR_USER, broker.files.credentials[DIRECTOR_USER])
    director = Watched(broker, DIRECTOR_USER, director_client_id(director_url))
    table2 = Watched(broker, table_user(2), "tablesense-table-2", will=(proto.status_topic(2), proto.STATUS_OFFLINE))
    clients = [director, table2]
    try:
        assert director.up.wait(30) and table2.up.wait(30)
        director.client.subscribe(f"{proto.TOPIC_ROOT}/tables/#", 1)
        table2.client.publish(proto.status_topic(2), proto.STATUS_ONLINE, qos=1, retain=True).wait_for_publish(5)
        time.sleep(0.3)
        # table 1's password under every id it could covet, the director's real one included
        for cid in ("director", director_client_id(director_url), "tablesense-director", "table-2", "tablesense-table-2"):
            thief = Watched(broker, table_user(1), cid)
            clients.append(thief)
            assert thief.up.wait(30), f"table 1 could not connect at all (as {cid})"
            time.sleep(0.3)
        assert director.disconnects == 0 and director.connects == 1, "table 1's password took the director's connection"
        assert table2.disconnects == 0 and table2.connects == 1, "table 1's password took table 2's connection"
        statuses = [p for t, p, _ in director.messages if t == proto.status_topic(2)]
        assert proto.STATUS_OFFLINE.encode() not in statuses, "table 2's last will fired: it was dropped"
    finally:
        for c in clients:
            c.close()


def test_the_intake_sheds_a_flood_and_serves_tables_in_turn() -> None:
    b = TokenBucket(rate=10.0, burst=5.0, tokens=5.0, stamp=0.0)
    assert [b.take(1.0, now=0.0) for _ in range(6)] == [True] * 5 + [False]
    assert b.take(1.0, now=0.1) and not b.take(1.0, now=0.1)
    assert message_cost(990_000) == 16.0 and message_cost(300) == 1.0
    q = Intake(rate=0.0, burst=1000.0)
    flood = [q.offer(1, "t1", b"x" * 200_000) for _ in range(100)]
    assert flood.count(True) == TABLE_QUEUE_BYTES // 200_000 and q.shed == 100 - flood.count(True)
    assert q.offer(2, "t2", b"genuine")
    # table 2 is next after one of table 1's, not after all of them
    taken = [q.take(0)[0] for _ in range(3)]  # type: ignore[index]
    assert taken == [1, 2, 1]
    q.close(drop=True)
    assert q.take(0) is None


class RecordingIntake(Intake):
    """The bridge's real intake, noting when table 2's outbox message is taken
    in and how many messages were then already in the director's hands (taken
    from the queues, not yet answered)."""

    def __init__(self, events: list[tuple[str, int, int]]) -> None:
        super().__init__()
        self.events = events

    def offer(self, table: int, topic: str, payload: bytes, size: int | None = None) -> bool:
        with self._cond:
            queued = sum(len(q.items) for q in self._tables.values())
            in_hand = self._pending - queued
            took = super().offer(table, topic, payload, size)
            if took and table == 2 and topic.endswith("/out"):
                self.events.append(("in", table, in_hand))
        return took


def test_a_flooding_table_slows_only_itself(broker: Broker, db_url: str) -> None:
    """Table 2's message waits behind at most one of table 1's queued messages
    (the intake serves tables in turn) and whatever the director already had
    in hand when it came, never behind the flood table 1 sends after it.
    Counted in messages, not seconds: a busy machine only slows everything."""
    d, key1 = make_event(db_url)
    d.pair_next_round()
    key2 = TableKey.from_seed(b"table-2")
    m2 = next(m for m in d.matches(1) if m.table_no == 2)
    genuine = json.dumps(result_for(d, m2.id, key2, revision=1)).encode()
    url = BrokerURL("127.0.0.1", broker.port, DIRECTOR_USER, broker.files.credentials[DIRECTOR_USER])
    events: list[tuple[str, int, int]] = []
    intake = RecordingIntake(events)
    bridge = DirectorBridge(d, url, intake=intake,
                            on_ack=lambda table, ack: events.append(("ack", table, ack.status == "accepted"))).start()
    table1 = Watched(broker, table_user(1), "t1")
    table2 = Watched(broker, table_user(2), "t2")
    stop = threading.Event()
    sent = [0]
    peak = [0]

    def flood() -> None:
        bogus = {"kind": "result", "event": d.event_id, "round": 1, "table": 1, "revision": 1, "match": 1,
                 "pad": "A" * 990_000, "sig": "AAAA"}
        payload = json.dumps(bogus).encode()
        while not stop.is_set():
            table1.client.publish(proto.outbox_topic(1), payload, qos=0)
            sent[0] += 1
            peak[0] = max(peak[0], intake.queued_bytes())
            time.sleep(0.002)

    flooder = threading.Thread(target=flood, daemon=True)
    try:
        assert bridge.wait_connected(30) and table1.up.wait(30) and table2.up.wait(30)
        table2.client.subscribe(proto.ack_topic(2), 1)
        flooder.start()
        # the flood is on: table 1's bucket ran dry and its messages are being shed
        testsupport.wait_until(lambda: bridge.stats.shed > 0, 120, what="table 1's flood to be shed")
        table2.client.publish(proto.outbox_topic(2), genuine, qos=1)

        def acks() -> list[tuple[str, bytes, float]]:  # the answers, not the "queued" notices
            return [m for m in table2.messages if json.loads(m[1]).get("status") != proto.QUEUED]

        testsupport.wait_until(acks, 120, what="table 2's answer")
        # the flood goes on past table 2's answer: the audit budget must hold under it
        shed = bridge.stats.shed
        testsupport.wait_until(lambda: bridge.stats.shed >= shed + 20, 120, what="the flood to go on after table 2")
    finally:
        stop.set()
        flooder.join(5)
        for c in (table1, table2):
            c.close()
        bridge.stop()
    ack = json.loads(acks()[0][1])
    assert ack["status"] == "accepted", ack
    (came,) = [i for i, e in enumerate(events) if e[0] == "in"]
    (answered,) = [i for i, e in enumerate(events) if e[0] == "ack" and e[1] == 2]
    in_hand = events[came][2]
    ahead = sum(1 for kind, t, _ in events[came:answered] if kind == "ack" and t == 1)
    print(f"flood: {sent[0]} messages of 990 kB from table 1, shed {bridge.stats.shed}; "
          f"table 2 answered after {ahead} of table 1's ({in_hand} in hand when it came)")
    assert ahead <= in_hand + 1, f"table 2 waited behind {ahead} of table 1's messages ({in_hand} were in hand)"
    assert bridge.stats.shed > 0, "the flood was never shed"
    assert peak[0] <= TABLE_QUEUE_BYTES, "table 1 queued more than its share"
    refusals = [a for a in d.audit_log() if a["action"] == "refused"]
    assert len(refusals) <= 20  # the audit budget holds too


def test_the_broker_password_comes_from_a_file_or_the_environment_never_from_argv(
        broker: Broker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = broker.files.credentials[table_user(1)]
    pw = tmp_path / "table-1.password"
    pw.write_text(secret + "\n")
    base = f"mqtt://{table_user(1)}@127.0.0.1:{broker.port}"
    assert BrokerURL.parse(f"{base}?password_file={pw}").password == secret
    monkeypatch.setenv(PASSWORD_ENV, secret)
    assert BrokerURL.parse(base).password == secret
    monkeypatch.delenv(PASSWORD_ENV)
    for bad, why in ((f"mqtt://u:p@h:1?password_file={pw}", "a password and a password_file"),
                     ("mqtt://u@h:1?password_file=/dev/zero", "not a regular file"),
                     (f"mqtt://u@h:1?password_file={tmp_path / 'none'}", "cannot read")):
        with pytest.raises(ValueError, match=why):
            BrokerURL.parse(bad)
    assert (broker.files.conf.parent / "director.password").read_text().strip() == broker.files.credentials[DIRECTOR_USER]

    # a real table process: connected with the file's password, which its command line never shows
    key = tmp_path / "t1.key"
    TableKey.from_seed(b"t1").save(key)
    director = Watched(broker, DIRECTOR_USER, "d")
    assert director.up.wait(30)
    director.client.subscribe(proto.status_topic(1), 1)
    proc = subprocess.Popen([str(Path(sys.executable).parent / "tablesense"), "tournament", "table", "1", "--key", str(key),
                             "--journal", str(tmp_path / "t1.journal"), "--broker", f"{base}?password_file={pw}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "LANG": "C.UTF-8"})
    try:
        assert wait_until(lambda: any(t == proto.status_topic(1) and p == proto.STATUS_ONLINE.encode()
                                      for t, p, _ in director.messages), 120), "the table never connected"
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        assert secret.encode() not in cmdline and str(pw).encode() in cmdline
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=60)  # a ceiling: a busy machine ends it slowly
        director.close()
    assert b"visible to every user" not in err


def test_a_broker_connection_above_descriptor_1023_works(broker: Broker) -> None:
    """A director serving a thousand spectators holds descriptors above 1023,
    which paho's select() could not watch: its broker connection failed and
    reconnected in a loop. The bridge's poll() stands in for it."""
    import resource

    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200:
        pytest.skip(f"the descriptor limit is {soft}: no descriptor above 1023 to use")
    hold: list[Any] = []

    def fill_below_1024() -> None:
        """Take every free descriptor up to the first above 1023 (a thread of
        an earlier test in this worker may close one at any time, and the
        next socket would take it)."""
        while True:
            hold.append(open(os.devnull))  # noqa: SIM115 - held open on purpose
            if hold[-1].fileno() > 1023:
                return

    try:
        def connect() -> Watched | None:
            fill_below_1024()
            table = Watched(broker, table_user(1), "t1")
            assert table.up.wait(30)
            fd = table.client.socket()
            assert fd is not None
            if fd.fileno() > 1023:
                return table
            table.close()  # a descriptor below was freed meanwhile: fill it, connect again
            return None

        table = next((t for t in (connect() for _ in range(5)) if t is not None), None)
        assert table is not None, "every connection took a descriptor freed below 1024"
        time.sleep(1.0)
        table.client.publish(proto.status_topic(1), proto.STATUS_ONLINE, qos=1).wait_for_publish(5)
        assert table.connects == 1 and table.disconnects == 0
        table.close()
    finally:
        for f in hold:
            f.close()


def test_badges_leave_the_director_only_as_salted_digests(broker: Broker, sqlite_url: str) -> None:
    d, _key = make_event(sqlite_url)  # badges b1a, b1b, ... for pairs 1-4
    d.pair_next_round()
    url = BrokerURL("127.0.0.1", broker.port, DIRECTOR_USER, broker.files.credentials[DIRECTOR_USER])
    bridge = DirectorBridge(d, url).start()
    table1 = Watched(broker, table_user(1), "t1")
    try:
        assert bridge.wait_connected(30) and table1.up.wait(30)
        bridge.announce_round()
        table1.client.subscribe(proto.assign_topic(1), 1)
        assert wait_until(lambda: bool(table1.messages), 10)
    finally:
        table1.close()
        bridge.stop()
    raw = table1.messages[-1][1]
    assignment = json.loads(raw)
    registered = [b for e in d.entrants() for b in e.badges]
    def strings(x: Any) -> list[str]:
        if isinstance(x, dict):
            return [s for v in x.values() for s in strings(v)]
        return [s for v in x for s in strings(v)] if isinstance(x, list) else [x] if isinstance(x, str) else []

    assert not set(registered) & set(strings(assignment)), "a badge UID left the director"
    [m] = assignment["matches"]
    salt = m["badge_salt"]
    sides = [e["badges"] for e in m["entrants"]]
    assert all(len(x) == 64 for side in sides for x in side)
    assert sides[0] == [badge_digest(b, salt) for b in next(e.badges for e in d.entrants() if e.id == m["entrants"][0]["id"])]
    # the table matches what is tapped on it against the digests
    here = {e.id: e.badges for e in d.entrants() if e.id in (m["entrants"][0]["id"], m["entrants"][1]["id"])}
    a, b = (here[m["entrants"][i]["id"]] for i in (0, 1))
    stranger = next(x for e in d.entrants() if e.id not in here for x in e.badges)
    assert badges_tapped({a[1].upper(), b[0], stranger}, sides, salt) == {a[1]: 0, b[0]: 1}
    # another event's salt makes other digests: a digest is no badge elsewhere
    assert badge_digest(a[0], salt) != badge_digest(a[0], salt + "x")


def test_a_resend_of_a_queued_message_is_answered_once() -> None:
    q = Intake()
    assert q.offer(1, "tablesense/tables/table-1/out", b"result")
    assert q.offer(1, "tablesense/tables/table-1/out", b"result")  # the table re-sent it meanwhile
    assert q.offer(1, "tablesense/tables/table-1/status", b"online")
    assert q.offer(1, "tablesense/tables/table-1/status", b"offline")
    assert q.offer(1, "tablesense/tables/table-1/status", b"online")  # statuses keep their order
    got = [q.take(0) for _ in range(4)]
    assert [x[2] for x in got if x] == [b"result", b"online", b"offline", b"online"]
    assert q.coalesced == 1 and q.take(0) is None
    assert q.offer(1, "tablesense/tables/table-1/out", b"result")  # answered by now: queued again
