#!/usr/bin/env bash
# The whole test suite, from a fresh machine: set up, then pytest.
# Extra arguments go to pytest (for instance: scripts/test.sh tests/games -x).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" = 5 ]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit "$status"
