"""Mutation testing of the critical modules with cosmic-ray (too slow for CI).

Why: a suite that passes says little about the bugs it would catch. Mutation
testing plants small bugs (an operator swapped, a comparison flipped, a
constant changed) one at a time and runs the tests that guard that module; a
mutant the tests do not notice ("survived") is a blind spot, or an equivalent
change that needs a word in docs/mutation-testing.md.

How: the tracked files are copied to a scratch folder (the work tree is never
touched), cosmic-ray mutates the copy in place, and each mutant runs the given
test folders with the copy first on PYTHONPATH. ``--sample N`` runs a seeded
random sample of N mutants a module, chosen by (file, operator, occurrence)
so that a seed picks the same mutants again (the rest are marked "not
sampled"): a score in minutes; without it every mutant runs (hours for all).
Mutants inside never-evaluated annotations are skipped as equivalent; the
Hypothesis profile is deterministic with no deadline; a mutant's time-out is
four times the clean run; ``--max-seconds`` budgets a module; ``--rerun
REPORT`` runs only the survivors of an earlier report (does a new test kill
them?). Run it under ``nice`` on a shared machine.

    .venv/bin/python benchmarks/mutation.py --list
    nice -n 19 .venv/bin/python benchmarks/mutation.py --module proto --sample 40 --show-diff
    nice -n 19 .venv/bin/python benchmarks/mutation.py --rerun benchmarks/out/mutation-report.json
    .venv/bin/python benchmarks/mutation.py            # every module, every mutant

Survivors are printed as ``path:line operator`` and written, with the score,
to the JSON file named by ``--out`` (default:
benchmarks/out/mutation-report.json, which git ignores). Last line:
``modules=N mutants=M killed=K survived=S incompetent=I killed_pct=P``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import signal
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


# The referee's unit-level tests (the demo, play and browser runs are left out:
# minutes each, and they exercise the same rules through whole matches).
REFEREE_TESTS = (
    "tests/referee/test_referee_dominoes.py", "tests/referee/test_referee_kems.py",
    "tests/referee/test_line_geometry.py", "tests/referee/test_followups.py",
    "tests/referee/test_table_messages.py", "tests/referee/test_sense.py",
    "tests/referee/test_referee_mutants.py",
)

# The critical code named by issue 21, with the tests that guard each: the
# narrowest set that still covers the module, so that a mutant runs in seconds
# (long soaks and timing-sensitive runs are left out: under load they fail on
# their own and would count as kills). ``*_mutants.py`` files hold the tests
# written to kill survivors of earlier runs.
TARGETS: tuple[Target, ...] = (
    Target("proto", ("firmware/proto.py",),
           ("tests/firmware/test_proto.py", "tests/firmware/test_proto_wire.py",
            "tests/firmware/test_proto_mutants.py")),
    Target("mfrc522", ("firmware/mfrc522.py",),
           ("tests/firmware/test_mfrc522.py", "tests/firmware/test_mfrc522_mutants.py")),
    Target("link", ("host/tablesense/link",),
           ("tests/link/test_link.py", "tests/link/test_board_conn.py",
            "tests/link/test_merger_discovery.py", "tests/link/test_resync_ranges.py",
            "tests/link/test_seq_wrap.py", "tests/link/test_link_mutants.py")),
    Target("journal", ("host/tablesense/journal",),
           ("tests/journal/test_journal.py", "tests/journal/test_journal_mutants.py")),
    Target("security", ("host/tablesense/tournament/security.py",),
           ("tests/tournament/test_security_mutants.py", "tests/tournament/test_director.py")),
    Target("standings", ("host/tablesense/tournament/standings.py",),
           ("tests/tournament/test_standings.py", "tests/tournament/test_standings_mutants.py")),
    Target("pairing", ("host/tablesense/tournament/pairing.py",),
           ("tests/tournament/test_pairing.py", "tests/tournament/test_pairing_mutants.py")),
    Target("storage", ("host/tablesense/tournament/db.py",),
           ("tests/tournament/test_director.py", "tests/tournament/test_storage_mutants.py")),
    Target("dominoes", ("host/tablesense/games/dominoes",),
           ("tests/games/test_dominoes_engine.py", "tests/games/test_dominoes_fast.py",
            "tests/games/test_dominoes_rules_pips.py", "tests/games/test_dominoes_rules_brazilian.py",
            "tests/games/test_dominoes_properties.py", "tests/games/test_record.py",
            "tests/games/test_dominoes_mutants.py")),
    Target("kems", ("host/tablesense/games/kems",),
           ("tests/games/test_kems_engine.py", "tests/games/test_kems_rules.py",
            "tests/games/test_kems_replay.py", "tests/games/test_kems_properties.py",
            "tests/games/test_kems_mutants.py")),
    Target("record", ("host/tablesense/games/record.py",),
           ("tests/games/test_record.py", "tests/games/test_replay_cli.py",
            "tests/games/test_kems_replay.py", "tests/games/test_record_mutants.py")),
    Target("referee-rules", ("host/tablesense/referee/rules.py",), REFEREE_TESTS),
    Target("referee-layout", ("host/tablesense/referee/layout.py",), REFEREE_TESTS),
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
        if not (src.is_file() or src.is_symlink()):
            continue  # deleted in the work tree but not yet in the index
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)
    for shared in ("node_modules", "typings"):
        if (ROOT / shared).exists():
            os.symlink(ROOT / shared, dest / shared)
    # Hypothesis, made deterministic and patient for the mutant runs: a busy
    # machine must not fail a test on its deadline (that would count as a kill),
    # the same mutant must meet the same examples every time, and 30 examples
    # a property (where a test does not name its own count) keep a mutant's
    # run in seconds.
    (dest / "tests" / "mutation_profile.py").write_text(
        "from hypothesis import settings\n"
        "settings.register_profile('mutation', deadline=None, derandomize=True,\n"
        "                          database=None, print_blob=False, max_examples=30)\n"
        "settings.load_profile('mutation')\n"
    )


def mutant_key(module_path: str | Path, operator: str, occurrence: int, copy: Path) -> str:
    """A name for a mutant that survives a new init (job ids are random uuids)."""
    rel = Path(module_path).resolve().relative_to(copy.resolve())
    return f"{rel.as_posix()}|{operator}|{occurrence}"


def source_files(paths: list[Path]) -> dict[Path, bytes]:
    """The bytes of every .py file of the target, to put back after a cut-off run."""
    files: dict[Path, bytes] = {}
    for p in paths:
        for f in ([p] if p.is_file() else sorted(p.rglob("*.py"))):
            files[f] = f.read_bytes()
    return files


def annotation_spans(path: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where a module's annotations are, when they are never evaluated.

    With ``from __future__ import annotations`` an annotation is a string that
    nothing reads at run time (no code here calls ``get_type_hints``), so a
    mutant inside one (``str | None`` -> ``str ^ None``) is equivalent by
    construction; running its tests would only spend minutes."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lazy = any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
               and any(a.name == "annotations" for a in n.names) for n in tree.body)
    if not lazy:
        return []
    spans: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for node in ast.walk(tree):
        found: list[ast.expr | None] = []
        if isinstance(node, ast.arg):
            found.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
        for a in found:
            if a is not None and a.end_lineno is not None and a.end_col_offset is not None:
                spans.append(((a.lineno, a.col_offset), (a.end_lineno, a.end_col_offset)))
    return spans


def in_spans(pos: tuple[int, int], spans: list[tuple[tuple[int, int], tuple[int, int]]]) -> bool:
    return any(start <= tuple(pos) < end for start, end in spans)


def run_target(target: Target, copy: Path, work: Path, sample: int | None, seed: int,
               timeout: float | None, max_seconds: float | None,
               only: set[str] | None) -> dict[str, object]:
    """Init, sample, baseline and exec one target; return its counts and survivors."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    paths = existing(target.paths, copy)
    if not paths:
        return {"name": target.name, "error": f"no such path: {', '.join(target.paths)}"}
    tests = " ".join(t for t in target.tests if (copy / t).exists())
    python = sys.executable
    config = work / f"{target.name}.toml"
    session = work / f"{target.name}.sqlite"
    module_paths = ", ".join(json.dumps(str(p)) for p in paths)
    test_command = (f"{python} -m pytest -x -q -p no:cacheprovider -p mutation_profile "
                    f"{tests}")

    def write_config(seconds: float) -> None:
        config.write_text(
            "[cosmic-ray]\n"
            f"module-path = [{module_paths}]\n"
            f"timeout = {seconds}\n"
            "excluded-modules = []\n"
            f'test-command = "{test_command}"\n'
            "[cosmic-ray.distributor]\n"
            'name = "local"\n'
            "[cosmic-ray.filters.operators-filter]\n"
            f"exclude-operators = {json.dumps(list(EXCLUDED_OPERATORS))}\n"
        )

    write_config(timeout or 300.0)
    env = dict(os.environ, PYTHONPATH=f"{copy / 'host'}{os.pathsep}{copy / 'tests'}")
    cr = [python, "-m", "cosmic_ray.cli"]
    quiet = subprocess.DEVNULL
    subprocess.run([*cr, "init", str(config), str(session)], cwd=copy, env=env, check=True)
    subprocess.run([python, "-m", "cosmic_ray.tools.filters.operators_filter",
                    str(session), str(config)], cwd=copy, env=env, check=True,
                   stdout=quiet, stderr=quiet)
    spans: dict[str, list[tuple[tuple[int, int], tuple[int, int]]]] = {}
    with use_db(str(session), WorkDB.Mode.open) as db:
        by_key = {}
        in_annotations: list[str] = []
        for item in db.pending_work_items:
            m = item.mutations[0]
            mod = str(m.module_path)
            if mod not in spans:
                spans[mod] = annotation_spans(Path(mod))
            if in_spans(tuple(m.start_pos), spans[mod]):  # type: ignore[arg-type]
                in_annotations.append(item.job_id)
                continue
            by_key[mutant_key(m.module_path, m.operator_name, m.occurrence, copy)] = item.job_id
        db.set_multiple_results(
            in_annotations,
            WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output="annotation: equivalent"),
        )
        total = len(by_key)
        keys = sorted(by_key)
        if only is not None:
            keys = [k for k in keys if k in only]
        if sample is not None and sample < len(keys):
            keys = sorted(random.Random(f"{seed}:{target.name}").sample(keys, sample))
        keep = {by_key[k] for k in keys}
        db.set_multiple_results(
            [j for j in by_key.values() if j not in keep],
            WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output="not sampled"),
        )
    t0 = time.monotonic()
    base = subprocess.run([*cr, "baseline", str(config)], cwd=copy, env=env,
                          stdout=quiet, stderr=quiet)
    baseline_s = time.monotonic() - t0
    if base.returncode != 0:
        return {"name": target.name, "error": "the tests fail on unmutated code (baseline): "
                f"{test_command}"}
    # A mutant that makes the tests hang counts as killed at the time-out: four
    # times the clean run (at least 30 s) tells a hang from a slow machine.
    per_mutant = timeout or max(30.0, 4.0 * baseline_s)
    write_config(round(per_mutant, 1))
    print(f"   {len(keep)} of {total} mutants ({len(in_annotations)} more in annotations, "
          f"equivalent, not run), baseline {baseline_s:.1f} s, "
          f"time-out {per_mutant:.0f} s a mutant", flush=True)
    originals = source_files(paths)
    t0 = time.monotonic()
    proc = subprocess.Popen([*cr, "exec", str(config), str(session)], cwd=copy, env=env,
                            start_new_session=True, stdout=quiet, stderr=quiet)
    cut = False
    try:
        proc.wait(timeout=max_seconds)
    except subprocess.TimeoutExpired:
        cut = True
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        # A run cut off in the middle of a mutant leaves it in the copy.
        for f, data in originals.items():
            if f.read_bytes() != data:
                f.write_bytes(data)
    seconds = time.monotonic() - t0
    killed = survived = incompetent = not_run = 0
    survivors: list[dict[str, object]] = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        not_run = sum(1 for _ in db.pending_work_items)
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            outcome = str(result.test_outcome.value) if result.test_outcome else "incompetent"
            if outcome == "killed":
                killed += 1
            elif outcome == "survived":
                survived += 1
                m = item.mutations[0]
                key = mutant_key(m.module_path, m.operator_name, m.occurrence, copy)
                rel = key.split("|")[0]
                survivors.append({"key": key, "where": f"{rel}:{m.start_pos[0]}",
                                  "operator": m.operator_name, "diff": result.diff or ""})
            else:
                incompetent += 1
    return {
        "name": target.name, "mutants_total": total,
        "annotation_mutants": len(in_annotations), "sampled": len(keep),
        "killed": killed, "survived": survived, "incompetent": incompetent,
        "not_run": not_run, "cut_off": cut, "seconds": round(seconds, 1),
        "tests": test_command.split("mutation_profile ", 1)[1],
        "survivors": sorted(survivors, key=lambda s: str(s["key"])),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--module", action="append", default=[],
                    help="a target by name (repeatable); default: all")
    ap.add_argument("--sample", type=int, default=None, help="mutants a module (seeded sample)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds a mutant's test run (default: 4x the clean run, >= 30)")
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="budget a module: stop there and count the rest as not run")
    ap.add_argument("--rerun", type=Path, default=None,
                    help="run only the survivors listed in this earlier report")
    ap.add_argument("--show-diff", action="store_true", help="print each survivor's diff")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "mutation-report.json",
                    help="the JSON report (default: benchmarks/out/mutation-report.json, not tracked)")
    ap.add_argument("--list", action="store_true", help="list the targets and exit")
    args = ap.parse_args(argv)

    if args.list:
        for t in TARGETS:
            print(f"{t.name:15} {' '.join(t.paths):40} <- {' '.join(t.tests)}")
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
    only: dict[str, set[str]] | None = None
    if args.rerun is not None:
        try:
            earlier = json.loads(args.rerun.read_text())
            only = {str(r["name"]): {str(s["key"]) for s in r.get("survivors", [])}
                    for r in earlier["targets"]}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"cannot read the earlier report {args.rerun}: {exc}", file=sys.stderr)
            return 2
    chosen = [t for t in TARGETS if not args.module or t.name in args.module]
    if only is not None:
        chosen = [t for t in chosen if only.get(t.name)]

    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="tablesense-mutation-") as tmp:
        copy = Path(tmp) / "tree"
        work = Path(tmp) / "sessions"
        copy.mkdir()
        work.mkdir()
        scratch_copy(copy)
        for target in chosen:
            print(f"== {target.name}", flush=True)
            r = run_target(target, copy, work, args.sample, args.seed, args.timeout,
                           args.max_seconds, None if only is None else only[target.name])
            results.append(r)
            if "error" in r:
                print(f"   {r['error']}")
                continue
            runs = int(r["killed"]) + int(r["survived"])  # type: ignore[call-overload]
            pct = 100.0 * int(r["killed"]) / runs if runs else 0.0  # type: ignore[call-overload]
            print(f"   {r['killed']} killed, {r['survived']} survived, "
                  f"{r['incompetent']} incompetent, {r['not_run']} not run "
                  f"({pct:.1f} % killed, {r['seconds']} s"
                  f"{', cut off by --max-seconds' if r['cut_off'] else ''})", flush=True)
            for s in r["survivors"]:  # type: ignore[attr-defined]
                print(f"   survived: {s['where']} {s['operator']}")
                if args.show_diff:
                    print("      " + str(s["diff"]).strip().replace("\n", "\n      "))

    ok = [r for r in results if "error" not in r]
    killed = sum(int(r["killed"]) for r in ok)  # type: ignore[call-overload]
    survived = sum(int(r["survived"]) for r in ok)  # type: ignore[call-overload]
    incompetent = sum(int(r["incompetent"]) for r in ok)  # type: ignore[call-overload]
    pct = 100.0 * killed / (killed + survived) if killed + survived else 0.0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"seed": args.seed, "sample": args.sample,
                                    "targets": results}, indent=2) + "\n")
    print(f"report: {args.out}")
    print(f"modules={len(ok)} mutants={killed + survived + incompetent} killed={killed} "
          f"survived={survived} incompetent={incompetent} killed_pct={pct:.1f}")
    return 0 if len(ok) == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
