"""How long a simple tournament command takes, start to finish: ``tablesense
tournament check-in N`` on an SQLite event already at the newest migration,
against two peers measured in the same run: the bare interpreter (``python -c
pass``) and the same command of another checkout (``--peer PYTHON``, e.g. the
main branch's .venv/bin/python), which imported SQLAlchemy on every command
and Alembic on every database open.

    .venv/bin/python benchmarks/cli_start.py [--runs 7] [--peer /path/to/other/.venv/bin/python]

Last line: ``check_in_s=... python_s=... peer_s=...`` (medians)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _time(cmd: list[str], runs: int, cwd: Path) -> float:
    took = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)
        took.append(time.perf_counter() - t0)
    return statistics.median(took)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--peer", help="another checkout's python (its tablesense measured the same way)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        db = f"sqlite:///{cwd / 'ev.db'}"
        me = [sys.executable, "-m", "tablesense.cli", "tournament"]
        subprocess.run([*me, "create", "Bench", "--db", db], cwd=cwd, check=True, capture_output=True)
        subprocess.run([*me, "register", "Ana & Bia", "--db", db], cwd=cwd, check=True, capture_output=True)
        bare = _time([sys.executable, "-c", "pass"], args.runs, cwd)
        mine = _time([*me, "check-in", "1", "--db", db], args.runs, cwd)
        peer = _time([args.peer, "-m", "tablesense.cli", "tournament", "check-in", "1", "--db", db], args.runs, cwd) \
            if args.peer else float("nan")
    load = os.getloadavg()[0]
    print(f"tournament check-in: {mine:.3f} s | python -c pass {bare:.3f} s | peer checkout {peer:.3f} s "
          f"(median of {args.runs}, load average {load:.1f})")
    print(f"check_in_s={mine:.3f} python_s={bare:.3f} peer_s={peer:.3f}")


if __name__ == "__main__":
    main()
