"""A table of emulated RP2040 boards with the firmware deployed: what
``tablesense demo --boards rp2040`` plays on.

The boards keep their flash in the user's state folder, so the first demo
installs the firmware (mpremote through the raw REPL, about 10-15 s per board,
all boards at once) and later ones find it up to date in a second or two.
Link faults, if asked for, start once the firmware is in place: they are
there to test the link during play, not the deploy.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from tablesense.sim.faults import FaultPlan
from tablesense.sim.rp2040.board import Rp2040Board, wait_for_prompt
from tablesense.sim.rp2040.cli import rp2040_table


def link_options() -> Any:
    """Link options for boards slower than real time: the defaults, since the
    link measures each board's round trips and scales its watchdog and re-send
    waits from them (docs/link.md, "Slow boards"): one mechanism, as for `play`."""
    from tablesense.link.board_conn import LinkOptions

    return LinkOptions()


def deployed_rp2040_table(geometry, seed: int, faults: FaultPlan | None,
                          say=lambda s: print(s, file=sys.stderr, flush=True)) -> tuple[Any, Any]:
    """Start the table's emulated boards, deploy the firmware with each
    board's config (saying so), then turn on ``faults``. -> (table, LinkOptions)."""
    from tablesense.flash import deploy as dp

    vt = rp2040_table(geometry, seed=seed, faults=faults, stable_links=True)
    boards: list[Rp2040Board] = [b for b in vt.boards.values() if isinstance(b, Rp2040Board)]
    for b in boards:
        b.plan = FaultPlan()  # a clean cable while deploying
    say(f"demo: {len(boards)} emulated RP2040 boards (rp2040js, MicroPython v1.27.0); "
        "deploying the tablesense firmware to each (as `tablesense flash --table` does)...")
    vt.start()
    try:
        base = dp.build_payload(dp.FIRMWARE_DIR)
        results: dict[int, str] = {}

        def one(b: Rp2040Board) -> None:
            try:
                assert b.path is not None
                # bare MicroPython's banner first: printed late (a loaded
                # machine), it lands in the deploy's raw-REPL answer
                wait_for_prompt(b.path, timeout=60.0)
                r = dp.deploy(b.path, base.with_config(geometry.board_config(b.board_id)), confirm_timeout=120.0)
                results[b.board_id] = f"{r.action} in {r.seconds:.1f} s"
            except dp.DeployError as exc:
                results[b.board_id] = f"FAILED: {exc}"

        threads = [threading.Thread(target=one, args=(b,), daemon=True) for b in boards]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for bid in sorted(results):
            say(f"demo: board {bid}: firmware {results[bid]}")
        failed = [bid for bid, r in results.items() if r.startswith("FAILED")]
        if failed:
            raise RuntimeError(f"the firmware could not be deployed to board(s) {failed}")
        if faults is not None:
            for b in boards:
                b.set_faults(faults)
    except BaseException:
        vt.stop()
        raise
    return vt, link_options()
