"""Issue 19, the coach's outputs: the seat button's long press, and the
``coach`` LED layer that lights only the asking seat's rack."""

from __future__ import annotations

from tablesense.outputs.cell_leds import CellLeds, LedPalette
from tablesense.outputs.clock import ManualScheduler
from tablesense.outputs.events import EventBus
from tablesense.outputs.gpio import LONG_PRESS_S, SimBackend, TableGPIO, forward_buttons
from tablesense.table.geometry import TableGeometry
from testsupport import REPO

COACH = LedPalette().coach


def hold(sim: SimBackend, pin: int, seconds: float) -> None:
    sim.bounce(pin, final_pressed=True)
    sim.advance(seconds)
    sim.bounce(pin, final_pressed=False)
    sim.advance(0.05)


def test_a_long_press_asks_the_coach_and_a_short_one_still_passes() -> None:
    sim = SimBackend()
    table = TableGPIO(sim, [(4, 17, 27), (5, 18, 23)], referee_button_pin=3)
    calls: list[tuple] = []
    forward_buttons(
        table,
        lambda seat, button: calls.append((seat, button)),
        lambda: calls.append(("referee",)),
        long_press=LONG_PRESS_S,
    )
    hold(sim, 18, 0.15)  # a tap: passes, on the release
    assert calls == [(1, "main")]
    sim.bounce(17, final_pressed=True)
    sim.advance(LONG_PRESS_S - 0.1)
    assert calls == [(1, "main")]  # not yet: still held, not yet long
    sim.advance(0.2)
    assert calls[-1] == (0, "coach")  # at the moment it becomes long, still held
    sim.advance(2.0)
    sim.bounce(17, final_pressed=False)
    sim.advance(0.05)
    assert calls == [(1, "main"), (0, "coach")]  # the release after it does nothing
    # a bouncing contact held long is one long press; call and referee buttons as before
    hold(sim, 18, LONG_PRESS_S + 0.3)
    hold(sim, 27, 2.0)
    hold(sim, 3, 0.1)
    assert calls[2:] == [(1, "coach"), (0, "call"), ("referee",)]
    table.close()


def test_without_the_coach_a_seat_button_acts_when_it_closes() -> None:
    sim = SimBackend()
    table = TableGPIO(sim, [(4, 17, 27)])
    calls: list[tuple] = []
    forward_buttons(table, lambda seat, button: calls.append((seat, button)), lambda: None)
    sim.bounce(17, final_pressed=True)
    sim.advance(0.05)
    assert calls == [(0, "main")]
    sim.advance(3.0)
    assert calls == [(0, "main")]
    table.close()


def test_the_coach_layer_lights_only_the_asking_seats_rack() -> None:
    geo = TableGeometry.load(REPO / "hardware" / "tables" / "dominoes-4.toml")
    frames: list[dict] = []
    clock = ManualScheduler()
    leds = CellLeds(geo, frames.append, min_interval=0.05, scheduler=clock)
    bus = EventBus(clock=clock.now)
    leds.attach(bus)
    rack2 = list(geo.seats[2].rack)
    rack1 = list(geo.seats[1].rack)
    # a hint naming a line cell and another seat's rack cell lights neither
    bus.publish(
        "coach",
        seat=2,
        hand_no=1,
        private={"seat": 2, "piece": "3-5", "cells": [rack2[1], "left-1", rack1[0]]},
    )
    clock.advance(0.1)
    assert {c for c, rgb in frames[-1].items() if rgb == COACH} == {rack2[1]}
    bus.publish("move_accepted", seat=2, cells=["left-1"])
    clock.advance(0.1)
    assert COACH not in frames[-1].values()  # the position changed: the hint is gone
    bus.publish("coach", seat=1, hand_no=1, private={"seat": 1, "cells": [rack1[2]]})
    clock.advance(0.1)
    assert {c for c, rgb in frames[-1].items() if rgb == COACH} == {rack1[2]}
    bus.publish("hand_ended", hand_no=1)
    clock.advance(0.1)
    assert COACH not in frames[-1].values()
    # the public form of the event (no private part) lights nothing
    bus.publish("coach", seat=1, hand_no=2)
    clock.advance(0.1)
    assert COACH not in frames[-1].values()
    leds.close()


def test_the_coach_layer_lights_a_plays_target_on_the_line_only() -> None:
    """Issue 31: the hint's ``target`` (where the suggested play goes) is lit
    on the line; a target outside the line (another seat's rack) is not."""
    geo = TableGeometry.load(REPO / "hardware" / "tables" / "dominoes-4.toml")
    assert geo.line is not None
    frames: list[dict] = []
    clock = ManualScheduler()
    leds = CellLeds(geo, frames.append, min_interval=0.05, scheduler=clock)
    bus = EventBus(clock=clock.now)
    leds.attach(bus)
    rack0, rack1 = list(geo.seats[0].rack), list(geo.seats[1].rack)
    line_cell = geo.line.arm("left")[2]
    bus.publish("coach", seat=0, hand_no=1,
                private={"seat": 0, "piece": "3-5", "cells": [rack0[3]], "target": [line_cell, rack1[0]]})
    clock.advance(0.1)
    assert {c for c, rgb in frames[-1].items() if rgb == COACH} == {rack0[3], line_cell}
    bus.publish("move_accepted", seat=0, cells=[rack0[3], line_cell])
    clock.advance(0.1)
    assert COACH not in frames[-1].values()
    leds.close()
