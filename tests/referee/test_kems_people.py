"""Issue 31: the computer's hands at a Kems table people also touch.

A swap the computers chose is called off when its board card has gone (a
person took it first): the hand puts its own card back instead of laying it
on a slot that is no longer the one it chose, or pulling the card off the
person's rack."""

from __future__ import annotations

from typing import Any

from tablesense.outputs.events import EventBus
from tablesense.referee.hands import VirtualHands
from tablesense.table.tags import TagRegistry


class World:
    """Cells -> tags, as the virtual table keeps them."""

    def __init__(self) -> None:
        self.cells: dict[str, bytes] = {}

    def place(self, cell: str, uid: bytes) -> None:
        self.cells[cell] = uid

    def remove(self, cell: str) -> None:
        del self.cells[cell]


def hands_with(initial: dict[str, str], accepted: list[int]) -> tuple[VirtualHands, World, TagRegistry]:
    registry = TagRegistry.virtual(0)
    world = World()
    for cell, piece in initial.items():
        world.place(cell, registry.uid_of(piece))
    hands = VirtualHands(
        EventBus(), world, registry, lambda seat, button: None, lambda: accepted[0],
        pace=0.0, initial=initial, timeout=1.0,
    )
    return hands, world, registry


def swap(seat: int, give: str, take: str, from_cell: str, slot: str) -> dict[str, Any]:
    return {"seat": seat, "piece": give, "take": take, "from_cell": from_cell, "to_cell": slot, "take_cell": slot}


def test_a_swap_whose_board_card_was_taken_is_called_off() -> None:
    accepted = [0]
    initial = {"slot-1": "AS", "slot-2": "KH", "seat1-1": "2C", "seat2-1": "3D"}
    hands, world, registry = hands_with(initial, accepted)
    # a person takes AS off slot 1 before the computers' hands reach it
    hands.cells.pop("slot-1")
    world.remove("slot-1")
    hands.cells["seat0-5"] = "AS"
    world.place("seat0-5", registry.uid_of("AS"))

    def accept_one(cell: str, uid: bytes, place: Any = world.place) -> None:
        place(cell, uid)
        if cell == "seat2-1":  # seat 2's swap landed: the referee accepts it
            accepted[0] += 1

    world.place = accept_one  # type: ignore[method-assign]
    hands.swaps([swap(1, "2C", "AS", "seat1-1", "slot-1"), swap(2, "3D", "KH", "seat2-1", "slot-2")], 0)
    shown = {cell: str(registry.piece(uid)) for cell, uid in world.cells.items()}
    assert shown == {
        "seat0-5": "AS",  # still on the person's rack
        "seat1-1": "2C",  # seat 1's card back where it was: its swap is off (slot 1 stays empty)
        "slot-2": "3D",
        "seat2-1": "KH",
    }
