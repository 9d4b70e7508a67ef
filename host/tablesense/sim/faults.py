"""Seeded link faults for the virtual table.

Two kinds:

- **Byte faults** on each direction of a board's link (:class:`ByteFaults`):
  each byte is dropped, corrupted (XOR with a random non-zero value) or
  duplicated with the given probabilities, and a write may be held back for a
  random delay (later writes queue behind it, as on a congested USB bus:
  order is kept). ``burst`` sets the mean length of a run of hit bytes: 1
  means every byte is hit independently (the harshest model: a 240-byte
  snapshot survives 2% independent faults less than 1% of the time); larger
  values give the same fraction of bad bytes in bursts, as line noise and
  lost USB packets come (a Gilbert-Elliott channel).
- **Events** (:class:`ScheduledFault`): unplug a board (its device path
  vanishes, the host's pyserial raises as on a real unplug), replug it (a new
  pseudo-terminal, the same board identity, a fresh boot), or reboot it
  (the firmware restarts and sends BOOT on the same port), at a given time
  or at a rate (:class:`FaultPlan.unplug_every` / ``reboot_every``).

Everything is drawn from ``random.Random`` instances seeded from the plan's
seed, the board id and the direction, so a run is repeatable as far as the
threads' timing allows.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from typing import Literal

from tablesense.table.words import say

FaultKind = Literal["unplug", "replug", "reboot"]


@dataclass(frozen=True)
class ScheduledFault:
    """``kind`` happens to ``board`` at ``at`` seconds after the table started.
    An unplug with ``duration`` is followed by a replug that much later."""

    at: float
    kind: FaultKind
    board: int
    duration: float | None = None


@dataclass
class FaultPlan:
    """Every fault of a virtual table run.

    ``drop``, ``corrupt``, ``duplicate``: per-byte probabilities; ``delay``:
    per-write probability of holding the write back ``delay_ms`` (a range);
    ``directions``: which way the byte faults apply ("to_host", "to_board").
    ``unplug_every`` / ``reboot_every``: mean seconds between such events per
    board (exponential), ``unplug_for``: how long an unplug lasts.
    """

    seed: int = 0
    drop: float = 0.0
    corrupt: float = 0.0
    duplicate: float = 0.0
    delay: float = 0.0
    delay_ms: tuple[float, float] = (1.0, 20.0)
    burst: float = 1.0
    directions: tuple[str, ...] = ("to_host", "to_board")
    events: list[ScheduledFault] = field(default_factory=list)
    unplug_every: float | None = None
    unplug_for: float = 0.5
    reboot_every: float | None = None

    @classmethod
    def from_rate(cls, rate: float, seed: int = 0, burst: float = 8.0) -> FaultPlan:
        """The ``--faults RATE`` plan: a fraction ``rate`` of bytes hit (in runs
        of mean length ``burst``), split 40/40/20 between drops, corruption and
        duplication, and ``rate`` of writes delayed by 1-20 ms."""
        if not 0.0 <= rate < 0.5:
            raise ValueError(say("fault rate {rate} is outside 0..0.5", rate=rate))
        if burst < 1.0:
            raise ValueError(say("burst length {burst} is below 1", burst=burst))
        return cls(
            seed=seed,
            drop=rate * 0.4,
            corrupt=rate * 0.4,
            duplicate=rate * 0.2,
            delay=rate,
            burst=burst,
        )

    @property
    def has_byte_faults(self) -> bool:
        return any(p > 0 for p in (self.drop, self.corrupt, self.duplicate, self.delay))

    def byte_faults(self, board: int, direction: str, generation: int = 0) -> ByteFaults | None:
        """The byte-fault filter for one direction of one board's link (None: no faults)."""
        if not self.has_byte_faults or direction not in self.directions:
            return None
        rng = random.Random(f"{self.seed}:{board}:{direction}:{generation}")
        return ByteFaults(
            rng, self.drop, self.corrupt, self.duplicate, self.delay, self.delay_ms, self.burst
        )

    def timeline(self, boards: list[int], horizon: float) -> list[ScheduledFault]:
        """Scheduled events plus the rate-driven ones up to ``horizon`` seconds, sorted."""
        out = list(self.events)
        for b in boards:
            rng = random.Random(f"{self.seed}:{b}:events")
            if self.unplug_every:
                t = rng.expovariate(1 / self.unplug_every)
                while t < horizon:
                    out.append(ScheduledFault(t, "unplug", b, self.unplug_for))
                    t += self.unplug_for + rng.expovariate(1 / self.unplug_every)
            if self.reboot_every:
                t = rng.expovariate(1 / self.reboot_every)
                while t < horizon:
                    out.append(ScheduledFault(t, "reboot", b))
                    t += rng.expovariate(1 / self.reboot_every)
        return sorted(out, key=lambda f: f.at)


@dataclass
class FaultCounts:
    dropped: int = 0
    corrupted: int = 0
    duplicated: int = 0
    delayed: int = 0


class ByteFaults:
    """Applies byte faults to one direction of a stream. Not thread-safe: one
    writer (the virtual board's thread) owns it."""

    def __init__(
        self,
        rng: random.Random,
        drop: float,
        corrupt: float,
        duplicate: float,
        delay: float,
        delay_ms: tuple[float, float],
        burst: float = 1.0,
    ) -> None:
        self.rng = rng
        self.drop = drop
        self.corrupt = corrupt
        self.duplicate = duplicate
        self.delay = delay
        self.delay_ms = delay_ms
        self.counts = FaultCounts()
        self._held: deque[tuple[float, bytes]] = deque()
        self._any = drop + corrupt + duplicate
        self.burst = max(1.0, burst)
        # A run of bad bytes starts with this probability on a good byte, so that
        # the long-run fraction of bad bytes stays ``_any``.
        self._p_start = self._any / (self.burst * (1 - self._any) + self._any) if self._any else 0.0
        self._p_continue = 1.0 - 1.0 / self.burst
        self._in_burst = False

    def mangle(self, data: bytes) -> bytes:
        """The bytes as they come out of the faulty wire (no delay applied)."""
        if not self._any:
            return data
        rng = self.rng
        total = self._any
        w_drop = self.drop / total
        w_corrupt = w_drop + self.corrupt / total
        p_start = self._p_start
        p_continue = self._p_continue
        in_burst = self._in_burst
        out = bytearray()
        for b in data:
            in_burst = rng.random() < (p_continue if in_burst else p_start)
            if not in_burst:
                out.append(b)
                continue
            r = rng.random()
            if r < w_drop:
                self.counts.dropped += 1
            elif r < w_corrupt:
                out.append(b ^ rng.randrange(1, 256))
                self.counts.corrupted += 1
            else:
                out.append(b)
                out.append(b)
                self.counts.duplicated += 1
        self._in_burst = in_burst
        return bytes(out)

    def push(self, data: bytes, now: float) -> bytes:
        """Mangle ``data`` and return what may be delivered now; a delayed write
        (and everything queued behind it) waits for :meth:`due`."""
        data = self.mangle(data)
        if self.delay and self.rng.random() < self.delay:
            self.counts.delayed += 1
            lo, hi = self.delay_ms
            release = now + self.rng.uniform(lo, hi) / 1000.0
            self._held.append((max(release, self._held[-1][0] if self._held else 0.0), data))
            return b""
        if self._held:
            self._held.append((self._held[-1][0], data))
            return b""
        return data

    def due(self, now: float) -> bytes:
        """Held bytes whose delay is over."""
        out = bytearray()
        while self._held and self._held[0][0] <= now:
            out.extend(self._held.popleft()[1])
        return bytes(out)

    @property
    def next_release(self) -> float | None:
        return self._held[0][0] if self._held else None

    def clear(self) -> None:
        self._held.clear()
