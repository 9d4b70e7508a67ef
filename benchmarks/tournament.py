"""Tournament figures, each against a peer measured in the same run.

1. Swiss pairing time for 100 and 1,000 entrants (after 5 rounds of history):
   our minimum-cost matching vs the greedy hand method (time, cost, rematches)
   and vs the same matching on the complete graph (the proof that the band
   graph loses nothing: equal cost), and a 30-round history of 150 entrants
   (deep histories were where the old sparse graph lost optimality).
2. Standings recompute for 1,000 entrants x 10 rounds with every tie-break,
   vs a bare SQL GROUP BY of wins and points (no tie-breaks) on the same data.
3. Result ingestion per second through a real Mosquitto with 200 tables, each
   a separate MQTT user publishing its signed result (with its game records)
   from a durable outbox and re-sending until acknowledged; the director
   verifies signature and records and stores each result. Peer: the same
   broker's raw QoS 1 throughput for the same payloads to a do-nothing
   subscriber. Lost = results never stored; duplicated = results stored or
   accepted more than once.

Run: .venv/bin/python benchmarks/tournament.py [--tables 200] [--rounds 2] [--db sqlite] [--db postgresql+psycopg://...]
The last line reads: swiss_1000_s=X standings_s=Y ingest_per_s=Z lost=N duplicated=M resent=R db=D
ingest_<db>_per_s=... load_1m=L (ingest_per_s: the slowest database measured;
resent: messages the tables sent beyond one per result, i.e. re-sends while
an acknowledgement was due; the director answers "queued" on receipt, so a
table re-sends only when an ack is overdue).
"""

from __future__ import annotations

import argparse
import getpass
import hashlib
import json
import os
import random
import sqlite3
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from tablesense.journal.outbox import TableOutbox
from tablesense.tournament import pairing as pr
from tablesense.tournament import protocol as proto
from tablesense.tournament.bridge import BrokerURL, DirectorBridge, make_client, wait_until
from tablesense.tournament.db import Database, Result
from tablesense.tournament.mosquitto import Mosquitto, free_port, table_user, write_broker_config
from tablesense.tournament.security import TableKey, digest
from tablesense.tournament.service import Director
from tablesense.tournament.standings import MatchOutcome, compute_standings


def swiss_field(n: int, rounds: int, seed: int) -> list[pr.SwissPlayer]:
    rng = random.Random(seed)
    score = dict.fromkeys(range(n), 0.0)
    met: dict[int, set[int]] = {i: set() for i in range(n)}
    for r in range(rounds):
        ranked = sorted(range(n), key=lambda i: (-score[i], i))
        if r == 0:
            pairs = pr.swiss_first_round(list(range(n)), seeded=False, rng=rng)
        else:
            pairs = pr.swiss_pairings([pr.SwissPlayer(i, score[i], ranked.index(i), frozenset(met[i])) for i in range(n)])
        for p in pairs:
            if p.b is None:
                score[p.a] += 1
                continue
            met[p.a].add(p.b)
            met[p.b].add(p.a)
            score[rng.choice((p.a, p.b))] += 1
    ranked = sorted(range(n), key=lambda i: (-score[i], i))
    pos = {e: i for i, e in enumerate(ranked)}
    return [pr.SwissPlayer(i, score[i], pos[i], frozenset(met[i])) for i in range(n)]


def bench_swiss() -> float:
    out = 0.0
    for n in (100, 1000):
        players = swiss_field(n, 5, seed=n)
        t = time.perf_counter()
        ours = pr.swiss_pairings(players)
        t_ours = time.perf_counter() - t
        t = time.perf_counter()
        greedy = pr.greedy_swiss_pairings(players)
        t_greedy = time.perf_counter() - t
        c_ours, r_ours = pr.pairing_cost(players, ours)
        c_greedy, r_greedy = pr.pairing_cost(players, greedy)
        print(f"swiss {n:>5} entrants: matching {t_ours:.3f} s cost {c_ours} rematches {r_ours} | "
              f"greedy {t_greedy:.4f} s cost {c_greedy} rematches {r_greedy}")
        t = time.perf_counter()
        exact = pr.swiss_pairings(players, exact_up_to=10_000)
        t_exact = time.perf_counter() - t
        band = pr.swiss_pairings(players, exact_up_to=0)
        print(f"swiss {n:>5} entrants: complete-graph optimum {t_exact:.3f} s cost {pr.pairing_cost(players, exact)[0]}"
              f" | band graph cost {pr.pairing_cost(players, band)[0]}")
        if n == 1000:
            out = t_ours
    players = swiss_field(150, 30, seed=7)
    t = time.perf_counter()
    deep = pr.swiss_pairings(players)
    t_deep = time.perf_counter() - t
    exact = pr.swiss_pairings(players, exact_up_to=10_000)
    print(f"swiss   150 entrants, 30 rounds: matching {t_deep:.3f} s cost {pr.pairing_cost(players, deep)[0]}"
          f" | complete-graph optimum {pr.pairing_cost(players, exact)[0]}")
    return out


def bench_standings() -> float:
    rng = random.Random(1)
    n, rounds = 1000, 10
    players = list(range(n))
    outcomes: list[MatchOutcome] = []
    for r in range(1, rounds + 1):
        rng.shuffle(players)
        for a, b in zip(players[::2], players[1::2], strict=True):
            sa, sb = rng.randint(0, 150), rng.randint(0, 150)
            w = a if sa > sb else (b if sb > sa else None)
            outcomes.append(MatchOutcome(r, a, b, sa, sb, w))
    tbs = ["games_won", "point_difference", "points_for", "head_to_head", "buchholz", "buchholz_cut1",
           "buchholz_median", "sonneborn_berger", "lots"]
    t = time.perf_counter()
    st = compute_standings(range(n), outcomes, tbs, lots_seed="bench")
    t_ours = time.perf_counter() - t
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE m (a INT, b INT, sa REAL, sb REAL, w INT)")
    db.executemany("INSERT INTO m VALUES (?,?,?,?,?)", [(o.a, o.b, o.score_a, o.score_b, o.winner) for o in outcomes])
    t = time.perf_counter()
    rows = db.execute(
        "SELECT e, SUM(won), SUM(pf), SUM(pa) FROM (SELECT a e, w=a won, sa pf, sb pa FROM m UNION ALL "
        "SELECT b, w=b, sb, sa FROM m) GROUP BY e ORDER BY 2 DESC, 3-4 DESC, 3 DESC"
    ).fetchall()
    t_sql = time.perf_counter() - t
    assert len(rows) == len(st) == n
    print(f"standings 1000 x 10: {t_ours:.3f} s with {len(tbs)} tie-breaks | SQL GROUP BY (no tie-breaks) {t_sql:.3f} s")
    return t_ours


def _record_pool(k: int) -> list[dict[str, Any]]:
    from tablesense.games.dominoes import DominoMatch
    from tablesense.games.dominoes_players import GreedyPlayer

    rng = random.Random(7)
    pool = []
    for _ in range(k):
        m = DominoMatch("pairs-pips", {"target": 50})
        bots = [GreedyPlayer() for _ in range(4)]
        while not m.is_over:
            h = m.new_hand(rng=rng)
            while not h.is_over:
                h.play(bots[h.to_play].choose(h, h.to_play, rng))
            m.finish_hand()
        pool.append(m.to_record())
    return pool


class BenchTable:
    """A table that only reports: durable outbox (the real TableOutbox), re-send with
    back-off until the director acknowledges that exact message."""

    def __init__(self, number: int, key: TableKey, broker: BrokerURL, journal: Path,
                 settled: threading.Event | None = None) -> None:
        self.number = number
        self._settled = settled  # set when this table's last message is acknowledged
        self.key = key
        self.journal = TableOutbox(journal, number, digest)
        self.client = make_client(f"bench-table-{number}", broker)
        self.client.will_set(proto.status_topic(number), proto.STATUS_OFFLINE, qos=1, retain=True)
        self.client.on_message = self._on_message
        self.client.on_connect = self._on_connect
        self.client.connect_async(broker.host, broker.port, keepalive=10)
        self.client.loop_start()
        self.sent = 0
        self._due: dict[str, tuple[float, float]] = {}
        self._raw: dict[str, str] = {}  # SHA-256 of the bytes sent -> key

    def _on_connect(self, c: mqtt.Client, *_a: Any) -> None:
        c.publish(proto.status_topic(self.number), proto.STATUS_ONLINE, qos=1, retain=True)
        c.subscribe(proto.ack_topic(self.number), 1)

    def _on_message(self, _c: mqtt.Client, _u: Any, msg: mqtt.MQTTMessage) -> None:
        a = json.loads(msg.payload)
        if a.get("status") == proto.QUEUED:  # received: wait for the ack, do not send it again yet
            key = self._raw.get(a["raw"])
            if key is not None:
                self._due[key] = (time.monotonic() + proto.QUEUED_WAIT_S, self._due.get(key, (0.0, 1.0))[1])
            return
        if self.journal.acked(a["key"], a["digest"], a["status"]) and self._settled is not None and self.done():
            self._settled.set()

    def report(self, body: dict[str, Any]) -> None:
        signed = self.key.sign(body)
        self.journal.queue(proto.message_key(signed), signed)
        self.resend()

    def resend(self) -> None:
        now = time.monotonic()
        for key, payload in self.journal.pending():
            due, interval = self._due.get(key, (0.0, 1.0))
            if now < due:
                continue
            raw = payload.encode() if isinstance(payload, str) else payload
            self._raw[hashlib.sha256(raw).hexdigest()] = key
            self.client.publish(proto.outbox_topic(self.number), raw, qos=1)
            self.sent += 1
            self._due[key] = (now + interval, min(2 * interval, 8.0))

    def done(self) -> bool:
        return not self.journal.pending()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
        self.journal.close()


def _tables_process(conn: Any, host: str, port: int, creds: dict[str, str], keys: dict[int, str], work: str) -> None:
    """The tables live in their own process (as on real hardware, each table is its own machine)."""
    settled = threading.Event()  # some table's last message was acknowledged: look whether all are done
    heads = {
        t: BenchTable(t, TableKey.from_seed(seed.encode()), BrokerURL(host, port, table_user(t), creds[table_user(t)]),
                      Path(work) / f"t{t}.journal", settled)
        for t, seed in keys.items()
    }
    time.sleep(1.0)
    conn.send("ready")
    while True:
        msg = conn.recv()
        if msg == "stop":
            break
        for t_no, body in msg:
            heads[t_no].report(body)
        deadline = time.monotonic() + 180
        # woken by the last ack of a table (the figure is not rounded up to a
        # polling interval), and every 0.1 s to re-send what is overdue
        while time.monotonic() < deadline:
            settled.clear()
            if all(h.done() for h in heads.values()):
                break
            settled.wait(0.1)
            for h in heads.values():
                h.resend()
        conn.send(sum(h.sent for h in heads.values()))
    for h in heads.values():
        h.close()


def _database(url: str | None, work: Path) -> tuple[Database, Any]:
    """The event's database: SQLite (synchronous=FULL) in the work folder, or a
    fresh schema of the PostgreSQL at ``url`` (dropped afterwards)."""
    if not url or url == "sqlite":
        return Database(f"sqlite:///{work / 'event.db'}"), lambda: None
    import uuid

    import psycopg
    import psycopg.sql

    plain = url.replace("postgresql+psycopg://", "postgresql://")
    schema = "ts_bench_" + uuid.uuid4().hex[:12]
    with psycopg.connect(plain, autocommit=True) as c:
        c.execute(psycopg.sql.SQL("CREATE SCHEMA {}").format(psycopg.sql.Identifier(schema)))

    def drop() -> None:
        with psycopg.connect(plain, autocommit=True) as c:
            c.execute(psycopg.sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(psycopg.sql.Identifier(schema)))

    sep = "&" if "?" in url else "?"
    return Database(f"{url}{sep}options=-csearch_path%3D{schema}"), drop


def bench_ingest(tables: int, rounds: int, db_url: str | None = None, check_workers: int = 0) -> tuple[float, int, int, int]:
    import multiprocessing

    from tablesense.games.record import replay

    work = Path(tempfile.mkdtemp(prefix="tablesense-bench-"))
    port = free_port()
    files = write_broker_config(work / "broker", tables=tables, port=port, run_as=getpass.getuser())
    mosq = Mosquitto(files.conf, port).start()
    base = BrokerURL("127.0.0.1", port)
    try:
        # Peer: raw broker throughput of the same payloads, QoS 1, to a do-nothing subscriber.
        pool = _record_pool(12)
        sample = json.dumps({"records": [pool[0]], "sig": "x" * 88}).encode()
        got = threading.Event()
        count = [0]
        total = tables * rounds

        def on_msg(*_a: Any) -> None:
            count[0] += 1
            if count[0] >= total:
                got.set()

        sub = make_client("bench-sub", base.with_user("director", files.credentials["director"]), clean=True)
        sub.on_message = on_msg
        def on_connect(c: mqtt.Client, *_a: Any) -> None:
            c.subscribe(f"{proto.TOPIC_ROOT}/tables/+/out", 1)

        sub.on_connect = on_connect
        sub.connect(base.host, base.port)
        sub.loop_start()
        pub = make_client("bench-pub", base.with_user("table-1", files.credentials["table-1"]), clean=True)
        pub.connect(base.host, base.port)
        pub.loop_start()
        time.sleep(0.5)
        t = time.perf_counter()
        for _ in range(total):
            pub.publish(proto.outbox_topic(1), sample, qos=1)
        got.wait(60)
        raw_rate = count[0] / (time.perf_counter() - t)
        for c in (pub, sub):
            c.disconnect()
            c.loop_stop()

        db, drop_db = _database(db_url, work)
        d = Director.create_event(db, "Bench", options={"target": 50, "rounds": rounds, "lots_seed": "b"})
        for i in range(2 * tables):
            d.register(f"E{i}", [f"a{i}", f"b{i}"], [f"x{i}", f"y{i}"])
        seeds = {t: f"bench:{t}" for t in range(1, tables + 1)}
        for t_no, sd in seeds.items():
            d.add_table(t_no, TableKey.from_seed(sd.encode()).public)
        scores = [replay(r) for r in pool]
        # paho waits with select(), limited to file descriptors below 1024: a
        # process holds at most 50 tables (socket, wake-up pipe, journal files).
        ctx = multiprocessing.get_context("spawn")
        groups = [dict(list(seeds.items())[i : i + 50]) for i in range(0, tables, 50)]
        pipes = []
        procs = []
        for g in groups:
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_tables_process, args=(child, base.host, base.port, files.credentials, g, str(work)))
            proc.start()
            pipes.append(parent)
            procs.append(proc)
        bridge = DirectorBridge(d, base.with_user("director", files.credentials["director"]), check_workers=check_workers)
        bridge.start()
        bridge.wait_connected(10)
        for p in pipes:
            assert p.recv() == "ready"
        # the tables' retained "online" statuses handled first: the figure is the results', not the start-up's
        wait_until(lambda: all(d.last_seen(t) for t in seeds) and bridge.idle(), 60)
        elapsed = 0.0
        sent = 0
        for r in range(1, rounds + 1):
            d.pair_next_round(force=True)
            bodies = []
            for i, m in enumerate(x for x in d.matches(r) if x.table_no is not None):
                k = i % len(pool)
                rr = scores[k]
                sc = [float(x) for x in rr.score]
                bodies.append((m.table_no, {
                    "kind": "result", "event": d.event_id, "round": r, "table": m.table_no, "revision": 1,
                    "match": m.id, "entrants": [m.entrant_a, m.entrant_b], "score": sc, "games": [sc],
                    "winner": None if rr.winner is None else [m.entrant_a, m.entrant_b][rr.winner], "records": [pool[k]],
                }))
            t = time.perf_counter()
            for p, g in zip(pipes, groups, strict=True):
                p.send([(t_no, b) for t_no, b in bodies if t_no in g])
            sent = sum(p.recv() for p in pipes)
            elapsed += time.perf_counter() - t
        for p in pipes:
            p.send("stop")
        for proc in procs:
            proc.join(30)
        wait_until(bridge.idle, 30)
        with db.session() as s:
            stored = Counter(x.match_id for x in s.query(Result).all())
        played = [m.id for m in d.matches() if m.table_no is not None]
        lost = sum(1 for m in played if stored.get(m, 0) == 0)
        accepted = Counter(a["match"] for a in d.audit_log() if a["action"] == "result-accepted")
        duplicated = sum(c - 1 for c in stored.values() if c > 1) + sum(c - 1 for c in accepted.values() if c > 1)
        rate = len(played) / elapsed if elapsed else 0.0
        resent = sent - len(played)
        print(f"ingest {tables} tables x {rounds} rounds on {db.engine.dialect.name}: {len(played)} results in "
              f"{elapsed:.2f} s = {rate:.0f}/s (messages sent {sent}, re-sent {resent}, director saw "
              f"{bridge.stats.duplicates} duplicates, refused {bridge.stats.refused}; {check_workers} check workers) | "
              f"raw broker QoS 1 same payload {raw_rate:.0f}/s | load {os.getloadavg()[0]:.2f}")
        bridge.stop()
        db.close()
        drop_db()
        return rate, lost, duplicated, resent
    finally:
        mosq.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--db", action="append",
                    help="sqlite (a file, synchronous=FULL) or a PostgreSQL URL (a fresh schema, dropped afterwards); "
                         "give it twice to measure both in the same run (default: sqlite)")
    ap.add_argument("--check-workers", type=int, default=os.cpu_count() or 1,
                    help="processes that check and replay results (the director's default: one per core)")
    ap.add_argument("--ingest-only", action="store_true", help="Skip the pairing and standings figures.")
    args = ap.parse_args()
    swiss = 0.0 if args.ingest_only else bench_swiss()
    standings = 0.0 if args.ingest_only else bench_standings()
    rates: dict[str, float] = {}
    lost = dup = resent = 0
    for url in args.db or ["sqlite"]:
        rate, lo, du, rs = bench_ingest(args.tables, args.rounds, url, args.check_workers)
        rates["sqlite" if url == "sqlite" else "postgresql"] = rate
        lost, dup, resent = lost + lo, dup + du, resent + rs
    per_db = " ".join(f"ingest_{name}_per_s={r:.0f}" for name, r in rates.items())
    print(f"swiss_1000_s={swiss:.3f} standings_s={standings:.3f} ingest_per_s={min(rates.values()):.0f} lost={lost} "
          f"duplicated={dup} resent={resent} db={','.join(rates)} {per_db} load_1m={os.getloadavg()[0]:.2f}")
    return 0 if lost == 0 and dup == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
