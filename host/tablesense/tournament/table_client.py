"""A headless table: plays its assigned matches with computer players and
reports them to the director over MQTT, the way a real table's referee would.

It keeps a durable journal (SQLite, one file per table): the round
assignment, the finished hands of the match in play, and the outbox of
messages (check-in, result, confirmation) the director has not yet
acknowledged. A table that crashes and restarts resumes from its journal:
finished hands are replayed into the engine, the interrupted hand is dealt
again, and every unacknowledged message is re-sent until the director's
``ack`` naming that message's digest arrives. The table acts only on the
director's echo: it starts a match only from the retained assignment, and
asks the players to confirm (badge taps, simulated) only after the director
acknowledged the result.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import paho.mqtt.client as mqtt

from tablesense.games.common import Sentence, say
from tablesense.games.registry import find_game, names

from . import protocol as proto
from .bridge import BrokerURL, make_client
from .live import live_topic
from .live import progress as live_progress
from .security import TableKey, digest

log = logging.getLogger(__name__)


class Display(Protocol):
    """Where the table shows its match (the table's EventBus: ``publish(kind, **data)``)."""

    def publish(self, kind: str, /, **data: Any) -> Any: ...


class Crashed(Exception):
    """Raised inside the play loop when the table is made to drop off."""


class Journal:
    """The table's durable state: a small SQLite file (survives a crash or power cut)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._lock = threading.Lock()
        with self._lock:
            self._db.executescript(
                """
                CREATE TABLE IF NOT EXISTS outbox (key TEXT PRIMARY KEY, digest TEXT, payload TEXT,
                    created REAL, acked INTEGER DEFAULT 0, ack_status TEXT);
                CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT);
                CREATE TABLE IF NOT EXISTS matches (match INTEGER PRIMARY KEY, state TEXT, hands TEXT,
                    revision INTEGER);
                """
            )
            # The ack names the digest of the whole signed message (older versions
            # digested it without its signature): bring waiting entries up to date.
            for key, payload, dig in list(self._db.execute("SELECT key, payload, digest FROM outbox WHERE acked=0")):
                full = digest(json.loads(payload))
                if full != dig:
                    self._db.execute("UPDATE outbox SET digest=? WHERE key=?", (full, key))

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def get(self, k: str, default: Any = None) -> Any:
        with self._lock:
            row = self._db.execute("SELECT v FROM kv WHERE k=?", (k,)).fetchone()
        return default if row is None else json.loads(row[0])

    def put(self, k: str, v: Any) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (k, json.dumps(v)))

    def queue(self, key: str, message: dict[str, Any]) -> None:
        """Keep a signed message until the director's ack names its digest (signature
        included: a refused copy with a broken signature names another digest)."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO outbox (key, digest, payload, created) VALUES (?, ?, ?, ?)",
                (key, digest(message), json.dumps(message), time.time()),
            )

    def pending(self) -> list[tuple[str, str]]:
        with self._lock:
            return list(self._db.execute("SELECT key, payload FROM outbox WHERE acked=0 ORDER BY created"))

    def acked(self, key: str, dig: str, status: str) -> bool:
        """Mark ``key`` acknowledged if the ack names our content; True when it did."""
        with self._lock:
            cur = self._db.execute(
                "UPDATE outbox SET acked=1, ack_status=? WHERE key=? AND digest=? AND acked=0", (status, key, dig)
            )
            return cur.rowcount > 0

    def forget(self, key: str) -> None:
        """Drop an acknowledged message so the same key can be sent again with new
        content (a check-in refused for a wrong badge, then made with the right one)."""
        with self._lock:
            self._db.execute("DELETE FROM outbox WHERE key=? AND acked=1", (key,))
            self._db.execute("DELETE FROM kv WHERE k=?", (f"reason/{key}",))

    def ack_status(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT ack_status FROM outbox WHERE key=? AND acked=1", (key,)).fetchone()
        return None if row is None else str(row[0])

    def match(self, match_id: int) -> tuple[str, list[dict[str, Any]], int | None] | None:
        with self._lock:
            row = self._db.execute("SELECT state, hands, revision FROM matches WHERE match=?", (match_id,)).fetchone()
        if row is None:
            return None
        return str(row[0]), json.loads(row[1]), row[2]

    def save_match(self, match_id: int, state: str, games: list[dict[str, Any]], revision: int | None = None) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO matches VALUES (?, ?, ?, ?)", (match_id, state, json.dumps(games), revision)
            )


class HeadlessTable:
    """One simulated table. ``start()`` connects and plays; ``crash()`` drops it
    off mid-match (no clean disconnect: the broker publishes its last will);
    ``start()`` again resumes from the journal."""

    def __init__(
        self,
        number: int,
        key: TableKey,
        journal_path: Path,
        broker: BrokerURL,
        *,
        seed: int = 0,
        player: str = "greedy",
        resend_interval: float = 0.5,
        heartbeat_interval: float = 1.0,
        move_delay: float = 0.0,
        on_move: Callable[[HeadlessTable], None] | None = None,
        client_id: str | None = None,
        bus: Display | None = None,
        autoplay: bool = True,
        say: Callable[[str], None] | None = None,
        badges: Sequence[str] = (),
    ) -> None:
        self.number = number
        self.badges = [str(b) for b in badges]
        """The badges the simulated players bring to the table (UIDs): the
        assignment names each side's only as salted digests, so a headless
        table taps those of its players that match (none given: nobody taps)."""
        self.say: Callable[[str], None] = say or (lambda _line: None)
        """Where the table tells its operator what it does (``tournament table`` prints it)."""
        self.autoplay = autoplay
        """False for a real table (``play --director``): no computer match is played
        here; the referee's finished match is handed over (tournament.reporter)."""
        self.client_id = client_id or f"tablesense-table-{number}"
        self.bus = bus
        self.key = key
        self.broker = broker
        self.seed = seed
        self.player = player
        self.resend_interval = resend_interval
        self.heartbeat_interval = heartbeat_interval
        self.move_delay = move_delay
        self.on_move = on_move
        self.journal_path = journal_path
        self.journal = Journal(journal_path)
        self.display: dict[str, Any] = {}
        self.playing = False  # true while a hand is being played (for fault injection)
        self.sent = 0
        self._client: mqtt.Client | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []
        self._starts = 0
        self._due: dict[str, tuple[float, float]] = {}  # key -> (next send, current interval)
        self._sent_raw: dict[str, str] = {}  # SHA-256 of the bytes sent -> key (for the director's "queued")
        self.max_resend_interval = 8.0
        self._live_at = 0.0

    # --------------------------------------------------------------- life

    def start(self) -> HeadlessTable:
        self._stop.clear()
        self._starts += 1
        c = make_client(self.client_id, self.broker)
        c.will_set(proto.status_topic(self.number), proto.STATUS_OFFLINE, qos=1, retain=True)
        c.on_connect = self._on_connect
        c.on_message = self._on_message
        self._client = c
        c.connect_async(self.broker.host, self.broker.port, keepalive=5)
        c.loop_start()
        self._threads = [
            threading.Thread(target=self._guard(self._send_loop), name=f"table-{self.number}-send", daemon=True),
        ]
        if self.autoplay:
            self._threads.append(
                threading.Thread(target=self._guard(self._play_loop), name=f"table-{self.number}-play", daemon=True)
            )
        for t in self._threads:
            t.start()
        return self

    def stop(self) -> None:
        """Clean stop: publish ``offline`` and disconnect."""
        self._stop.set()
        self._wake.set()
        for t in self._threads:
            t.join(timeout=10)
        c = self._client
        if c is not None:
            c.publish(proto.status_topic(self.number), proto.STATUS_OFFLINE, qos=1, retain=True)
            c.disconnect()
            c.loop_stop()
        self._client = None

    def crash(self) -> None:
        """Drop off abruptly: threads stop, the socket closes without DISCONNECT."""
        self._stop.set()
        self._wake.set()
        c = self._client
        self._client = None
        if c is not None:
            c.loop_stop()
            sock = c.socket()
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.close()
        for t in self._threads:
            t.join(timeout=10)

    def close(self) -> None:
        self.stop()
        self.journal.close()

    def _guard(self, fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                fn()
            except Crashed:
                pass
            except Exception:
                log.exception("table %d: %s failed", self.number, fn.__name__)

        return run

    # --------------------------------------------------------------- MQTT

    def _on_connect(self, client: mqtt.Client, _ud: Any, _flags: Any, rc: Any, _props: Any = None) -> None:
        if getattr(rc, "is_failure", False):
            log.warning("table %d: broker refused the connection: %s", self.number, rc)
            self.say(say("table {table}: the broker at {broker} refused us: {reason}", table=self.number,
                         broker=f"{self.broker.host}:{self.broker.port}", reason=str(rc)))
            return
        a = self.journal.get("assignment")
        where = dict(table=self.number, broker=f"{self.broker.host}:{self.broker.port}",
                     user=self.broker.username or say("anonymous"))
        self.say(say("table {table}: connected to {broker} as {user}; waiting for the director's assignment", **where)
                 if not a else
                 say("table {table}: connected to {broker} as {user}; resuming round {round}", round=a.get("round"), **where))
        client.publish(proto.status_topic(self.number), proto.STATUS_ONLINE, qos=1, retain=True)
        client.subscribe([(proto.assign_topic(self.number), 1), (proto.ack_topic(self.number), 1)])
        self._due.clear()  # a new connection: re-send everything pending at once
        self._wake.set()

    def _on_message(self, _client: mqtt.Client, _ud: Any, msg: mqtt.MQTTMessage) -> None:
        try:
            data = json.loads(msg.payload)
        except ValueError:
            return
        if msg.topic == proto.assign_topic(self.number):
            cur = self.journal.get("assignment")
            if cur is None or (data.get("event"), data.get("round")) >= (cur.get("event"), cur.get("round")):
                self.journal.put("assignment", data)
                self._wake.set()
                if data != cur:
                    self.say(_assignment_line(self.number, data))
        elif msg.topic == proto.ack_topic(self.number) and isinstance(data, dict) and data.get("status") == proto.QUEUED:
            self._queued(str(data.get("raw")))
        elif (
            msg.topic == proto.ack_topic(self.number)
            and isinstance(data, dict)
            and self._keep_reason(data)
            and self.journal.acked(str(data.get("key")), str(data.get("digest")), str(data.get("status")))
        ):
            status = _ECHO.get(str(data.get("status")), str(data.get("status")))
            if data.get("reason"):
                self.say(say("table {table}: director {status} {key}: {reason}", table=self.number, status=status,
                             key=str(data.get("key")), reason=str(data.get("reason"))))
            else:
                self.say(say("table {table}: director {status} {key}", table=self.number, status=status,
                             key=str(data.get("key"))))
            self._wake.set()

    def _note_sent(self, key: str, payload: str | bytes) -> None:
        raw = payload.encode() if isinstance(payload, str) else payload
        if len(self._sent_raw) > 1000:  # answered messages' hashes are no longer needed
            self._sent_raw.clear()
        self._sent_raw[hashlib.sha256(raw).hexdigest()] = key

    def _queued(self, raw_sha256: str) -> None:
        """The director queued a message of ours: wait ``QUEUED_WAIT_S`` for its ack before sending it again."""
        key = self._sent_raw.get(raw_sha256)
        if key is not None:
            _due, interval = self._due.get(key, (0.0, self.resend_interval))
            self._due[key] = (time.monotonic() + proto.QUEUED_WAIT_S, interval)

    def _keep_reason(self, ack: dict[str, Any]) -> bool:
        """Keep why the director refused a message (the table shows it: "X plays at
        table 2, not at table 1"), before the ack marks it answered. Always True."""
        if ack.get("reason"):
            self.journal.put(f"reason/{ack.get('key')}", str(ack.get("reason")))
        return True

    def _publish_pending(self) -> None:
        """Re-send what the director has not acknowledged, backing off per message
        (``resend_interval`` doubling up to ``max_resend_interval``) so a busy
        director is not buried under copies."""
        c = self._client
        if c is None or not c.is_connected():
            return
        now = time.monotonic()
        for key, payload in self.journal.pending():
            due, interval = self._due.get(key, (0.0, self.resend_interval))
            if now < due:
                continue
            c.publish(proto.outbox_topic(self.number), payload, qos=1)
            self._note_sent(key, payload)
            self.sent += 1
            self._due[key] = (now + interval, min(interval * 2, self.max_resend_interval))

    def _send_loop(self) -> None:
        last_hb = 0.0
        while not self._stop.is_set():
            self._publish_pending()
            now = time.monotonic()
            c = self._client
            if c is not None and c.is_connected() and now - last_hb >= self.heartbeat_interval:
                c.publish(proto.heartbeat_topic(self.number), b"1", qos=0)
                last_hb = now
            self._stop.wait(min(self.resend_interval, 0.2))

    def _send(self, message: dict[str, Any]) -> str:
        signed = self.key.sign(message)
        key = proto.message_key(signed)
        self.journal.queue(key, signed)
        self.say(say("table {table}: sent {key} score {score}", table=self.number, key=key, score=message["score"])
                 if "score" in message else say("table {table}: sent {key}", table=self.number, key=key))
        self._due[key] = (time.monotonic() + self.resend_interval, self.resend_interval * 2)
        self._publish_pending_one(signed)
        return key

    def _publish_live(self, hand: int, scores: Any, counts: Any, *, force: bool = False, state: str = "playing",
                      view: dict[str, Any] | None = None) -> None:
        """The table's public progress for the director's console and spectators (tournament.live):
        QoS 0, outside the outbox, at most five a second unless ``force`` (a hand's end)."""
        c = self._client
        now = time.monotonic()
        if c is None or not c.is_connected() or (not force and now - self._live_at < 0.2):
            return
        self._live_at = now
        body = live_progress(self.display.get("round"), self.display.get("match"), hand, scores, counts, state, view)
        c.publish(live_topic(self.number), json.dumps(body), qos=0)

    def publish_view(self, view: dict[str, Any]) -> None:
        """A real table's display ``view`` (public by construction: what its screen shows),
        relayed for its spectator page; a hand's result or the match's end always goes."""
        over = bool(view.get("match_over"))
        self._publish_live(int(view.get("hand_no") or 0), view.get("scores") or [], None, view=view,
                           force=over or view.get("result") is not None, state="finished" if over else "playing")

    def _publish_pending_one(self, signed: dict[str, Any]) -> None:
        c = self._client
        if c is not None and c.is_connected():
            payload = json.dumps(signed)
            c.publish(proto.outbox_topic(self.number), payload, qos=1)
            self._note_sent(proto.message_key(signed), payload)
            self.sent += 1

    def _wait_ack(self, key: str) -> str:
        while True:
            st = self.journal.ack_status(key)
            if st is not None:
                return st
            if self._stop.is_set():
                raise Crashed()
            self._wake.wait(0.2)
            self._wake.clear()

    # --------------------------------------------------------------- play

    def _play_loop(self) -> None:
        while not self._stop.is_set():
            a = self.journal.get("assignment")
            worked = False
            if a:
                for m in a.get("matches", []):
                    if self._stop.is_set():
                        raise Crashed()
                    state = self.journal.match(int(m["match"]))
                    if m.get("done") or (state is not None and state[0] in ("done", "failed")):
                        continue
                    try:
                        self._run_match(a, m)
                    except Crashed:
                        raise
                    except Exception as exc:  # this match cannot be played here: say so, go on
                        log.exception("table %d: match %s cannot be played", self.number, m.get("match"))
                        self.journal.save_match(int(m["match"]), "failed", [])
                        if self.bus is not None:
                            self.bus.publish("message", text=f"call the director: {exc}", level="error")
                    worked = True
            if not worked:
                self._wake.wait(0.2)
                self._wake.clear()

    def _taps(self, m: dict[str, Any]) -> dict[str, int]:
        """The players' badges (UID -> side) that match ``m``'s sides' digests."""
        from .security import badges_tapped

        return badges_tapped(self.badges, [e.get("badges") or [] for e in m["entrants"]], str(m.get("badge_salt", "")))

    def _run_match(self, a: dict[str, Any], m: dict[str, Any]) -> None:
        ev, rnd, mid = int(a["event"]), int(a["round"]), int(m["match"])
        state = self.journal.match(mid)
        self.display = {
            "round": rnd, "match": mid, "entrants": [e["name"] for e in m["entrants"]],
            "seats": m["seats"], "variant": m["variant"], "target": m["options"].get("target"),
            "time_limit_s": m.get("time_limit_s"), "best_of": m.get("best_of", 1),
        }
        if self.bus is not None:
            # The table's display shows the match: names, seats, variant, target or clock.
            self.bus.publish("tournament_match", **self.display)
        if state is None:
            badges = sorted(self._taps(m))
            self._send({"kind": "checkin", "event": ev, "round": rnd, "table": self.number, "match": mid, "badges": badges})
            self.journal.save_match(mid, "playing", [])
            state = ("playing", [], None)
        phase, games, revision = state
        if phase == "playing":
            self.playing = True
            try:
                games = self._play(m, games, mid)
            finally:
                self.playing = False
            revision = int(self.journal.get(f"revision/{ev}/{rnd}", 0)) + 1
            self.journal.put(f"revision/{ev}/{rnd}", revision)
            self.journal.save_match(mid, "reporting", games, revision)
            phase = "reporting"
        assert revision is not None
        scores = [_score_of(g) for g in games]
        total = [sum(s[i] for s in scores) for i in range(len(scores[0]))]  # two, three or four sides
        ids = [int(e["id"]) for e in m["entrants"]]
        winner_side = _winner_side(games, scores, int(m.get("best_of", 1)))
        result = {
            "kind": "result", "event": ev, "round": rnd, "table": self.number, "revision": revision,
            "match": mid, "entrants": ids, "score": _nums(total), "games": [_nums(s) for s in scores],
            "winner": None if winner_side is None else ids[winner_side],
            "records": games,
        }
        key = self._send(result) if phase == "reporting" else proto.message_key(result)
        status = self._wait_ack(key)
        if self.bus is not None:
            self.bus.publish("tournament_result", match=mid, score=result["score"], winner=result["winner"],
                             status=status, confirm=status != "refused")
        if status == "refused":
            log.warning("table %d: result of match %d refused", self.number, mid)
            self.journal.save_match(mid, "done", games, revision)
            return
        mode = m.get("confirm", "badges")
        if mode == "director":
            # The director confirms from the console; the table's part is done.
            self.journal.save_match(mid, "done", games, revision)
            return
        # The director acknowledged: ask both sides to confirm (a badge tap, or
        # each side's seat button accepting the score the table shows).
        self.journal.save_match(mid, "confirming", games, revision)
        confirm: dict[str, Any] = {"kind": "confirm", "event": ev, "round": rnd, "table": self.number,
                                   "revision": revision, "match": mid}
        if mode == "buttons":
            confirm["accepted"] = list(range(len(m["entrants"])))
        else:
            first: dict[int, str] = {}
            for uid, side in sorted(self._taps(m).items()):
                first.setdefault(side, uid)
            confirm["badges"] = [first[side] for side in sorted(first)]
        ckey = self._send(confirm)
        self._wait_ack(ckey)
        self.journal.save_match(mid, "done", games, revision)

    def _play(self, m: dict[str, Any], games: list[dict[str, Any]], mid: int) -> list[dict[str, Any]]:
        """Play (or resume) the match; returns one game record per game of the series."""
        from tablesense.games.dominoes import DominoMatch

        best_of = int(m.get("best_of", 1))
        started = time.monotonic()
        limit = m.get("time_limit_s")
        games = list(games)
        while True:
            if games and games[-1].get("x-complete"):
                scores = [_score_of(g) for g in games]
                if best_of == 1 or _winner_side(games, scores, best_of) is not None:
                    return games
                games.append({"x-complete": False})
            if not games:
                games.append({"x-complete": False})
            gi = len(games) - 1
            if not find_game(m.get("game") or names()[0]).has_turns:  # simultaneous play: Kems' loop
                games[gi] = self._play_kems(m, games, gi, mid)
                if limit and time.monotonic() - started >= float(limit):
                    return games
                continue
            match = DominoMatch(m["variant"], {"target": m["options"]["target"]}, seats=len(m["seats"]))
            _restore(match, games[gi])
            rng = random.Random(f"{self.seed}:{mid}:{gi}:{len(match.hands)}:{self._starts}")
            players = _players(self.player, len(m["seats"]))
            while not match.is_over:
                hand = match.new_hand(rng=rng)
                while not hand.is_over:
                    if self._stop.is_set():
                        raise Crashed()
                    seat = hand.to_play
                    hand.play(players[seat].choose(hand, seat, rng))
                    self._publish_live(len(match.hands) + 1, match.score, [hand.count(s) for s in range(hand.seats)])
                    if self.on_move is not None:
                        self.on_move(self)
                    if self.move_delay:
                        time.sleep(self.move_delay)
                match.finish_hand()
                self._publish_live(len(match.hands), match.score, None, force=True,
                                   state="finished" if match.is_over else "playing")
                rec = match.to_record()
                rec["x-complete"] = bool(match.is_over)
                games[gi] = rec
                self.journal.save_match(mid, "playing", games)
                if limit and time.monotonic() - started >= float(limit) and not match.is_over:
                    rec["x-complete"] = True
                    rec["x-stopped"] = "time limit"
                    games[gi] = rec
                    self.journal.save_match(mid, "playing", games)
                    return games


    def _play_kems(self, m: dict[str, Any], games: list[dict[str, Any]], gi: int, mid: int) -> dict[str, Any]:
        """One Kems game: every seat polled in random order each tick, a tick where
        nobody acts refreshes the board (games.kems_players.play_round); a round
        that stalls is abandoned and dealt again. Journaled after every round."""
        from tablesense.games.kems import Card as KCard
        from tablesense.games.kems import KemsMatch, event_from_json
        from tablesense.games.kems_players import make_player, play_round

        seats = len(m["seats"])
        match = KemsMatch({"target": m["options"]["target"]}, seats=seats)
        for r in games[gi].get("hands", []):
            rnd = match.new_hand(deal=[[KCard.parse(c) for c in h] for h in r["deal"]],
                                  board=[KCard.parse(c) for c in r["board"]], stock=[KCard.parse(c) for c in r["stock"]])
            for ev in r["events"]:
                rnd.play(event_from_json(ev))
            match.finish_hand()
        rng = random.Random(f"{self.seed}:{mid}:{gi}:{len(match.hands)}:{self._starts}")
        players = [make_player("greedy") for _ in range(seats)]
        while not match.is_over:
            if self._stop.is_set():
                raise Crashed()
            rnd = match.new_hand(rng)
            if play_round(rnd, players, rng):
                match.finish_hand()
                self._publish_live(len(match.hands), match.score, None, force=True,
                                   state="finished" if match.is_over else "playing")
                rec = match.to_record()
                rec["x-complete"] = bool(match.is_over)
                games[gi] = rec
                self.journal.save_match(mid, "playing", games)
            else:
                match.abandon_hand()
            if self.on_move is not None:
                self.on_move(self)
            if self.move_delay:
                time.sleep(self.move_delay)
        return games[gi]


#: The director's answers, as a person reads them (the protocol keeps the English word).
_ECHO = {"accepted": say("accepted"), "duplicate": say("duplicate"), "refused": say("refused")}


def _assignment_line(table: int, a: dict[str, Any]) -> Sentence:
    """What the director asked of this table, in one line (a Sentence: the
    command prints it in its language)."""
    ms = [m for m in a.get("matches", []) if not m.get("done")]
    if not ms:
        return say("table {table}: round {round}: nothing to play here; waiting for the next round", table=table,
                   round=a.get("round"))
    parts = [say("{entrants} (match {match})", entrants=" v ".join(str(e.get("name")) for e in m.get("entrants", [])),
                 match=m.get("match")) for m in ms]
    matches = parts[0]
    for p in parts[1:]:
        matches = say("{first}; then {then}", first=matches, then=p)
    return say("table {table}: round {round}: {matches}", table=table, round=a.get("round"), matches=matches)


def _restore(match: Any, record: dict[str, Any]) -> None:
    """Replay the finished hands of a journaled record into a fresh match."""
    from tablesense.games.dominoes import Tile, move_from_json

    for h in record.get("hands", []):
        deal = [[Tile.parse(t) for t in seat] for seat in h["deal"]]
        boneyard = [Tile.parse(t) for t in h.get("boneyard", [])] or None
        hand = match.new_hand(deal=deal, boneyard=boneyard)
        for mv in h["moves"]:
            hand.play(move_from_json(mv))
        match.finish_hand()


def _players(kind: str, seats: int) -> list[Any]:
    """Computer players from games.dominoes_players (CONTRACTS section 1)."""
    try:
        from tablesense.games import dominoes_players as dp
    except ImportError:  # the bots' module is optional for the director: play the heaviest tile
        return [_HeaviestTile() for _ in range(seats)]
    cls = {"greedy": dp.GreedyPlayer, "random": dp.RandomPlayer}.get(kind, dp.GreedyPlayer)
    return [cls() for _ in range(seats)]


class _HeaviestTile:
    """Plays the legal move with the most pips (the classic beginner's rule)."""

    def choose(self, hand: Any, seat: int, rng: random.Random) -> Any:
        moves = hand.legal_moves(seat)
        return max(moves, key=lambda mv: (getattr(getattr(mv, "tile", None), "pips", -1), rng.random()))


def _score_of(record: dict[str, Any]) -> tuple[float, ...]:
    """The record's score per side (two sides, or three or four at a table of k entrants)."""
    from tablesense.games.record import replay

    rr = replay(_clean(record))
    return tuple(float(x) for x in rr.score)


def _clean(record: dict[str, Any]) -> dict[str, Any]:
    return record


def _winner_side(games: list[dict[str, Any]], scores: list[tuple[float, ...]], best_of: int) -> int | None:
    from .pairing import series_winner

    if best_of > 1:
        return series_winner([(s[0], s[1]) for s in scores], best_of)
    best = max(scores[0])
    top = [i for i, x in enumerate(scores[0]) if x == best]
    return top[0] if len(top) == 1 else None


def _nums(xs: Any) -> list[int | float]:
    return [int(x) if float(x).is_integer() else float(x) for x in xs]
