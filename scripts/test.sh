#!/usr/bin/env bash
# The whole test suite, from a fresh machine: set up, then pytest.
# Extra arguments go to pytest (for instance: scripts/test.sh tests/games -x).
#   --quick     leave out the tests that need a browser, a broker or an
#               emulated board (about two minutes; CI runs everything)
#   --runslow   also run the long soaks
# The tests run in parallel worker processes, a test file per worker
# (pytest-xdist, --dist loadfile: a file's browser, broker and emulated boards
# stay in one process). Most of the suite waits on servers, pseudo-terminals
# and browsers rather than computing, so more workers than cores pays:
# TABLESENSE_TEST_WORKERS sets how many (default 4); `-n 0` or `-p no:xdist`
# among the arguments runs everything in this one process.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
# The suite starts about a hundred Python processes (play, demo, sim, the
# CLI), each importing the package, and every worker imports every test
# module, its asserts rewritten by pytest. With bytecode caches forbidden (an
# environment may set PYTHONDONTWRITEBYTECODE) each of them compiled it all
# from source again. Caches go to __pycache__ (ignored by git): the package is
# compiled once here, and for a whole run the test modules are rewritten once,
# by two collecting processes (half the rooms each), before the workers start
# (the workers' collection then took 23 s of CPU instead of 53).
unset PYTHONDONTWRITEBYTECODE
.venv/bin/python -m compileall -q -j 0 host/tablesense >/dev/null
whole=yes
for arg in "$@"; do
  case "$arg" in --quick|--runslow) ;; *) whole=no ;; esac
done
if [ "$whole" = yes ]; then
  rooms=(tests/*/)
  half=$(( (${#rooms[@]} + 1) / 2 ))
  .venv/bin/python -m pytest -q -p no:cacheprovider --collect-only "${rooms[@]:0:half}" >/dev/null 2>&1 &
  .venv/bin/python -m pytest -q -p no:cacheprovider --collect-only "${rooms[@]:half}" >/dev/null 2>&1 || true
  wait || true
fi
# --no-loadscope-reorder: files start in collection order, the longest first
# (tests/conftest.py LONG_FILES); xdist's default order, most tests first,
# started the one-test files of a minute or more last, to run alone at the end.
parallel=(-n "${TABLESENSE_TEST_WORKERS:-4}" --dist loadfile --no-loadscope-reorder)
for arg in "$@"; do
  case "$arg" in
    -n|-n[0-9]*|--numprocesses*|no:xdist) parallel=() ;;
  esac
done
set +e
.venv/bin/python -m pytest "${parallel[@]}" "$@"
status=$?
set -e
if [ "$status" = 5 ]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit "$status"
