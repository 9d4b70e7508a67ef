"""Scenario files: a timed script of world changes and faults for the virtual table.

A scenario is TOML or JSON with a list of ``steps``; each step has exactly
one action and a time, either ``at`` (seconds since the scenario started) or
``after`` (seconds after the previous step; default 0)::

    [[steps]]
    at = 0.5
    place = "center"
    uid = "04a1b2c3d4e5f6"

    [[steps]]
    after = 1.0
    move = ["center", "left-1"]

    [[steps]]
    after = 0.5
    remove = "left-1"

    [[steps]]
    after = 1.0
    unplug = 2
    duration = 0.5          # optional: replug this much later

    [[steps]]
    after = 1.0
    reboot = 1

    [[steps]]
    after = 0.2
    noise = "seat0-1"      # also: flicker, dead
    value = 1.0            # noise 1.0 = an unreadable tag

Actions: ``place`` (+ ``uid``), ``remove``, ``move`` ([from, to]), ``stack``
(+ ``uid``: a second tag on a cell), ``unplug`` (+ optional ``duration``),
``replug``, ``reboot``, ``noise``/``flicker`` (+ ``value``), ``dead`` (+ ``value``
true/false), ``wait`` (nothing; only the time matters).
:meth:`Scenario.load` checks the whole file against the table and lists every
problem in one :class:`ScenarioError`.
"""

from __future__ import annotations

import json
import threading
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablesense.table.geometry import TableGeometry
from tablesense.table.words import say

ACTIONS = (
    "place",
    "remove",
    "move",
    "stack",
    "unplug",
    "replug",
    "reboot",
    "noise",
    "flicker",
    "dead",
    "wait",
)


class ScenarioError(ValueError):
    """A scenario file that cannot run; the message lists every problem."""


@dataclass(frozen=True)
class Step:
    """One timed action. ``at`` is absolute (seconds from the scenario start)."""

    at: float
    action: str
    target: Any
    uid: bytes | None = None
    value: Any = None
    duration: float | None = None

    def describe(self) -> str:
        extra = f" {self.uid.hex()}" if self.uid else ""
        if self.value is not None:
            extra += f" = {self.value}"
        return f"{self.at:7.2f}s {self.action} {self.target}{extra}"


class Scenario:
    """A validated list of steps, sorted by time."""

    def __init__(self, steps: list[Step], source: str = "<scenario>") -> None:
        self.steps = sorted(steps, key=lambda s: s.at)
        self.source = source

    @property
    def duration(self) -> float:
        return max((s.at + (s.duration or 0.0) for s in self.steps), default=0.0)

    @classmethod
    def load(cls, path: str | Path, geometry: TableGeometry | None = None) -> Scenario:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise ScenarioError(say("cannot read scenario {file!r}: {error}", file=str(p),
                                    error=exc.strerror or str(exc))) from None
        try:
            data = json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
        except (ValueError, tomllib.TOMLDecodeError) as exc:
            raise ScenarioError(
                say("{file}: not valid {format}: {error}", file=str(p),
                    format="JSON" if p.suffix.lower() == ".json" else "TOML", error=str(exc))
            ) from None
        return cls.from_dict(data, geometry, source=str(p))

    @classmethod
    def from_dict(
        cls, data: Any, geometry: TableGeometry | None = None, source: str = "<scenario>"
    ) -> Scenario:
        problems: list[str] = []
        raw_steps = data.get("steps") if isinstance(data, dict) else None
        if not isinstance(raw_steps, list):
            raise ScenarioError(say("{source}: a scenario needs a list of steps ([[steps]] in TOML)", source=source))
        cells = set(geometry.cells) if geometry else None
        boards = {b.id for b in geometry.boards} if geometry else None
        steps: list[Step] = []
        t = 0.0
        for i, raw in enumerate(raw_steps):
            where = f"step {i + 1}"
            if not isinstance(raw, dict):
                problems.append(f"{where}: not a table")
                continue
            actions = [k for k in ACTIONS if k in raw]
            unknown = sorted(set(raw) - set(ACTIONS) - {"at", "after", "uid", "value", "duration"})
            if unknown:
                problems.append(f"{where}: unknown key(s) {', '.join(unknown)}")
            if len(actions) != 1:
                problems.append(
                    f"{where}: needs exactly one action of {', '.join(ACTIONS)} (found {actions or 'none'})"
                )
                continue
            action = actions[0]
            if "at" in raw and "after" in raw:
                problems.append(f"{where}: give 'at' or 'after', not both")
            at_raw = raw.get("at")
            after_raw = raw.get("after", 0.0)
            timing = at_raw if at_raw is not None else after_raw
            if isinstance(timing, bool) or not isinstance(timing, int | float) or timing < 0:
                problems.append(f"{where}: time must be a number of seconds >= 0, not {timing!r}")
                continue
            t = float(at_raw) if at_raw is not None else t + float(after_raw)
            target = raw[action]
            uid: bytes | None = None
            if action in ("place", "stack"):
                try:
                    uid = bytes.fromhex(str(raw.get("uid", "")))
                except ValueError:
                    uid = None
                if uid is None or len(uid) not in (4, 7, 10):
                    problems.append(
                        f"{where}: uid must be 4, 7 or 10 bytes of hex, not {raw.get('uid')!r}"
                    )
            if action in ("place", "remove", "stack", "noise", "flicker", "dead"):
                names = [target]
            elif action == "move":
                if not (isinstance(target, list) and len(target) == 2):
                    problems.append(f"{where}: move needs [from_cell, to_cell]")
                    continue
                names = list(target)
            else:
                names = []
            for n in names:
                if not isinstance(n, str):
                    problems.append(f"{where}: {n!r} is not a cell name")
                elif cells is not None and n not in cells:
                    problems.append(f"{where}: unknown cell {n!r}")
            if action in ("unplug", "replug", "reboot") and (
                not isinstance(target, int)
                or isinstance(target, bool)
                or (boards is not None and target not in boards)
            ):
                problems.append(f"{where}: unknown board {target!r}")
            value = raw.get("value")
            if action in ("noise", "flicker") and (
                isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1
            ):
                problems.append(f"{where}: {action} needs a value between 0 and 1")
            if action == "dead" and not isinstance(value, bool):
                problems.append(f"{where}: dead needs value = true or false")
            duration = raw.get("duration")
            if duration is not None and (
                action != "unplug" or not isinstance(duration, int | float) or duration < 0
            ):
                problems.append(f"{where}: duration only goes with unplug, in seconds")
                duration = None
            steps.append(
                Step(
                    t, action, target, uid, value, float(duration) if duration is not None else None
                )
            )
        if problems:
            # the problems name the file's own keys and values: the sentence around them is translated
            raise ScenarioError(
                say("{source}: {n} problem(s):\n{lines}", source=source, n=len(problems),
                    lines="\n".join(f"  - {p}" for p in problems))
            )
        return cls(steps, source)

    def run(
        self,
        table: Any,
        stop: threading.Event | None = None,
        on_step: Callable[[Step], None] | None = None,
        speed: float = 1.0,
    ) -> bool:
        """Play the steps against a :class:`~tablesense.sim.virtual_table.VirtualTable`
        in real time (``speed`` > 1 is faster). Returns False if stopped early.
        A world error (e.g. placing on an occupied cell) raises WorldError."""
        stop = stop or threading.Event()
        t0 = time.monotonic()
        timed: list[tuple[float, Step, bool]] = []
        for s in self.steps:
            timed.append((s.at, s, False))
            if s.action == "unplug" and s.duration is not None:
                timed.append((s.at + s.duration, s, True))
        timed.sort(key=lambda x: x[0])
        for at, step, is_replug in timed:
            delay = t0 + at / speed - time.monotonic()
            if delay > 0 and stop.wait(delay):
                return False
            if is_replug:
                table.replug(step.target)
            else:
                _apply(table, step)
            if on_step is not None:
                on_step(step)
        return True


def _apply(table: Any, s: Step) -> None:
    a = s.action
    if a == "place":
        table.place(s.target, s.uid)
    elif a == "stack":
        table.stack(s.target, s.uid)
    elif a == "remove":
        table.remove(s.target)
    elif a == "move":
        table.move(s.target[0], s.target[1])
    elif a == "unplug":
        table.unplug(s.target)
    elif a == "replug":
        table.replug(s.target)
    elif a == "reboot":
        table.reboot(s.target)
    elif a == "noise":
        table.set_noise(s.target, noise=float(s.value))
    elif a == "flicker":
        table.set_noise(s.target, flicker=float(s.value))
    elif a == "dead":
        table.set_noise(s.target, dead=bool(s.value))
