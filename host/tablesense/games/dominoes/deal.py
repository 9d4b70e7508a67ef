"""Dealing, and checking that a deal fits the variant."""

from __future__ import annotations

import random

from tablesense.games.common import OptionError, say
from tablesense.games.dominoes.options import _SEATS
from tablesense.games.dominoes.tiles import _ALL_MASK, ALL_TILES, DOUBLE_BLANK, Tile


class DealError(ValueError):
    """A deal (or boneyard) that is not a shuffle of the double-six set in the
    shape the variant deals."""


def _deal_masks(
    variant: str, deal: tuple[tuple[Tile, ...], ...], bone: tuple[Tile, ...]
) -> list[int]:
    """The held mask of each seat; raises :class:`DealError` (via
    :func:`_check_deal`, which words the problem) unless the deal fits."""
    # 28 tiles whose bits add up to all 28 bits: each tile exactly once
    # (a repeated tile would carry into another bit or leave one unset)
    try:
        masks = [sum([t.bit for t in hand]) for hand in deal]
        seen = sum(masks) + sum([t.bit for t in bone])
        count = sum(map(len, deal)) + len(bone)
    except (AttributeError, TypeError, IndexError):
        masks, seen, count = [], -1, -1
    ok = count == 28 and len(deal) in _SEATS[variant]
    if ok and seen == _ALL_MASK:
        sizes = [len(h) for h in deal]
        if variant == "pips-two-player":
            ok = sizes == [7, 7] and len(bone) == 14
        elif bone:
            ok = False
        elif len(deal) == 4:
            ok = sizes == [7, 7, 7, 7]
        else:
            ok = all(len(h) == (10 if m & 1 else 9) for h, m in zip(deal, masks, strict=True))
        if ok:
            return masks
    _check_deal(variant, deal, bone)
    raise DealError("the deal does not fit the variant")  # pragma: no cover


def _check_deal(variant: str, deal: tuple[tuple[Tile, ...], ...], bone: tuple[Tile, ...]) -> None:
    n = len(deal)
    if n not in _SEATS[variant]:
        allowed = " or ".join(str(s) for s in _SEATS[variant])
        raise DealError(f"{variant} is played by {allowed} seats, the deal has {n}")
    seen: dict[Tile, str] = {}
    for seat, hand in enumerate(deal):
        for t in hand:
            if not isinstance(t, Tile):
                raise DealError(f"seat {seat} was dealt {t!r}, which is not a tile")
            if t in seen:
                raise DealError(f"{t} is dealt twice ({seen[t]} and seat {seat})")
            seen[t] = f"seat {seat}"
    for t in bone:
        if not isinstance(t, Tile):
            raise DealError(f"the boneyard holds {t!r}, which is not a tile")
        if t in seen:
            raise DealError(f"{t} is dealt twice ({seen[t]} and the boneyard)")
        seen[t] = "the boneyard"
    if len(seen) != 28:
        missing = ", ".join(str(t) for t in ALL_TILES if t not in seen)
        raise DealError(f"the deal and boneyard must hold all 28 tiles; missing: {missing}")
    sizes = [len(h) for h in deal]
    if variant == "pips-two-player":
        if sizes != [7, 7] or len(bone) != 14:
            raise DealError(
                f"pips-two-player deals 7 tiles to each seat and leaves 14 in the boneyard; "
                f"got {sizes} and {len(bone)}"
            )
        return
    if bone:
        raise DealError(f"{variant} has no boneyard; got {len(bone)} tiles")
    if n == 4:
        if sizes != [7, 7, 7, 7]:
            raise DealError(f"every seat is dealt 7 tiles; got {sizes}")
        return
    # 3 seats: 9 each, the holder of 0-0 has 10
    for seat, hand in enumerate(deal):
        want = 10 if DOUBLE_BLANK in hand else 9
        if len(hand) != want:
            raise DealError(
                "in the 3-seat game each seat is dealt 9 tiles and the holder of 0-0 keeps "
                f"a tenth; seat {seat} has {len(hand)}"
            )


def deal_tiles(variant: str, seats: int, rng: random.Random) -> tuple[list[list[Tile]], list[Tile]]:
    """Shuffle and deal for ``variant``: (hands per seat, boneyard in draw order)."""
    if seats not in _SEATS[variant]:
        raise OptionError(say("{variant} is played by {seats_variant} seats, not {seats}", variant=variant, seats_variant=_SEATS[variant], seats=seats))
    if seats == 3:
        # 9 tiles each; whoever picks up 0-0 keeps a tenth tile
        rest = list(ALL_TILES[1:])
        rng.shuffle(rest)
        hands = [rest[0:9], rest[9:18], rest[18:27]]
        holder = rng.randrange(3)
        hands[holder].insert(rng.randrange(10), DOUBLE_BLANK)
        return hands, []
    tiles = list(ALL_TILES)
    rand = rng.random
    for i in range(27, 0, -1):  # Fisher-Yates
        j = int(rand() * (i + 1))
        tiles[i], tiles[j] = tiles[j], tiles[i]
    hands = [tiles[7 * s : 7 * s + 7] for s in range(seats)]
    return hands, tiles[7 * seats :]
