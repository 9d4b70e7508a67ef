"""A whole event end to end: database, director, broker, headless tables.

``tablesense tournament simulate`` and the tournament tests run this. Faults
(tables dropping off mid-match, the broker restarted mid-round, duplicated
and forged messages) are injected here so the same code path that runs a
clean event is the one proven to survive a dirty one.
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import random
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from tablesense.games.common import message_of, say
from tablesense.games.registry import GAMES

from . import protocol as proto
from .bridge import BrokerURL, DirectorBridge, make_client, wait_until
from .console import confirm_reported
from .db import Database
from .mosquitto import DIRECTOR_USER, Mosquitto, table_user, write_broker_config
from .security import TableKey
from .service import Director, team_size
from .table_client import HeadlessTable

log = logging.getLogger(__name__)

#: The intruder's broker user in a spawned broker: it reads table 1's outbox
#: (a vantage point on the network) and publishes on it (as table 1's password
#: would let it), under its own user, because the broker binds client ids to
#: users and table 1's own password would only take table 1's connection.
WIRETAP_USER = "wiretap"
WIRETAP_TOPICS = [f"topic read {proto.TOPIC_ROOT}/tables/table-1/out", f"topic write {proto.TOPIC_ROOT}/tables/table-1/out"]


class SimulationError(RuntimeError):
    """The simulated event could not finish (a round timed out, the broker failed...)."""


@dataclass
class Faults:
    """What goes wrong, and in which round (0 = never)."""

    drop_tables: int = 0  # tables that crash mid-match and come back
    drop_round: int = 0
    broker_restart_round: int = 0  # needs a spawned broker
    director_restart_round: int = 0  # the director process dies mid-round and starts again
    duplicates: bool = False  # re-publish every outbox message a second time
    forgeries: bool = False  # forged, replayed and out-of-turn results from an intruder
    down_for: float = 1.0  # seconds a dropped table or the broker stays away


@dataclass
class SimulationReport:
    event_id: int
    rounds: int
    matches: int
    results_accepted: int
    duplicates: int
    refused: int
    refusals: list[tuple[int, str, str]] = field(default_factory=list)
    forged_sent: int = 0
    director_restarts: int = 0
    dropped: int = 0
    broker_restarts: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.event_id, "rounds": self.rounds, "matches": self.matches,
            "results_accepted": self.results_accepted, "duplicates": self.duplicates,
            "refused": self.refused, "forged_sent": self.forged_sent, "dropped": self.dropped,
            "broker_restarts": self.broker_restarts, "director_restarts": self.director_restarts, "seconds": round(self.seconds, 2),
        }


def simulate(
    *,
    entrants: int,
    rounds: int,
    format: str = "swiss",
    tables: int,
    seed: int = 0,
    db_url: str,
    broker: str = "spawn",
    variant: str = "pairs-pips",
    game: str = "dominoes",
    target: float | None = None,
    best_of: int = 1,
    workdir: Path | None = None,
    faults: Faults | None = None,
    round_timeout: float = 120.0,
    move_delay: float = 0.0,
    time_limit_s: float | None = None,
    name: str | None = None,
    progress: Callable[[str], None] | None = None,
    confirm: str = "badges",
    seats: int | None = None,
) -> SimulationReport:
    """Run an event of ``entrants`` over ``rounds`` rounds; returns what happened.

    ``move_delay`` slows the computer players (seconds per move) so that
    faults can land mid-match. ``broker`` is ``spawn`` (start our own Mosquitto with the generated users
    and ACL in ``workdir``) or an ``mqtt://host:port`` URL; a URL without
    credentials means an anonymous broker (every client connects as itself).
    """
    faults = faults or Faults()
    tell = progress or (lambda _m: None)  # Sentences: the command prints them in its language
    started = time.monotonic()
    tmp: tempfile.TemporaryDirectory[str] | None = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="tablesense-sim-")
        workdir = Path(tmp.name)
    workdir.mkdir(parents=True, exist_ok=True)
    mosq: Mosquitto | None = None
    if broker == "spawn":
        from .mosquitto import free_port

        port = free_port()
        files = write_broker_config(workdir / "broker", tables=tables, port=port, run_as=getpass.getuser(),
                                    extra_users={WIRETAP_USER: WIRETAP_TOPICS})
        mosq = Mosquitto(files.conf, port).start()
        base = BrokerURL("127.0.0.1", port)
        creds: dict[str, str] | None = files.credentials
    else:
        base = BrokerURL.parse(broker)
        creds = None
        if faults.broker_restart_round:
            raise SimulationError("restarting the broker needs --broker spawn")

    def url_for(user: str) -> BrokerURL:
        return base.with_user(user, creds[user]) if creds else base

    db = Database(db_url)
    rng = random.Random(seed)
    opts: dict[str, Any] = {"rounds": rounds, "lots_seed": f"sim-{seed}", "best_of": best_of, "quiet_after_s": 5.0,
                            "confirm": confirm}
    if seats is not None:
        opts["seats"] = seats  # 3 (brazilian-points players), 6 or 8 (Kems: 3 or 4 teams a table): kway.py
    if target is not None:
        opts["target"] = target
    if time_limit_s is not None:
        opts["time_limit_s"] = time_limit_s
    the_game = GAMES.get(game)
    if the_game is not None and variant not in the_game.variants and any(variant in g.variants for g in GAMES.values()):
        variant = the_game.default_variant  # another game's variant (--variant's default with --game kems): this game's own
    director = Director.create_event(db, name or f"Simulated {format} (seed {seed})", game=game, variant=variant,
                                     format=format, options=opts)
    with db.session() as s:
        size = team_size(game, variant, int(director.event(s).options.get("seats", 4)))
    for i in range(1, entrants + 1):
        members = [f"Player {i}"] if size == 1 else [f"Player {i}A", f"Player {i}B"]
        badges = [f"badge-{seed}-{i}-{j}" for j in range(size)]
        director.register(f"Entrant {i:03d}", members, badges, seed=i)
    for e in director.entrants():
        if rng.random() < 0.9:
            director.check_in(e.id)
    all_badges = [b for e in director.entrants() for b in e.badges]
    keys = {t: TableKey.from_seed(f"sim:{seed}:{t}".encode()) for t in range(1, tables + 1)}
    for t, k in keys.items():
        director.add_table(t, k.public)

    report = SimulationReport(director.event_id, 0, 0, 0, 0, 0)
    director_id = f"tablesense-sim-{os.getpid()}-{director.event_id}-director"
    bridge = DirectorBridge(director, url_for(DIRECTOR_USER), client_id=director_id)
    bridge.start()
    old_stats: list[Any] = []
    if not bridge.wait_connected(15):
        raise SimulationError(f"the director could not connect to the broker at {base.host}:{base.port}")
    heads: dict[int, HeadlessTable] = {}
    intruder: Intruder | None = None
    try:
        for t in range(1, tables + 1):
            heads[t] = HeadlessTable(
                t, keys[t], workdir / f"table-{t}.journal", url_for(table_user(t)), seed=seed,
                resend_interval=0.3, heartbeat_interval=0.5, move_delay=move_delay,
                client_id=f"tablesense-sim-{os.getpid()}-{director.event_id}-table-{t}",
                badges=all_badges,  # the players carry their badges to whichever table they play at
            )
            heads[t].start()
        if faults.duplicates or faults.forgeries:
            intruder = Intruder(url_for(WIRETAP_USER) if creds else base, keys[1], duplicates=faults.duplicates)
            intruder.start()
        total_rounds = _planned_rounds(format, entrants, rounds)
        for r in range(1, total_rounds + 1):
            try:
                director.pair_next_round()
            except ValueError as exc:
                if r > 1:
                    tell(say("stopping after round {round}: {error}", round=r - 1, error=message_of(exc)))
                    break
                raise
            bridge.announce_round()
            report.rounds = r
            tell(say("round {round} paired: {n} matches", round=r, n=len(director.matches(r))))
            deadline = time.monotonic() + round_timeout
            dropped_now: set[int] = set()
            restarted = False
            director_restarted = False
            while not director.round_complete(r):
                if time.monotonic() > deadline:
                    raise SimulationError(f"round {r} did not finish within {round_timeout} s (quiet tables: {director.quiet_tables()})")
                if faults.drop_tables and r == faults.drop_round and len(dropped_now) < faults.drop_tables:
                    victims = [t for t in _tables_mid_match(heads) if t not in dropped_now]
                    victims = victims[: faults.drop_tables - len(dropped_now)]
                    if victims:
                        dropped_now.update(victims)
                        report.dropped += len(victims)
                        for v in victims:
                            tell(say("table {table} drops off mid-match", table=v))
                            heads[v].crash()
                        _later(faults.down_for, lambda vs=victims: [heads[v].start() for v in vs])
                if mosq is not None and r == faults.broker_restart_round and not restarted and _some_result_in(director, r):
                    restarted = True
                    report.broker_restarts += 1
                    tell(say("broker restarts mid-round"))
                    mosq.restart(down_for=faults.down_for)
                if r == faults.director_restart_round and not director_restarted and _some_result_in(director, r):
                    director_restarted = True
                    report.director_restarts += 1
                    tell(say("the director dies mid-round and restarts"))
                    bridge.crash()
                    old_stats.append(bridge.stats)
                    db.close()
                    db = Database(db_url)
                    director = Director(db, director.event_id)
                    bridge = DirectorBridge(director, url_for(DIRECTOR_USER), client_id=director_id)
                    bridge.start()
                    bridge.wait_connected(15)
                    bridge.announce_round()
                if intruder is not None and r == 2 and not intruder.attacked:
                    intruder.attack(director, r)
                if confirm == "director":
                    # The simulated director confirms each reported result from the console.
                    for m in confirm_reported(director, "director-sim", r):
                        tell(say("director confirms round {round}, table {table}", round=m.round_no, table=m.table_no))
                time.sleep(0.02)
            if not wait_until(bridge.idle, 10):
                raise SimulationError("the director did not drain its queue")
        if intruder is not None and not intruder.attacked:
            intruder.attack(director, report.rounds)
        wait_until(bridge.idle, 10)
        time.sleep(0.3)
        wait_until(bridge.idle, 10)
    finally:
        for h in heads.values():
            h.close()
        if intruder is not None:
            report.forged_sent = intruder.sent
            intruder.stop()
        bridge.stop()
        if mosq is not None:
            mosq.stop()
        db.close()
        if tmp is not None:
            tmp.cleanup()
    report.matches = sum(1 for m in director.matches() if m.kind == "match")
    all_stats = [*old_stats, bridge.stats]
    report.results_accepted = sum(st.accepted for st in all_stats)
    report.duplicates = sum(st.duplicates for st in all_stats)
    report.refused = sum(st.refused for st in all_stats)
    report.refusals = [x for st in all_stats for x in st.refusals]
    report.seconds = time.monotonic() - started
    return report


def _planned_rounds(format: str, entrants: int, rounds: int) -> int:
    if format == "swiss":
        return rounds
    if format == "round-robin":
        return entrants - 1 if entrants % 2 == 0 else entrants
    return 10_000  # knockout / groups: until the pairing says the event is over


def _tables_mid_match(heads: dict[int, HeadlessTable]) -> list[int]:
    return [t for t, h in sorted(heads.items()) if h.playing]


def _some_result_in(director: Director, r: int) -> bool:
    return any(m.status in ("reported", "confirmed") and m.kind == "match" for m in director.matches(r))


def _later(delay: float, fn: Callable[[], Any]) -> None:
    t = threading.Timer(delay, fn)
    t.daemon = True
    t.start()


class Intruder:
    """Someone holding table 1's broker password (the ACL confines it to table 1's topics).

    Sends, on table 1's topic: a forged result (signed with another key), a
    genuine key with altered content, an exact replay of a genuine message,
    and an out-of-turn result signed with table 1's own key (a table that
    misbehaves); and, when asked, re-publishes every genuine table-1 message
    it sees once more (a duplicating network).
    """

    def __init__(self, broker: BrokerURL, table_key: TableKey, *, duplicates: bool) -> None:
        self.broker = broker
        self.table_key = table_key
        self.duplicates = duplicates
        self.sent = 0
        self.attacked = False
        self.seen: list[dict[str, Any]] = []
        self._known: set[bytes] = set()
        # One connection (the broker binds client ids to users): under the
        # spawned broker's wiretap user it reads and writes table 1's outbox.
        self._client = make_client(f"intruder-{id(self)}", broker, clean=True)
        self._client.on_connect = self._on_connect
        self._client.on_message = self._on_message

    def start(self) -> None:
        self._client.connect_async(self.broker.host, self.broker.port, keepalive=5)
        self._client.loop_start()

    def stop(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()

    def _on_connect(self, client: mqtt.Client, *_a: Any) -> None:
        client.subscribe(proto.outbox_topic(1), 1)

    def _on_message(self, client: mqtt.Client, _ud: Any, msg: mqtt.MQTTMessage) -> None:
        payload = bytes(msg.payload)
        if payload in self._known:
            return  # our own publication, or a duplicate we already made
        self._known.add(payload)
        try:
            data = json.loads(payload)
        except ValueError:
            return
        if not isinstance(data, dict):
            return
        if len(self.seen) < 50:
            self.seen.append(data)
        if self.duplicates:
            self._client.publish(msg.topic, msg.payload, qos=1)
            self.sent += 1

    def _publish(self, body: dict[str, Any]) -> None:
        payload = json.dumps(body).encode()
        self._known.add(payload)
        self._client.publish(proto.outbox_topic(1), payload, qos=1)
        self.sent += 1

    def attack(self, director: Director, round_no: int) -> None:
        """Forge, replay and send out of turn, using what it has seen of table 1."""
        results = [m for m in self.seen if m.get("kind") == "result"]
        if not results:
            return
        self.attacked = True
        genuine = results[0]
        # 1. forged: same shape, winner flipped, signed with a key that is not table 1's
        forged = dict(genuine)
        forged["revision"] = int(genuine["revision"]) + 100
        forged["score"] = list(reversed(genuine["score"]))
        forged = TableKey.from_seed(b"not-the-table-key").sign(forged)
        self._publish(forged)
        # 2. replayed key with altered content (the signature no longer matches)
        altered = dict(genuine)
        altered["score"] = [genuine["score"][0] + 1, genuine["score"][1]]
        self._publish(altered)
        # 3. an exact replay of a genuine message: must be acknowledged as a duplicate
        self._publish(genuine)
        # 4. out of turn, correctly signed: a result for a match that is not table 1's now
        other = [m for m in director.matches(round_no) if m.table_no not in (1, None)]
        if other:
            m = other[0]
            ot = dict(genuine)
            ot.pop("sig", None)
            ot.update({"match": m.id, "round": round_no, "revision": 999, "entrants": [m.entrant_a, m.entrant_b]})
            self._publish(self.table_key.sign(ot))
        # 5. not JSON at all
        self._known.add(b"\x00garbage")
        self._client.publish(proto.outbox_topic(1), b"\x00garbage", qos=1)
        self.sent += 1
