"""The generated Mosquitto config on a real broker: passwords, per-table ACL, last will."""

from __future__ import annotations

import threading
import time

import paho.mqtt.client as mqtt
import pytest

from tablesense.tournament import protocol as proto
from tablesense.tournament.bridge import BrokerURL, make_client
from tablesense.tournament.mosquitto import check_password, password_hash


def test_password_hash_format() -> None:
    h = password_hash("s3cret", salt=b"0123456789ab")
    assert h.startswith("$7$101$") and len(h.split("$")) == 5
    assert check_password("s3cret", h) and not check_password("wrong", h)


def _connect(url: str, cid: str) -> tuple[mqtt.Client, threading.Event, list[tuple[str, bytes]]]:
    b = BrokerURL.parse(url)
    c = make_client(cid, b, clean=True)
    ok = threading.Event()
    got: list[tuple[str, bytes]] = []

    def on_connect(_c: mqtt.Client, _u: object, _f: object, rc: object, _p: object = None) -> None:
        if not getattr(rc, "is_failure", True):
            ok.set()

    c.on_connect = on_connect
    c.on_message = lambda _c, _u, m: got.append((m.topic, bytes(m.payload)))
    c.connect_async(b.host, b.port, keepalive=5)
    c.loop_start()
    return c, ok, got


def test_users_acl_and_last_will(broker) -> None:  # type: ignore[no-untyped-def]
    director, dok, seen = _connect(broker.url("director"), "d")
    assert dok.wait(5)
    director.subscribe(f"{proto.TOPIC_ROOT}/tables/#", 1)
    time.sleep(0.3)

    bad, bok, _ = _connect(broker.url("table-1").replace(broker.files.credentials["table-1"], "wrong"), "bad")
    assert not bok.wait(1.0), "a wrong password must be refused"
    bad.loop_stop()

    t1, ok1, got1 = _connect(broker.url("table-1"), "t1")
    assert ok1.wait(5)
    t1.subscribe(proto.assign_topic(2), 1)  # not its topic: the broker must not deliver
    t1.subscribe(proto.assign_topic(1), 1)
    time.sleep(0.3)
    t1.publish(proto.outbox_topic(1), b"mine", qos=1).wait_for_publish(3)
    t1.publish(proto.outbox_topic(2), b"impersonation", qos=1).wait_for_publish(3)
    director.publish(proto.assign_topic(1), b"for-1", qos=1)
    director.publish(proto.assign_topic(2), b"for-2", qos=1)
    time.sleep(0.5)
    payloads = {p for _t, p in seen}
    assert b"mine" in payloads
    assert b"impersonation" not in payloads, "a table may publish only on its own topics"
    assert (proto.assign_topic(1), b"for-1") in got1
    assert all(t != proto.assign_topic(2) for t, _ in got1), "a table may read only its own director topics"

    # last will: a table that vanishes is announced offline (retained)
    t3 = make_client("t3", BrokerURL.parse(broker.url("table-3")), clean=True)
    t3.will_set(proto.status_topic(3), proto.STATUS_OFFLINE, qos=1, retain=True)
    t3.connect(BrokerURL.parse(broker.url("table-3")).host, broker.port, keepalive=5)
    t3.loop_start()
    t3.publish(proto.status_topic(3), proto.STATUS_ONLINE, qos=1, retain=True).wait_for_publish(3)
    time.sleep(0.3)
    t3.loop_stop()
    sock = t3.socket()
    assert sock is not None
    sock.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (proto.status_topic(3), b"offline") not in seen:
        time.sleep(0.05)
    assert (proto.status_topic(3), b"offline") in seen
    for c in (director, t1):
        c.disconnect()
        c.loop_stop()


@pytest.mark.parametrize("url", ["mqtt://a:b@h:1", "h:2", "tcp://h"])
def test_broker_url(url: str) -> None:
    b = BrokerURL.parse(url)
    assert b.host == "h"
    with pytest.raises(ValueError):
        BrokerURL.parse("http://h")
