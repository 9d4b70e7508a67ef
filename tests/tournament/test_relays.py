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
from tablesense.tournament.relays import SPECTATOR_USER, spectator_token, write_relay_config
from tablesense.tournament.venues import VenueError


class Spectator:
    """A browser's part: MQTT over WebSocket, subscribed to every table's live topic."""

    def __init__(self, port: int, name: str, token: str | None = None) -> None:
        self.got: list[tuple[str, bytes]] = []
        self.subscribed = threading.Event()
        self.refused: list[object] = []
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=name, transport="websockets")
        if token is not None:
            self.client.username_pw_set(SPECTATOR_USER, token)

        def on_connect(c: mqtt.Client, _u: object, _f: object, rc: object, *_a: object) -> None:
            if getattr(rc, "is_failure", False):
                self.refused.append(rc)
                return
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


def test_with_the_events_token_only_spectators_holding_it_read_the_progress(tmp_path: Path) -> None:
    """A relay tree of an event with a spectator token: the right token reads
    every update on both relays (the second relay bridges from the first with
    the token), a wrong token and no token are refused at the connection and
    read nothing, and a spectator with the token still cannot publish."""
    me = getpass.getuser()
    port = free_port()
    files = write_broker_config(tmp_path / "director", tables=2, port=port, run_as=me, persistence=False)
    token_file = tmp_path / "spectators.token"
    token = spectator_token(token_file)  # made by the first relay's configuration...
    assert spectator_token(token_file) == token and token_file.stat().st_mode & 0o777 == 0o600  # ...read by the next
    r1_mqtt, r1_ws, r2_mqtt, r2_ws = (free_port() for _ in range(4))
    relay1 = write_relay_config(tmp_path / "relay1", name="final", upstream_host="127.0.0.1", upstream_port=port,
                                director_dir=tmp_path / "director", port=r1_mqtt, ws_port=r1_ws, bind="127.0.0.1",
                                run_as=me, token=token)
    relay2 = write_relay_config(tmp_path / "relay2", name="final-b", upstream_host="127.0.0.1", upstream_port=r1_mqtt,
                                port=r2_mqtt, ws_port=r2_ws, bind="127.0.0.1", run_as=me, token=token)
    assert relay1.passwd is not None and token not in relay1.passwd.read_text()  # hashed
    assert "allow_anonymous true" not in relay1.conf.read_text()
    brokers = [Mosquitto(files.conf, port), Mosquitto(relay1.conf, r1_mqtt), Mosquitto(relay2.conf, r2_mqtt)]
    good: list[Spectator] = []
    bad: list[Spectator] = []
    table = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="t1")
    try:
        for b in brokers:
            b.start()
        table.username_pw_set(table_user(1), files.credentials[table_user(1)])
        table.connect("127.0.0.1", port)
        table.loop_start()
        good = [Spectator(r1_ws, "g1", token), Spectator(r2_ws, "g2", token)]
        wrong = token[:-1] + ("A" if token[-1] != "A" else "B")
        bad = [Spectator(r1_ws, "w1", wrong), Spectator(r2_ws, "w2", wrong), Spectator(r1_ws, "anon")]
        assert all(s.subscribed.wait(10) for s in good), [s.refused for s in good]
        assert _wait(lambda: all(s.refused for s in bad)), [s.refused for s in bad]
        progress = json.dumps({"round": 1, "hand": 4, "scores": [20, 5]}).encode()

        def good_have(payload: bytes) -> bool:
            table.publish(live_topic(1), payload, qos=0)
            return all(any(p == payload for _t, p in s.got) for s in good)

        assert _wait(lambda: good_have(progress)), [s.got for s in good]
        good[0].client.publish(live_topic(2), b"forged", qos=0)
        later = json.dumps({"round": 1, "hand": 5}).encode()
        assert _wait(lambda: good_have(later))
        time.sleep(0.5)
        assert all(p != b"forged" for s in good for _t, p in s.got)
        assert [s.got for s in bad] == [[], [], []]
        assert not any(s.subscribed.is_set() for s in bad)
    finally:
        for s in good + bad:
            s.close()
        table.disconnect()
        table.loop_stop()
        for b in reversed(brokers):
            b.stop()


def test_spectator_token_refusals(tmp_path: Path) -> None:
    with pytest.raises(VenueError, match="spectator token is 16 to 128"):
        write_relay_config(tmp_path / "r", name="a", upstream_host="h", upstream_port=1, token="short")
    (tmp_path / "t").write_text("not a token!\n")
    with pytest.raises(VenueError, match="does not hold a spectator token"):
        spectator_token(tmp_path / "t")
    with pytest.raises(VenueError, match="not a regular file"):
        spectator_token(tmp_path)
    (tmp_path / "big").write_text("x" * 5000)
    with pytest.raises(VenueError, match="at most 1024"):
        spectator_token(tmp_path / "big")


def test_relay_config_command_with_a_token_file(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tablesense.cli import app

    runner = CliRunner()
    token_file = tmp_path / "event.token"
    args = ["tournament", "relay-config", "hall-a", "--upstream", "127.0.0.1:1884", "--token-file", str(token_file)]
    r = runner.invoke(app, [*args, "--out", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    token = token_file.read_text().strip()
    assert token not in r.output  # the token stays in its file
    r = runner.invoke(app, [*args, "--out", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    assert token_file.read_text().strip() == token  # every relay of the event: the same token
    conf = (tmp_path / "b" / "mosquitto.conf").read_text()
    assert "allow_anonymous false" in conf and f"remote_password {token}" in conf
    token_file.write_text("no!\n")
    r = runner.invoke(app, [*args, "--out", str(tmp_path / "c")])
    assert r.exit_code == 1 and "does not hold a spectator token" in " ".join(r.output.split())
    assert not (tmp_path / "c" / "mosquitto.conf").exists()
