"""Spectators through relay brokers: real Mosquitto brokers bridged director ->
relay -> relay, and real MQTT-over-WebSocket clients reading the tables'
public progress, read-only."""

from __future__ import annotations

import getpass
import json
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from tablesense.tournament.live import LIVE_TOPIC_FILTER, live_topic
from tablesense.tournament.mosquitto import Mosquitto, free_port, table_user, write_broker_config
from tablesense.tournament.protocol import outbox_topic
from tablesense.tournament.relays import write_relay_config
from tablesense.tournament.venues import VenueError


class Spectator:
    """A browser's part: MQTT over WebSocket, subscribed to every table's live topic."""

    def __init__(self, port: int, name: str) -> None:
        self.got: list[tuple[str, bytes]] = []
        self.subscribed = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=name, transport="websockets")
        def on_connect(c: mqtt.Client, *_a: object) -> None:
            c.subscribe([(LIVE_TOPIC_FILTER, 0), ("tablesense/#", 0)])  # the second one: to prove nothing else comes

        self.client.on_connect = on_connect
        self.client.on_subscribe = lambda *_a: self.subscribed.set()
        self.client.on_message = lambda _c, _u, m: self.got.append((m.topic, bytes(m.payload)))
        self.client.connect_async("127.0.0.1", port)  # the loop retries until the listener answers
        self.client.reconnect_delay_set(1, 2)
        self.client.loop_start()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _wait(pred: object, timeout: float = 15.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def test_a_relay_tree_carries_live_progress_to_websocket_spectators_read_only(tmp_path: Path) -> None:
    me = getpass.getuser()
    port = free_port()
    files = write_broker_config(tmp_path / "director", tables=2, port=port, run_as=me, persistence=False)
    r1_mqtt, r1_ws, r2_mqtt, r2_ws = (free_port() for _ in range(4))
    relay1 = write_relay_config(tmp_path / "relay1", name="hall-a", upstream_host="127.0.0.1", upstream_port=port,
                                director_dir=tmp_path / "director", port=r1_mqtt, ws_port=r1_ws, bind="127.0.0.1",
                                run_as=me)
    relay2 = write_relay_config(tmp_path / "relay2", name="hall-b", upstream_host="127.0.0.1", upstream_port=r1_mqtt,
                                port=r2_mqtt, ws_port=r2_ws, bind="127.0.0.1", run_as=me)
    assert relay1.user == "relay-hall-a" and "relay-hall-a:" in (tmp_path / "director" / "passwd").read_text()
    brokers = [Mosquitto(files.conf, port), Mosquitto(relay1.conf, r1_mqtt), Mosquitto(relay2.conf, r2_mqtt)]
    spectators: list[Spectator] = []
    table = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="t1")
    try:
        for b in brokers:
            b.start()
        table.username_pw_set(table_user(1), files.credentials[table_user(1)])
        table.connect("127.0.0.1", port)
        table.loop_start()
        spectators = [Spectator(r1_ws, "s1"), Spectator(r2_ws, "s2"), Spectator(r2_ws, "s3")]
        assert all(s.subscribed.wait(10) for s in spectators)
        progress = json.dumps({"round": 1, "hand": 2, "scores": [10, 5]}).encode()

        def everyone_has(payload: bytes) -> bool:
            table.publish(live_topic(1), payload, qos=0)  # the bridges may still be connecting: send again
            return all(any(p == payload for _t, p in s.got) for s in spectators)

        assert _wait(lambda: everyone_has(progress)), [s.got for s in spectators]
        # a result is not public: it never reaches a relay
        table.publish(outbox_topic(1), b'{"kind":"result"}', qos=1)
        # a spectator cannot publish, on its relay or through it
        spectators[1].client.publish(live_topic(2), b"forged", qos=0)
        spectators[1].client.publish(outbox_topic(2), b"forged", qos=0)
        later = json.dumps({"round": 1, "hand": 3}).encode()
        assert _wait(lambda: everyone_has(later))
        time.sleep(0.5)
        for s in spectators:
            assert all(t.endswith("/live") for t, _p in s.got), s.got
            assert all(p != b"forged" for _t, p in s.got), s.got
    finally:
        for s in spectators:
            s.close()
        table.disconnect()
        table.loop_stop()
        for b in reversed(brokers):
            b.stop()


def test_relay_config_refusals(tmp_path: Path) -> None:
    with pytest.raises(VenueError, match="relay name"):
        write_relay_config(tmp_path / "r", name="Bad Name", upstream_host="h", upstream_port=1)
    with pytest.raises(VenueError, match="must differ"):
        write_relay_config(tmp_path / "r", name="a", upstream_host="h", upstream_port=1, port=9001, ws_port=9001)
    with pytest.raises(VenueError, match="is missing"):
        write_relay_config(tmp_path / "r", name="a", upstream_host="h", upstream_port=1, director_dir=tmp_path / "nowhere")
