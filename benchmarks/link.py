"""Link benchmark: host latency and throughput with 8 boards streaming changes.

Run: ``.venv/bin/python benchmarks/link.py [--seconds S] [--boards N]``

Phase 1, the real thing: N virtual boards (the real firmware over emulated
MFRC522 readers, each on its own pseudo-terminal) while a driver places and
removes tags on them; a referee-like subscriber lights the cells that hold a
tag and sends the LED picture back through the link.

- host latency: from the moment the host's reader thread got the bytes of a
  CELL frame to the moment the resulting LED frame was written to the port
  (parse, merge, dispatch, subscriber, LED framing, write);
- end to end: from the virtual board writing the CELL frame to that board's
  LED strip showing the new picture (pty both ways, host, the board's loop).

The virtual boards run in a child process (real boards do not compete for
the host's interpreter). The LED painter subscribes with ``direct=True`` (on
the board thread, no hop); ``--queued`` runs it on the dispatcher thread.

Phase 2, throughput: N scripted boards (protocol only, no scanning) stream
CELL events as fast as the host takes them; events/s is what the host
sustains while keeping the merged state exact.

Peers, in the same run and on the same event stream:

- Certabo-style: every scan the board sends all cells as decimal text and
  the host re-parses the whole frame and diffs it (host cost per frame, and
  bytes on the wire per change);
- DGT-style: the host treats a change as a hint and asks for a full dump only
  once the board has been quiet for 0.25 s (end-to-end latency).

The last line is ``p99_host_ms=X p99_end_to_end_ms=Y events_per_s=Z``.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "host"))

from tablesense.firmware import proto
from tablesense.link.board_conn import LinkOptions
from tablesense.link.manager import TableLink
from tablesense.sim.layouts import bench_geometry
from tablesense.sim.scripted_board import ScriptedBoard
from tablesense.sim.virtual_table import VirtualTable
from tablesense.table.state import TableState

ON = (0, 60, 0)
DIRECT = "--queued" not in sys.argv


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))
    return s[k]


def serve_boards(boards: int, cells: int, seconds: float, seed: int, log_path: str) -> None:
    """Child process: the virtual boards and the world driver, recording when
    each board wrote a CELL frame and when its strip showed each LED frame."""
    import json

    g = bench_geometry(boards, cells)
    vt = VirtualTable(g, seed=seed, scan_interval=0.004, stable_links=False)
    frames_out: dict[int, list[tuple[float, int, bool]]] = {b: [] for b in vt.boards}
    led_log: dict[int, list[tuple[float, list[int]]]] = {b: [] for b in vt.boards}
    for b, vb in vt.boards.items():

        def on_frame(frame: bytes, b: int = b) -> None:
            try:
                t, _brd, _seq, payload = proto.decode_frame(frame[:-1])
            except proto.ProtocolError:
                return
            if t == proto.CELL:
                ch, state = proto.decode_cell_event(payload)
                frames_out[b].append((time.perf_counter(), ch, isinstance(state, bytes)))

        def on_leds(frame: list, b: int = b) -> None:
            led_log[b].append(
                (time.perf_counter(), [i for i, c in enumerate(frame) if tuple(c) == ON])
            )

        vb.on_frame_out = on_frame
        vb.on_leds = on_leds
    paths = vt.start()
    print(json.dumps({str(b): p for b, p in paths.items()}), flush=True)
    sys.stdin.readline()  # "go": the host is online
    for b in vt.boards:  # measure the run only, not the boot-time events
        frames_out[b].clear()
        led_log[b].clear()

    rng = random.Random(seed)
    per_board_period = (
        0.15  # each board: a change every ~150 ms, never the same cell twice in a row
    )
    uids = iter(bytes([4]) + rng.randbytes(6) for _ in range(100000))
    start = time.perf_counter()
    next_at = {b: start + rng.random() * per_board_period for b in vt.boards}
    recent: dict[int, list[str]] = {b: [] for b in vt.boards}
    while time.perf_counter() - start < seconds:
        b = min(next_at, key=lambda k: next_at[k])
        delay = next_at[b] - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        cell = rng.choice([c.id for c in g.cells_of_board(b) if c.id not in recent[b]])
        if cell in vt.tags():
            vt.remove(cell)
        else:
            vt.place(cell, next(uids))
        recent[b] = (recent[b] + [cell])[-2:]
        next_at[b] += per_board_period * (0.5 + rng.random())
    time.sleep(1.5)
    with open(log_path, "w") as f:
        json.dump(
            {
                "frames_out": {str(b): v for b, v in frames_out.items()},
                "led_log": {str(b): v for b, v in led_log.items()},
                "world": {c: u.hex() for c, u in vt.tags().items()},
                "elapsed": time.perf_counter() - start,
            },
            f,
        )
    print("done", flush=True)
    sys.stdin.readline()
    vt.stop()


def phase_firmware(boards: int, cells: int, seconds: float, seed: int) -> dict[str, object]:
    """The host in this process, the virtual boards in a child process (as on a
    real table, where the boards are not competing for the host's interpreter)."""
    import json
    import subprocess
    import tempfile

    g = bench_geometry(boards, cells)
    log_path = tempfile.mktemp(prefix="tablesense-bench-", suffix=".json")
    child = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve-boards",
            "--boards",
            str(boards),
            "--cells",
            str(cells),
            "--seconds",
            str(seconds),
            "--seed",
            str(seed),
            "--log",
            log_path,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        paths = json.loads(child.stdout.readline())
        link = TableLink(
            g,
            [paths[str(b)] for b in sorted(int(k) for k in paths)],
            options=LinkOptions(led_min_interval=0.02),
        )
        host_ms: list[float] = []
        deferred = 0
        last_tags: dict[str, bytes] = {}
        changes: list[
            tuple[float, dict[str, bytes]]
        ] = []  # for the DGT-style peer, judged afterwards

        def on_state(st: TableState) -> None:
            nonlocal deferred, last_tags
            tags = st.tags()
            if tags == last_tags:
                return
            last_tags = tags
            written = link.set_leds({cell: ON for cell in tags})
            t_written = time.perf_counter()
            if written:
                host_ms.append((t_written - st.received_at) * 1000)
            else:
                deferred += 1
            changes.append((st.received_at, tags))

        link.subscribe(on_state, direct=DIRECT)
        link.start()
        if link.wait_until(lambda s: s.complete, 20) is None:
            raise SystemExit("the virtual boards did not come online")
        events_before = sum(c.stats.events for c in link.connections)
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "done"
        with open(log_path) as f:
            log = json.load(f)
        world = {c: bytes.fromhex(u) for c, u in log["world"].items()}
        ok = link.wait_until(lambda s: s.complete and s.tags() == world, 10) is not None
        events = sum(c.stats.events for c in link.connections) - events_before
        link.stop()
    finally:
        if child.stdin is not None:
            child.stdin.close()
        child.wait(10)
        Path(log_path).unlink(missing_ok=True)

    # End to end: CELL frame written by the board -> first LED frame on that board showing it.
    e2e_ms: list[float] = []
    for b_str, outs in log["frames_out"].items():
        b = int(b_str)
        leds = log["led_log"][b_str]
        for t, ch, lit in outs:
            cell = g.cell_at(b, ch)
            if cell is None or cell.led is None:
                continue
            for t_led, on in leds:
                if t_led >= t and (cell.led in on) == lit:
                    e2e_ms.append((t_led - t) * 1000)
                    break
    # DGT-style peer on the same stream: a board's change is only acted on once
    # that board has been quiet for 0.25 s (then the host dumps the board).
    quiet = 0.25
    per_board: dict[int, list[float]] = {}
    prev: dict[str, bytes] = {}
    for t, tags in changes:
        for c in set(tags) | set(prev):
            if tags.get(c) != prev.get(c):
                per_board.setdefault(g.cells[c].board, []).append(t)
        prev = tags
    dgt_ms: list[float] = []
    for times in per_board.values():
        times = sorted(set(times))
        for i, t in enumerate(times):
            j = i
            while j + 1 < len(times) and times[j + 1] - times[j] < quiet:
                j += 1
            dgt_ms.append((times[j] + quiet - t) * 1000)
    return {
        "host_ms": host_ms,
        "deferred": deferred,
        "e2e_ms": e2e_ms,
        "dgt_ms": dgt_ms,
        "events": events,
        "elapsed": float(log["elapsed"]),
        "ok": ok,
    }


def phase_firehose(boards: int, cells: int, seconds: float, seed: int) -> dict[str, object]:
    g = bench_geometry(boards, cells)
    sb = {b.id: ScriptedBoard(g, b.id) for b in g.boards}
    paths = [s.start() for s in sb.values()]
    link = TableLink(g, paths, options=LinkOptions(resync_interval=60))
    link.start()
    if link.wait_until(lambda s: s.complete, 10) is None:
        raise SystemExit("the scripted boards did not come online")
    stop = threading.Event()
    sent = [0] * (boards + 1)

    def stream(board: ScriptedBoard) -> None:
        rng = random.Random(seed * 100 + board.board_id)
        uid = bytes([4]) + rng.randbytes(6)
        while not stop.is_set():
            ch = rng.randrange(len(board.cells))
            board.set_cell(ch, None if board.cells[ch] is not None else uid[:6] + bytes([ch]))
            sent[board.board_id] += 1

    before = sum(c.stats.events for c in link.connections)
    threads = [threading.Thread(target=stream, args=(s,), daemon=True) for s in sb.values()]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(5)

    def truth(st: TableState) -> bool:
        for b, s in sb.items():
            for ch, state in enumerate(s.cells):
                cell = g.cell_at(b, ch)
                assert cell is not None
                r = st[cell.id]
                if (state is None) != (r.__class__.__name__ == "Empty"):
                    return False
        return st.complete

    ok = link.wait_until(truth, 10) is not None
    elapsed = time.perf_counter() - t0
    applied = sum(c.stats.events for c in link.connections) - before
    link.stop()
    for s in sb.values():
        s.stop()
    return {"events": applied, "sent": sum(sent), "elapsed": elapsed, "ok": ok}


def peer_certabo(cells: int, samples: int, seed: int) -> dict[str, float]:
    """Host cost of Certabo-style frames: all cells' 5-byte tag ids as decimal
    text on every scan; the host parses the whole frame and diffs it."""
    rng = random.Random(seed)
    state = [[0, 0, 0, 0, 0] for _ in range(cells)]
    prev: list[tuple[int, ...]] | None = None
    costs: list[float] = []
    frame_bytes = 0
    for _ in range(samples):
        c = rng.randrange(cells)
        state[c] = [rng.randrange(256) for _ in range(5)] if not any(state[c]) else [0, 0, 0, 0, 0]
        text = " ".join(str(v) for cell in state for v in cell) + "\r\n"
        raw = text.encode()
        frame_bytes = len(raw)
        t0 = time.perf_counter()
        nums = [int(x) for x in raw.decode().split()]
        now = [tuple(nums[5 * i : 5 * i + 5]) for i in range(cells)]
        if prev is not None:
            changed = [i for i in range(cells) if now[i] != prev[i]]
            _leds = [ON if any(now[i]) else (0, 0, 0) for i in range(cells)] if changed else None
        prev = now
        costs.append((time.perf_counter() - t0) * 1000)
    return {"p50": pct(costs, 50), "p99": pct(costs, 99), "bytes": float(frame_bytes)}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--boards", type=int, default=8)
    ap.add_argument("--cells", type=int, default=16, help="cells per board")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--queued", action="store_true", help="subscribe through the dispatcher thread")
    ap.add_argument("--serve-boards", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--log", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.serve_boards:
        serve_boards(a.boards, a.cells, a.seconds, a.seed, a.log)
        return

    print(
        f"link benchmark: {a.boards} boards x {a.cells} cells, {a.seconds:.0f} s per phase",
        flush=True,
    )
    fw = phase_firmware(a.boards, a.cells, a.seconds, a.seed)
    host_ms = fw["host_ms"]
    e2e_ms = fw["e2e_ms"]
    dgt_ms = fw["dgt_ms"]
    assert isinstance(host_ms, list) and isinstance(e2e_ms, list) and isinstance(dgt_ms, list)
    ev = fw["events"]
    el = fw["elapsed"]
    assert isinstance(ev, int) and isinstance(el, float)
    print(
        f"ours  virtual boards (real firmware): {ev} events in {el:.1f} s ({ev / el:.0f}/s), "
        f"final state exact: {fw['ok']}, LED pictures deferred by the rate limit: {fw['deferred']}"
    )
    print(
        f"ours  host latency frame->LED frame written: p50 {pct(host_ms, 50):.3f} ms  "
        f"p99 {pct(host_ms, 99):.3f} ms  (n={len(host_ms)})"
    )
    print(
        f"ours  end to end board CELL->board LED: p50 {pct(e2e_ms, 50):.2f} ms  "
        f"p99 {pct(e2e_ms, 99):.2f} ms  (n={len(e2e_ms)})"
    )
    print(
        f"peer  DGT-style dump after 0.25 s quiet, host frame->LED: p50 {pct(dgt_ms, 50):.1f} ms  "
        f"p99 {pct(dgt_ms, 99):.1f} ms"
    )
    fh = phase_firehose(a.boards, a.cells, min(a.seconds, 4.0), a.seed)
    fev = fh["events"]
    fel = fh["elapsed"]
    assert isinstance(fev, int) and isinstance(fel, float)
    eps = fev / fel
    print(
        f"ours  firehose: {fev} events applied of {fh['sent']} sent in {fel:.1f} s, state exact: {fh['ok']}"
    )
    cert = peer_certabo(a.cells * a.boards, 2000, a.seed)
    ours_bytes = len(proto.encode_frame(proto.CELL, 1, 0, proto.encode_cell_event(3, bytes(7))))
    print(
        f"peer  Certabo-style full text frame ({a.cells * a.boards} cells): host parse+diff p50 {cert['p50']:.3f} ms  "
        f"p99 {cert['p99']:.3f} ms per scan; {cert['bytes']:.0f} bytes per scan vs {ours_bytes} bytes per change here"
    )
    if not (fw["ok"] and fh["ok"]):
        print("WARNING: the link's final state did not match the boards", file=sys.stderr)
    print(
        f"p99_host_ms={pct(host_ms, 99):.3f} p99_end_to_end_ms={pct(e2e_ms, 99):.2f} events_per_s={eps:.0f}"
    )


if __name__ == "__main__":
    main()
