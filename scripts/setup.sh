#!/usr/bin/env bash
# Sets up everything tablesense needs on a fresh machine (Python, pip and
# Node.js present): a virtual environment with the package and its test
# extras, the Node.js packages (real MicroPython as WebAssembly, pyright), the
# MicroPython stubs for type-checking the firmware, and Debian's Chromium for
# the browser tests (and shellcheck for the install scripts' tests). Safe to run again: each step is skipped when done.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-dev}"   # dev (tests and checks) or run (just the package)

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=".venv/.installed-$what-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  if [ "$what" = dev ]; then
    .venv/bin/python -m pip install -q -e ".[dev]"
  else
    .venv/bin/python -m pip install -q -e .
  fi
  touch "$stamp"
fi

if [ "$what" = run ]; then
  # `run` needs the production Node.js packages of every documented command:
  # rp2040js (emulated RP2040 boards) and the MicroPython WebAssembly port
  # (`tablesense sim boards --micropython`). Installed again when one is missing
  # or package.json changed.
  if ! command -v npm >/dev/null 2>&1; then
    echo "setup: Node.js (npm) is not installed: 'sim boards --micropython' and the emulated RP2040 boards need it" >&2
  elif [ ! -f node_modules/@micropython/micropython-webassembly-pyscript/micropython.mjs ] \
      || [ ! -d node_modules/rp2040js ] \
      || [ ! -f node_modules/.package-lock.json ] || [ package.json -nt node_modules/.package-lock.json ]; then
    npm ci --omit=dev --no-audit --no-fund --silent
  fi
fi

if [ "$what" = dev ]; then
  if [ ! -f node_modules/.package-lock.json ] || [ package.json -nt node_modules/.package-lock.json ]; then
    if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --silent; else npm install --no-audit --no-fund --silent; fi
  fi
  if [ ! -d typings/machine ] && [ ! -f typings/machine.pyi ] && [ ! -d typings/machine.pyi ]; then
    .venv/bin/python -m pip install -q --no-deps --target typings "micropython-rp2-stubs==1.27.*" || \
      .venv/bin/python -m pip install -q --no-deps --target typings micropython-rp2-stubs
  fi
  # Debian tools the tests use: a command each, and the package that brings it.
  missing=""
  for pair in chromium:chromium mosquitto:mosquitto espeak-ng:espeak-ng strace:strace shellcheck:shellcheck; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing="$missing ${pair#*:}"
  done
  if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      # shellcheck disable=SC2086
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing) >/dev/null
    else
      echo "setup: not installed:$missing (sudo apt-get install$missing); the tests that need them will be skipped" >&2
    fi
  fi
  # KiCad 9 (kicad-cli checks and exports hardware/kicad). Bookworm itself ships
  # KiCad 6, so it comes from bookworm-backports, added on the Debian mirror the
  # machine already uses; the multi-gigabyte 3D models (kicad-packages3d) stay out.
  if ! command -v kicad-cli >/dev/null 2>&1; then
    # shellcheck disable=SC1091
    codename="$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ "$codename" = bookworm ]; then
      if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
        # A machine may have no /etc/apt/sources.list at all (deb822 files only):
        # grep then exits 2, which pipefail would turn into the script's end.
        mirror="$( { grep -rhoE "^(URIs: *|deb +)https?://[^ ]+/debian/?( |$)" /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null || true; } \
          | head -1 | sed -E 's/^(URIs: *|deb +)//; s/ *$//')"
        printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
          "${mirror:-http://deb.debian.org/debian}" > /etc/apt/sources.list.d/bookworm-backports.sources
      fi
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        -t bookworm-backports kicad kicad-symbols kicad-footprints) >/dev/null
    else
      echo "setup: kicad-cli (KiCad 9) not installed: as root on Debian bookworm this script adds bookworm-backports and installs it; the KiCad tests will be skipped" >&2
    fi
  fi
fi
