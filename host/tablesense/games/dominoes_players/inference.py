"""What one seat can infer about the hidden dominoes, and worlds that fit it.

A seat at the table sees its own tiles, the line, every public move and how
many tiles each seat holds. It does NOT see which tile another seat drew.
From that it can rule tiles out of the other hands:

- **A pass** on ends ``a|b``: the seat holds no tile showing ``a`` or ``b``
  (a pass comes only once the boneyard is empty, so it stays true).
- **A draw**: the seat held nothing that fit, and the tiles it drew before
  the last one of that run did not fit either (it drew again); when the run
  ends in a play, the played tile is the last one drawn (nothing else could
  fit). So after the run every tile it holds avoids ``a`` and ``b`` — except
  tiles it draws *later*, which is why a draw constraint carries a capacity:
  at most ``B`` of the tiles it holds now may break it, ``B`` being the hidden
  tiles it drew afterwards.
- **The opening rule**: with two players and 6-6 in the boneyard, the holder
  of the highest double opens with it (else the heaviest tile), so nobody was
  dealt a higher double (or, without doubles, any double or a heavier tile).
- **An announced double** (``brazilian-points``) is in its announcer's hand
  until it is played.
- **Counts**: each seat holds exactly as many tiles as the table shows.

The constraints of one seat form a chain of "points" in time, each a tile
mask ``M_j`` and a capacity ``B_j`` (hidden tiles held now that were drawn
after point ``j``; non-increasing in ``j``). A hand ``H`` fits when for every
``j``: ``#{t in H : t's latest violated point >= j} <= B_j`` — the tiles that
break point ``j`` or a later one must all be late draws (Hall's condition for
the nested capacities). That is exact for what the constraints say and
never stricter than the truth: ``tests/games/test_dominoes_inference.py``
replays thousands of hands and checks that the real hands always fit.

:meth:`Belief.sample` deals the unseen tiles into worlds that fit (tiles
placed most-constrained first, each to a seat with probability in proportion
to its free places, restarting on a dead end, then a complete search), so a
search player never plays out an impossible world.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import NamedTuple

from tablesense.games.dominoes import ALL_TILES, Announce, DominoHand, Draw, Pass, Play

__all__ = ["Belief", "SeatBelief", "infer", "tile_mask", "mask_tiles", "HAS"]

HAS: tuple[int, ...] = tuple(
    sum(1 << i for i, t in enumerate(ALL_TILES) if t.has(n)) for n in range(7)
)
"""``HAS[n]``: the mask of the seven tiles showing ``n`` (bit ``i`` = ``ALL_TILES[i]``)."""
_ALL = (1 << 28) - 1
_INDEX = {t: i for i, t in enumerate(ALL_TILES)}


def tile_mask(tiles: object) -> int:
    """The bit mask of some tiles (bit ``i`` is ``ALL_TILES[i]``)."""
    m = 0
    for t in tiles:  # type: ignore[attr-defined]
        m |= 1 << _INDEX[t]
    return m


def mask_tiles(mask: int) -> list:
    """The tiles of a mask, in set order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(ALL_TILES[low.bit_length() - 1])
        mask ^= low
    return out


@dataclass
class SeatBelief:
    """What the viewer knows about one other seat's hidden hand."""

    count: int
    """Tiles it holds now (public)."""
    known: int = 0
    """Tiles it certainly holds (announced doubles not yet played)."""
    points: list[tuple[int, int]] = field(default_factory=list)
    """``(M_j, B_j)`` in time order: tiles held since before point ``j``
    avoid ``M_j``; at most ``B_j`` held tiles were drawn after it."""

    def latest(self, tile_index: int) -> int:
        """1 + the index of the latest point whose mask holds the tile (0: none)."""
        bit = 1 << tile_index
        for j in range(len(self.points) - 1, -1, -1):
            if self.points[j][0] & bit:
                return j + 1
        return 0

    def forbidden(self) -> int:
        """Tiles this seat cannot hold at all (every point they break has no room)."""
        out = 0
        for j, (_, b) in enumerate(self.points):
            if b == 0:
                # no hidden draw after point j (B only falls with time): a
                # tile breaking point j or a later one cannot be held
                for mm, _ in self.points[j:]:
                    out |= mm
                break
        return out

    def fits(self, hand: int) -> bool:
        """Whether the seat may hold exactly the tiles of ``hand``."""
        if hand.bit_count() != self.count or hand & self.known != self.known:
            return False
        if not self.points:
            return True
        need = [0] * (len(self.points) + 1)
        m = hand
        while m:
            low = m & -m
            need[self.latest(low.bit_length() - 1)] += 1
            m ^= low
        above = 0
        for j in range(len(self.points), 0, -1):
            above += need[j]
            if above > self.points[j - 1][1]:
                return False
        return True


class _Prepared(NamedTuple):
    """What every world sampled from one :class:`Belief` starts from."""

    seats: list[int]
    """The other seats, in order."""
    base: list[int]
    """Tiles already placed per seat: the viewer's own, announced doubles."""
    latest: dict[int, list[int]]
    """Per seat, each tile's latest violated point (0: none)."""
    options: list[tuple[int, list[int]]]
    """Each tile to deal and where it may go (a seat, or -1: the boneyard)."""


@dataclass
class Belief:
    """One seat's knowledge of where the unseen tiles are."""

    seat: int
    seats: int
    own: int
    """The viewer's tiles."""
    unseen: int
    """Tiles neither in the viewer's hand nor on the line."""
    boneyard: int
    """How many tiles are left to draw."""
    others: dict[int, SeatBelief]
    _prepared: _Prepared | None = field(default=None, repr=False, compare=False)
    """:meth:`_prepare`'s answer, kept for the next sample (a belief is not
    changed once :func:`infer` has made it)."""

    def fits(self, hands: list[int], boneyard: int) -> bool:
        """Whether a world (a mask per seat, the boneyard's mask) fits everything known."""
        if hands[self.seat] != self.own or boneyard.bit_count() != self.boneyard:
            return False
        union = boneyard
        for s, b in self.others.items():
            h = hands[s]
            if h & union or not b.fits(h):
                return False
            union |= h
        return union == self.unseen

    def relaxed(self) -> Belief:
        """The same counts without the inferred constraints: what a player
        falls back on when nothing fits (a table that misread a tile can
        show facts no deal explains)."""
        return Belief(
            self.seat,
            self.seats,
            self.own,
            self.unseen,
            self.boneyard,
            {s: SeatBelief(b.count) for s, b in self.others.items()},
        )

    def candidates(self) -> dict[int, int]:
        """For each other seat, the unseen tiles it could hold."""
        return {s: self.unseen & ~b.forbidden() for s, b in self.others.items()}

    def sample(self, rng: random.Random, restarts: int = 30) -> tuple[list[int], list[int]]:
        """A world that fits: (a mask per seat, the boneyard's tile indexes in
        a random draw order).

        Raises ``ValueError`` only if nothing fits, which the table cannot
        produce (the real deal always fits)."""
        prep = self._prepared
        if prep is None:
            prep = self._prepared = self._prepare()
        for attempt in range(restarts + 1):
            world = self._try(prep, rng, exhaustive=attempt == restarts)
            if world is not None:
                hands, bone = world
                order = [i for i in range(28) if bone >> i & 1]
                rng.shuffle(order)
                return hands, order
        raise ValueError("no deal of the unseen tiles fits what the table showed")

    def _prepare(self) -> _Prepared:
        """What every :meth:`sample` of this belief starts from (computed once
        per decision: a search samples a hundred worlds or more from one
        belief)."""
        seats = sorted(self.others)
        pool = self.unseen
        base = [0] * self.seats
        base[self.seat] = self.own
        for s in seats:
            base[s] = self.others[s].known
            pool &= ~self.others[s].known
        tiles = []
        m = pool
        while m:
            low = m & -m
            tiles.append(low.bit_length() - 1)
            m ^= low
        latest = {s: [self.others[s].latest(i) for i in range(28)] for s in seats}
        empty = {s: [0] * (len(self.others[s].points) + 1) for s in seats}
        # the seats (or the boneyard, -1) each tile may go to
        options: list[tuple[int, list[int]]] = []
        for i in tiles:
            dest = [s for s in seats if self._may(s, latest[s][i], empty[s], 0)]
            if self.boneyard:
                dest.append(-1)
            options.append((i, dest))
        return _Prepared(seats, base, latest, options)

    def _try(
        self, prepared: _Prepared, rng: random.Random, exhaustive: bool
    ) -> tuple[list[int], int] | None:
        seats, base, latest = prepared.seats, prepared.base, prepared.latest
        hands = base[:]
        room = {s: self.others[s].count - base[s].bit_count() for s in seats}
        bone_room = self.boneyard
        # per seat: how many placed tiles have latest violated point >= j
        used = {s: [0] * (len(self.others[s].points) + 1) for s in seats}
        options = prepared.options[:]
        rng.shuffle(options)
        options.sort(key=lambda o: len(o[1]))
        if any(s < 0 for s in room.values()) or not all(o[1] for o in options):
            return None

        def place(k: int) -> bool:
            nonlocal bone_room
            if k == len(options):
                return True
            i, dest = options[k]
            weights = []
            for d in dest:
                if d < 0:
                    w = bone_room
                elif room[d] > 0 and (latest[d][i] == 0 or self._may(d, latest[d][i], used[d], 1)):
                    w = room[d]
                else:
                    w = 0
                weights.append(w)
            order = []
            total = sum(weights)
            while total > 0:
                x = rng.random() * total
                idx = 0
                for idx in (k for k, w in enumerate(weights) if w):
                    if x < weights[idx]:
                        break
                    x -= weights[idx]
                order.append(dest[idx])
                total -= weights[idx]
                weights[idx] = 0
                if not exhaustive:
                    break
            for d in order:
                if d < 0:
                    bone_room -= 1
                    if place(k + 1):
                        return True
                    bone_room += 1
                else:
                    lv = latest[d][i]
                    hands[d] |= 1 << i
                    room[d] -= 1
                    for j in range(1, lv + 1):
                        used[d][j] += 1
                    if place(k + 1):
                        return True
                    hands[d] &= ~(1 << i)
                    room[d] += 1
                    for j in range(1, lv + 1):
                        used[d][j] -= 1
            return False

        if not place(0):
            return None
        bone = 0
        for i, _ in options:
            if not any(hands[s] >> i & 1 for s in seats):
                bone |= 1 << i
        return hands, bone

    def _may(self, s: int, lv: int, used: list[int], extra: int) -> bool:
        """Whether seat ``s`` may take one more tile whose latest violated point is ``lv``."""
        pts = self.others[s].points
        return all(used[j] + extra <= pts[j - 1][1] for j in range(1, lv + 1))


def infer(hand: DominoHand, seat: int) -> Belief:
    """What ``seat`` knows about the hidden tiles of ``hand`` (public facts only:
    the drawn tiles of other seats are never read)."""
    n = hand.seats
    own = tile_mask(hand.hand_of(seat))
    line = hand.line
    on_line = tile_mask(lp.tile for lp in line)
    unseen = _ALL & ~own & ~on_line
    others = {s: SeatBelief(hand.count(s)) for s in range(n) if s != seat}
    # each seat's chain of points: [mask, draws after it (hidden), ...]
    chain: dict[int, list[list[int]]] = {s: [] for s in others}
    opening = getattr(hand, "opening", None)
    if opening is not None and getattr(opening, "fallback", False):
        t0 = getattr(opening, "tile", None)
        if t0 is not None and str(t0) != "6-6":
            bar = 1 << _INDEX[ALL_TILES[27]]  # 6-6 lay in the boneyard
            for i, t in enumerate(ALL_TILES):
                if t0.is_double:
                    if t.is_double and t.pips > t0.pips:
                        bar |= 1 << i
                elif t.is_double or (t.pips, t.high) > (t0.pips, t0.high):
                    bar |= 1 << i
            for s in others:
                chain[s].append([bar, 0])
    left = right = -1
    k = 0  # next line entry
    run: dict[int, int] = {}  # seat -> draws in its current run
    run_ends: dict[int, tuple[int, int]] = {}  # seat -> the ends its run drew on
    announced: dict[int, int] = {}
    played: int = 0
    for m in hand.moves:
        s = m.seat
        if isinstance(m, Play):
            lp = line[k]
            k += 1
            played |= 1 << _INDEX[lp.tile]
            if lp.end is None:
                left, right = lp.outer, lp.inner
            elif lp.end == "left":
                left = lp.outer
            else:
                right = lp.outer
            if s in chain and run.get(s):
                # the run ends in a play of its last draw (public): the
                # other drawn tiles are held and fit neither old end
                for p in chain[s]:
                    p[1] -= 1
                chain[s].append([_ends_mask(run_ends[s]), 0])
            run.pop(s, None)
        elif isinstance(m, Draw):
            if s in chain:
                if not run.get(s):
                    run_ends[s] = (left, right)
                run[s] = run.get(s, 0) + 1
                for p in chain[s]:
                    p[1] += 1
        elif isinstance(m, Pass):
            if s in chain and left >= 0:
                chain[s].append([_ends_mask((left, right)), 0])
            run.pop(s, None)
        elif isinstance(m, Announce):
            announced[s] = announced.get(s, 0) | 1 << _INDEX[m.tile]
    for s, b in others.items():
        b.known = announced.get(s, 0) & ~played & unseen
        b.points = [(mm, bb) for mm, bb in chain[s]]
    return Belief(seat, n, own, unseen, hand.boneyard_count, others)


def _ends_mask(ends: tuple[int, int]) -> int:
    a, b = ends
    return HAS[a] | HAS[b]
