"""How long a simple tournament command takes, start to finish: ``tablesense
tournament check-in N`` on an SQLite event already at the newest migration,
against two peers measured in the same run: the bare interpreter (``python -c
pass``) and the same command of another version: ``--peer-commit REV`` (its
``host/`` taken with ``git archive`` into a temporary folder, run by this
interpreter with ``PYTHONPATH``; nothing in the repository changes), e.g.
``9022aa3^``, the last version that imported SQLAlchemy on every command and
Alembic on every database open; or ``--peer PYTHON``, another checkout's
interpreter. Each version creates and migrates its own event first, so the
timed calls find the database at their newest migration.

Every call is a new process (a cold start of the interpreter and the
command; the operating system's file cache stays warm, as it is for a
director typing commands). The first call of each is reported apart from the
median. The commands take turns, call after call (a load that changes weighs on each alike).

    .venv/bin/python benchmarks/cli_start.py [--runs 7] [--peer-commit 9022aa3^ | --peer PYTHON]

Last line: ``check_in_s=... python_s=... peer_s=... check_in_first_s=... peer_first_s=... check_in_cpu_s=...
peer_cpu_s=... load_1m=...`` (wall-clock medians, the first calls, CPU-time medians: on a shared machine
the CPU time is the steadier figure)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _setup(python: str, folder: Path, env: dict[str, str] | None) -> list[str]:
    """A version's own event (created and migrated by it); returns its check-in command."""
    folder.mkdir(parents=True, exist_ok=True)
    db = f"sqlite:///{folder / 'ev.db'}"
    cli = [python, "-m", "tablesense.cli", "tournament"]
    subprocess.run([*cli, "create", "Bench", "--db", db], cwd=folder, check=True, capture_output=True, env=env)
    subprocess.run([*cli, "register", "Ana & Bia", "--db", db], cwd=folder, check=True, capture_output=True, env=env)
    return [*cli, "check-in", "1", "--db", db]


def _interleaved(cmds: list[tuple[list[str], dict[str, str] | None]], runs: int, cwd: Path
                 ) -> tuple[list[list[float]], list[list[float]]]:
    """Each command ``runs`` times, taking turns (a load that changes during the run weighs on all alike):
    wall-clock seconds, and CPU seconds (user + system) of the process, which a busy machine disturbs less."""
    import resource

    took: list[list[float]] = [[] for _ in cmds]
    cpu: list[list[float]] = [[] for _ in cmds]
    for _ in range(runs):
        for i, (cmd, env) in enumerate(cmds):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, env=env)
            took[i].append(time.perf_counter() - t0)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[i].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return took, cpu


def _peer_tree(rev: str, into: Path) -> dict[str, str]:
    """``host/`` of commit ``rev`` in ``into``; the environment that runs it instead of this tree's."""
    repo = Path(__file__).resolve().parent.parent
    archive = subprocess.run(["git", "-C", str(repo), "archive", rev, "host"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return {**os.environ, "PYTHONPATH": str(into / "host")}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--peer", help="another checkout's python (its tablesense measured the same way)")
    ap.add_argument("--peer-commit", help="a commit of this repository (its host/ run by this python)")
    args = ap.parse_args()
    nan = float("nan")
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        cmds: list[tuple[list[str], dict[str, str] | None]] = [
            ([sys.executable, "-c", "pass"], None), (_setup(sys.executable, cwd / "this", None), None)]
        if args.peer_commit:
            tree = cwd / "peer-tree"
            tree.mkdir()
            env = _peer_tree(args.peer_commit, tree)
            cmds.append((_setup(sys.executable, cwd / "peer", env), env))
        elif args.peer:
            cmds.append((_setup(args.peer, cwd / "peer", None), None))
        (bare, mine, *rest), (_bare_cpu, mine_cpu, *rest_cpu) = _interleaved(cmds, args.runs, cwd)
        peer = rest[0] if rest else [nan]
        peer_cpu = rest_cpu[0] if rest_cpu else [nan]
    load = os.getloadavg()[0]
    med = statistics.median
    who = f"commit {args.peer_commit}" if args.peer_commit else "peer checkout"
    print(f"tournament check-in: {med(mine):.3f} s (first {mine[0]:.3f}) | python -c pass {med(bare):.3f} s | "
          f"{who} {med(peer):.3f} s (first {peer[0]:.3f}) | CPU: check-in {med(mine_cpu):.3f} s, {who} "
          f"{med(peer_cpu):.3f} s (median of {args.runs}, load average {load:.1f})")
    print(f"check_in_s={med(mine):.3f} python_s={med(bare):.3f} peer_s={med(peer):.3f} "
          f"check_in_first_s={mine[0]:.3f} peer_first_s={peer[0]:.3f} check_in_cpu_s={med(mine_cpu):.3f} "
          f"peer_cpu_s={med(peer_cpu):.3f} load_1m={load:.2f}")


if __name__ == "__main__":
    main()
