"""Mutation testing of the critical modules with cosmic-ray (too slow for CI).

Why: a suite that passes says little about the bugs it would catch. Mutation
testing plants small bugs (an operator swapped, a comparison flipped, a
constant changed) one at a time and runs the tests that guard that module; a
mutant the tests do not notice ("survived") is a blind spot, or an equivalent
change that needs a word in docs/testing.md.

How: the tracked files are copied to a scratch folder (the work tree is never
touched), cosmic-ray mutates the copy in place, and each mutant runs the given
test folders with the copy first on PYTHONPATH. ``--sample N`` runs a seeded
random sample of N mutants a module (the rest are marked "not sampled"), so a
score can be had in minutes; without it every mutant runs (hours for all).

    .venv/bin/python benchmarks/mutation.py --list
    .venv/bin/python benchmarks/mutation.py --module proto --sample 60
    .venv/bin/python benchmarks/mutation.py            # every module, every mutant

Survivors are printed as ``path:line operator`` and written, with the score,
to the JSON file named by ``--out`` (default: mutation-report.json in the
current folder). Last line:
``modules=N mutants=M killed=K survived=S incompetent=I killed_pct=P``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Target:
    """One critical module (file or package) and the tests that guard it."""

    name: str
    paths: tuple[str, ...]
    tests: tuple[str, ...]


# The critical code named by issue 21, with the test folders that guard each.
TARGETS: tuple[Target, ...] = (
    Target("proto", ("firmware/proto.py",), ("tests/firmware/test_proto.py",)),
    Target("mfrc522", ("firmware/mfrc522.py",), ("tests/firmware/test_mfrc522.py",)),
    Target("dominoes", ("host/tablesense/games/dominoes",), ("tests/games",)),
    Target("kems", ("host/tablesense/games/kems",), ("tests/games",)),
    Target("record", ("host/tablesense/games/record.py",), ("tests/games",)),
    Target("link", ("host/tablesense/link",), ("tests/link",)),
    Target("journal", ("host/tablesense/journal",), ("tests/journal",)),
    Target("referee-rules", ("host/tablesense/referee/rules.py",), ("tests/referee",)),
    Target("referee-layout", ("host/tablesense/referee/layout.py",), ("tests/referee",)),
    Target("security", ("host/tablesense/tournament/security.py",), ("tests/tournament",)),
    Target("standings", ("host/tablesense/tournament/standings.py",), ("tests/tournament",)),
    Target("pairing", ("host/tablesense/tournament/pairing.py",), ("tests/tournament",)),
    Target("storage", ("host/tablesense/tournament/db.py",), ("tests/tournament",)),
)

# Operators whose mutants are nearly always equivalent or meaningless here
# (exception swaps between our own error types, number mutations in
# docstring-free constant tables are kept).
EXCLUDED_OPERATORS = ("core/ExceptionReplacer",)


def existing(paths: tuple[str, ...], root: Path) -> list[Path]:
    """The target's paths that exist (a package may be a module or a folder)."""
    found: list[Path] = []
    for p in paths:
        for candidate in (root / p, root / f"{p}.py"):
            if candidate.exists():
                found.append(candidate)
                break
    return found


def scratch_copy(dest: Path) -> None:
    """Copy the tracked files (and untracked, not ignored ones) to ``dest``."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout.decode()
    for rel in filter(None, out.split("\0")):
        src = ROOT / rel
        dst = dest / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        elif src.is_file():
            shutil.copy2(src, dst)
    for shared in ("node_modules", "typings"):
        if (ROOT / shared).exists():
            os.symlink(ROOT / shared, dest / shared)


def run_target(target: Target, copy: Path, work: Path, sample: int | None,
               seed: int, timeout: float) -> dict[str, object]:
    """Init, sample, baseline and exec one target; return its counts and survivors."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    paths = existing(target.paths, copy)
    if not paths:
        return {"name": target.name, "error": f"no such path: {', '.join(target.paths)}"}
    tests = " ".join(target.tests)
    python = sys.executable
    config = work / f"{target.name}.toml"
    session = work / f"{target.name}.sqlite"
    module_paths = ", ".join(json.dumps(str(p)) for p in paths)
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = [{module_paths}]\n"
        f"timeout = {timeout}\n"
        "excluded-modules = []\n"
        f'test-command = "{python} -m pytest -x -q -p no:cacheprovider {tests}"\n'
        "[cosmic-ray.distributor]\n"
        'name = "local"\n'
        "[cosmic-ray.filters.operators-filter]\n"
        f"exclude-operators = {json.dumps(list(EXCLUDED_OPERATORS))}\n"
    )
    env = dict(os.environ, PYTHONPATH=f"{copy / 'host'}{os.pathsep}{copy / 'tests'}")
    cr = [python, "-m", "cosmic_ray.cli"]
    subprocess.run([*cr, "init", str(config), str(session)], cwd=copy, env=env, check=True)
    subprocess.run([python, "-m", "cosmic_ray.tools.filters.operators_filter",
                    str(session), str(config)], cwd=copy, env=env, check=True)
    with use_db(str(session), WorkDB.Mode.open) as db:
        pending = sorted(item.job_id for item in db.pending_work_items)
        total = len(pending)
        if sample is not None and sample < total:
            keep = set(random.Random(f"{seed}:{target.name}").sample(pending, sample))
            db.set_multiple_results(
                [j for j in pending if j not in keep],
                WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output="not sampled"),
            )
    base = subprocess.run([*cr, "baseline", str(config)], cwd=copy, env=env)
    if base.returncode != 0:
        return {"name": target.name, "error": "the tests fail on unmutated code (baseline)"}
    t0 = time.monotonic()
    subprocess.run([*cr, "exec", str(config), str(session)], cwd=copy, env=env, check=True)
    seconds = time.monotonic() - t0
    killed = survived = incompetent = 0
    survivors: list[str] = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            outcome = str(result.test_outcome.value) if result.test_outcome else "incompetent"
            if outcome == "killed":
                killed += 1
            elif outcome == "survived":
                survived += 1
                m = item.mutations[0]
                rel = Path(m.module_path).resolve().relative_to(copy.resolve())
                survivors.append(f"{rel}:{m.start_pos[0]} {m.operator_name}")
            else:
                incompetent += 1
    return {
        "name": target.name, "mutants_total": total, "killed": killed,
        "survived": survived, "incompetent": incompetent,
        "seconds": round(seconds, 1), "survivors": sorted(survivors),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--module", action="append", default=[],
                    help="a target by name (repeatable); default: all")
    ap.add_argument("--sample", type=int, default=None, help="mutants a module (seeded sample)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds a mutant's test run")
    ap.add_argument("--out", type=Path, default=Path("mutation-report.json"))
    ap.add_argument("--list", action="store_true", help="list the targets and exit")
    args = ap.parse_args(argv)

    if args.list:
        for t in TARGETS:
            print(f"{t.name:15} {' '.join(t.paths):45} <- {' '.join(t.tests)}")
        return 0
    try:
        import cosmic_ray  # noqa: F401
    except ImportError:
        print("cosmic-ray is not installed: .venv/bin/pip install 'cosmic-ray==8.7.0' "
              "(it is in the dev extra: bash scripts/setup.sh dev)", file=sys.stderr)
        return 2
    names = {t.name for t in TARGETS}
    unknown = [m for m in args.module if m not in names]
    if unknown:
        print(f"unknown target(s): {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    chosen = [t for t in TARGETS if not args.module or t.name in args.module]

    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="tablesense-mutation-") as tmp:
        copy = Path(tmp) / "tree"
        work = Path(tmp) / "sessions"
        copy.mkdir()
        work.mkdir()
        scratch_copy(copy)
        for target in chosen:
            print(f"== {target.name}", flush=True)
            r = run_target(target, copy, work, args.sample, args.seed, args.timeout)
            results.append(r)
            if "error" in r:
                print(f"   {r['error']}")
                continue
            runs = int(r["killed"]) + int(r["survived"])  # type: ignore[call-overload]
            pct = 100.0 * int(r["killed"]) / runs if runs else 0.0  # type: ignore[call-overload]
            print(f"   {r['killed']} killed, {r['survived']} survived, "
                  f"{r['incompetent']} incompetent of {r['mutants_total']} "
                  f"({pct:.1f} % killed, {r['seconds']} s)")
            for s in r["survivors"]:  # type: ignore[attr-defined]
                print(f"   survived: {s}")

    ok = [r for r in results if "error" not in r]
    killed = sum(int(r["killed"]) for r in ok)  # type: ignore[call-overload]
    survived = sum(int(r["survived"]) for r in ok)  # type: ignore[call-overload]
    incompetent = sum(int(r["incompetent"]) for r in ok)  # type: ignore[call-overload]
    pct = 100.0 * killed / (killed + survived) if killed + survived else 0.0
    args.out.write_text(json.dumps({"seed": args.seed, "sample": args.sample,
                                    "targets": results}, indent=2) + "\n")
    print(f"report: {args.out}")
    print(f"modules={len(ok)} mutants={killed + survived + incompetent} killed={killed} "
          f"survived={survived} incompetent={incompetent} killed_pct={pct:.1f}")
    return 0 if len(ok) == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
