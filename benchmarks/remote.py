"""Remote seats: from a move at one table to the LEDs at the other.

Two real ``tablesense play --remote`` processes (the host and a joining
table), each on its own virtual table (virtual boards running the real
firmware over pseudo-terminals), play a pairs-pips match to ``--target``
with computer seats on both sides. The joining table's virtual hands place
each of the host's plays only once both LEDs show on the virtual boards (the
piece in the stock, its target cell) and print how long after the authority
sent the move that was: the figure measured is *authority sends the
accepted move -> the frame crosses the broker(s) -> the joining table's
judge lights the cells -> the LED frames reach the boards' firmware -> both
LEDs are on*.

Two runs in the same invocation:

- ``bridged``: host on club A's broker, joiner on club B's, B bridged to A
  (both TLS): the issue's case;
- ``one broker`` (the peer): both tables on one TLS broker: the bridge's cost
  is the difference.

Goal (docs/remote.md): p95 < 500 ms over the bridge.

Last line: ``remote_led_p50_ms=... remote_led_p95_ms=... one_broker_p95_ms=... moves=...``
"""

from __future__ import annotations

import argparse
import getpass
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tablesense.remote.wire import bridge_brokers, table_url, write_remote_broker
from tablesense.tournament.mosquitto import BrokerFiles, Mosquitto, free_port

LIT = re.compile(r"remote piece: .* \(lit, (\d+) ms after the authority sent the move\)")


def _play(*args: str) -> tuple[subprocess.Popen[str], list[str]]:
    env = {**os.environ, "COLUMNS": "250"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tablesense.cli", "play", "--table", "dominoes-4-remote", *args],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lines: list[str] = []
    stream = proc.stderr
    assert stream is not None
    threading.Thread(target=lambda: lines.extend(iter(stream.readline, "")), daemon=True).start()
    return proc, lines


def match(url_host: str, url_join: str, target: int, seed: int) -> list[float]:
    """One match; the joining table's lights-on delays (ms)."""
    host, host_lines = _play("--remote", "host", "--broker", url_host, "--seed", str(seed),
                             "--target", str(target), "--remote-timeout", "600")
    join = None
    try:
        deadline = time.monotonic() + 60
        code = None
        while code is None and time.monotonic() < deadline:
            found = [x for x in host_lines if "remote match code:" in x]
            if found:
                code = found[0].split("remote match code:")[1].split()[0]
            time.sleep(0.1)
        if code is None:
            raise SystemExit("the host printed no code:\n" + "".join(host_lines))
        join, join_lines = _play("--remote", "join", code, "--broker", url_join, "--seed", str(seed + 1),
                                 "--remote-timeout", "600")
        host.wait(660)
        join.wait(60)
        if host.returncode or join.returncode:
            raise SystemExit("a table failed:\n" + "".join(host_lines[-20:]) + "".join(join_lines[-20:]))
        return [float(m.group(1)) for x in join_lines if (m := LIT.search(x))]
    finally:
        for p in (host, join):
            if p is not None and p.poll() is None:
                p.kill()


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[18] if len(values) >= 2 else values[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--target", type=int, default=50, help="match target (50: a whole pairs-pips match)")
    ap.add_argument("--seed", type=int, default=21)
    args = ap.parse_args()
    user = getpass.getuser()
    with tempfile.TemporaryDirectory(prefix="tablesense-remote-bench-") as tmp:
        port_a, port_b, port_one = free_port(), free_port(), free_port()
        a = write_remote_broker(Path(tmp) / "a", tables=2, port=port_a, run_as=user)
        b = write_remote_broker(Path(tmp) / "b", tables=2, port=port_b, run_as=user)
        bridge_brokers(b, a, "127.0.0.1", port_a, "bridge-club-b")
        one = write_remote_broker(Path(tmp) / "one", tables=2, port=port_one, run_as=user)

        def url(files: BrokerFiles, port: int, table: str) -> str:
            return table_url(files, table, "127.0.0.1", port)

        with Mosquitto(a.conf, port_a), Mosquitto(b.conf, port_b), \
                Mosquitto(one.conf, port_one):  # each started by the with, and stopped after
            print(f"uptime: {os.popen('uptime').read().strip()}")
            bridged = match(url(a, port_a, "table-1"), url(b, port_b, "table-2"), args.target, args.seed)
            single = match(url(one, port_one, "table-1"), url(one, port_one, "table-2"), args.target, args.seed)
            print(f"uptime: {os.popen('uptime').read().strip()}")
    for name, xs in (("bridged (club A + club B)", bridged), ("one broker (peer)", single)):
        print(f"{name}: {len(xs)} remote plays, p50 {statistics.median(xs):.0f} ms, p95 {p95(xs):.0f} ms, "
              f"max {max(xs):.0f} ms")
    print(f"remote_led_p50_ms={statistics.median(bridged):.0f} remote_led_p95_ms={p95(bridged):.0f} "
          f"one_broker_p95_ms={p95(single):.0f} moves={len(bridged)}")


if __name__ == "__main__":
    main()
