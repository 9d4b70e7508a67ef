"""Deploy speed on the virtual MicroPython board, against mpremote's own copy.

Three figures, each on a fresh virtual board (WebAssembly MicroPython on a pty):

- full_s: ``tablesense`` deploy of the whole firmware (compiled) + config to an
  empty board, including the reset and the handshake that confirms it;
- nochange_s: the same deploy again (nothing changed);
- mpremote_cp_s: ``mpremote connect PORT fs cp F1 :F1 + fs cp F2 :F2 ...`` of
  the same files (the real mpremote command line, one session), copy only.

Targets: nochange_s < 1 and full_s <= mpremote_cp_s.
Last line: ``full_s=X nochange_s=Y mpremote_cp_s=Z``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tablesense.flash import deploy as dp
from tablesense.sim.mpboard import MicroPythonBoard, available


def main() -> int:
    reason = available()
    if reason is not None:
        print(f"cannot run: {reason}", file=sys.stderr)
        return 1
    payload = dp.build_payload(fallback_config=dp.bench_config())
    files = payload.files(True) + [dp.BoardFile(dp.CONFIG_NAME, dp.config_bytes(dp.bench_config()))]
    size = sum(len(f.data) for f in files)
    print(f"payload: {len(files)} files, {size} bytes")

    with MicroPythonBoard() as board:
        port = board.start()
        time.sleep(0.3)
        t0 = time.perf_counter()
        r = dp.deploy(port, payload)
        full = time.perf_counter() - t0
        print(f"full deploy: {full:.2f} s ({r.action}, {len(r.uploaded)} files)")
        t0 = time.perf_counter()
        r = dp.deploy(port, payload)
        nochange = time.perf_counter() - t0
        print(f"no-change redeploy: {nochange:.3f} s ({r.action})")

    with MicroPythonBoard() as board, tempfile.TemporaryDirectory() as tmp:
        port = board.start()
        time.sleep(0.3)
        paths = []
        for f in files:
            p = Path(tmp) / f.name
            p.write_bytes(f.data)
            paths.append(str(p))
        mpremote = [sys.executable, "-m", "mpremote"]
        t0 = time.perf_counter()
        # one mpremote session, one `fs cp` per file (chained with "+")
        args = [*mpremote, "connect", port]
        for n, path in enumerate(paths):
            args += (["+"] if n else []) + ["fs", "cp", path, ":" + Path(path).name]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
        cp = time.perf_counter() - t0
        if proc.returncode != 0:
            print(f"mpremote failed: {proc.stderr.strip()}", file=sys.stderr)
            return 1
        print(f"mpremote fs cp: {cp:.2f} s")
    ok = nochange < 1.0 and full <= cp
    print(f"targets: no-change < 1 s {'met' if nochange < 1.0 else 'MISSED'}; "
          f"full <= mpremote cp {'met' if full <= cp else 'MISSED'}")
    print(f"full_s={full:.3f} nochange_s={nochange:.3f} mpremote_cp_s={cp:.3f}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
