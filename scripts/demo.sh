#!/usr/bin/env bash
# The main job, from a fresh machine: set up, then a full demo match on the
# virtual table with the display page served locally (its address is printed).
# Extra arguments go to `tablesense demo` (for instance: --game kems --speed 4).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh run
exec .venv/bin/tablesense demo "$@"
