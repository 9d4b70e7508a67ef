"""Issue 14: ``scripts/setup.sh run`` (what ``scripts/demo.sh`` runs) installs
the Node.js packages every documented command needs: ``npm ci --omit=dev``
installs only ``dependencies``, so each package a command loads must be one
(``sim boards --micropython`` loads the MicroPython WebAssembly port)."""

from __future__ import annotations

import json
from pathlib import Path

from tablesense.sim.mpboard import micropython_mjs
from testsupport import REPO


def package_of(path: Path) -> str:
    parts = path.parts
    i = parts.index("node_modules")
    name = parts[i + 1]
    return f"{name}/{parts[i + 2]}" if name.startswith("@") else name


def test_run_setup_installs_the_micropython_port_and_rp2040js() -> None:
    pkg = json.loads((REPO / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((REPO / "package-lock.json").read_text(encoding="utf-8"))
    needed = {package_of(micropython_mjs()), "rp2040js"}
    for name in needed:
        assert name in pkg.get("dependencies", {}), f"{name} is not installed by 'setup.sh run'"
        assert not lock["packages"][f"node_modules/{name}"].get("dev"), name
    script = (REPO / "scripts" / "setup.sh").read_text(encoding="utf-8")
    run_part = script.split('if [ "$what" = run ]; then', 1)[1].split("\nfi\n", 1)[0]
    assert "npm ci --omit=dev" in run_part
    assert "micropython.mjs" in run_part  # a missing port triggers the install
