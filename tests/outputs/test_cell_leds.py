"""Cell LED frames: layers from events, whole frames, coalescing under bursts."""

from __future__ import annotations

import pytest

from tablesense.outputs.cell_leds import CellLeds, LedPalette
from tablesense.outputs.clock import ManualScheduler
from tablesense.outputs.events import EventBus
from tablesense.table.geometry import TableGeometry
from testsupport import REPO

RED = LedPalette().error
OFF = (0, 0, 0)


@pytest.fixture(scope="module")
def geo() -> TableGeometry:
    return TableGeometry.load(REPO / "hardware" / "tables" / "dominoes-4.toml")


def make(
    geo: TableGeometry, interval: float = 0.05
) -> tuple[CellLeds, list[dict], ManualScheduler, EventBus]:
    frames: list[dict] = []
    clock = ManualScheduler()
    leds = CellLeds(geo, frames.append, min_interval=interval, scheduler=clock)
    bus = EventBus(clock=clock.now)
    leds.attach(bus)
    return leds, frames, clock, bus


def lit(frame: dict, rgb: tuple[int, int, int]) -> set[str]:
    return {cid for cid, c in frame.items() if c == rgb}


def test_frames_cover_every_led_cell_and_layers_take_priority(geo: TableGeometry) -> None:
    leds, frames, clock, bus = make(geo)
    led_cells = {cid for cid, c in geo.cells.items() if c.led is not None}
    bus.publish("view", to_play=1)
    assert set(frames[-1]) == led_cells
    assert lit(frames[-1], leds.palette.turn) == set(geo.seats[1].rack)
    clock.advance(0.1)
    bus.publish("move_accepted", seat=1, from_cell="seat1-3", to_cell="left-1")
    clock.advance(0.1)
    assert lit(frames[-1], leds.palette.last_move) == {"seat1-3", "left-1"}
    bus.publish("move_rejected", seat=1, cells=["left-1", "right-2"], instruction="put 3-5 back")
    clock.advance(0.1)
    # the error wins over the last move on left-1
    assert lit(frames[-1], RED) == {"left-1", "right-2"}
    assert lit(frames[-1], leds.palette.last_move) == {"seat1-3"}
    bus.publish("correction_cleared")
    clock.advance(0.1)
    assert lit(frames[-1], RED) == set()
    bus.publish("suggestion", seat=2, piece="3-5", from_cell="seat2-4", to_cell="right-1")
    bus.publish("targets", seat=2, cells=["left-2", "right-1"])
    clock.advance(0.1)
    assert lit(frames[-1], leds.palette.suggestion) == {"seat2-4", "right-1"}
    assert lit(frames[-1], leds.palette.targets) == {"left-2"}
    bus.publish("hand_started", hand_no=2)
    clock.advance(0.1)
    assert lit(frames[-1], leds.palette.turn) == set(geo.seats[1].rack)
    assert len(lit(frames[-1], OFF)) == len(led_cells) - len(geo.seats[1].rack)


def test_burst_of_events_is_coalesced_into_two_frames(geo: TableGeometry) -> None:
    leds, frames, clock, bus = make(geo, interval=0.05)
    seats = len(geo.seats)
    for i in range(300):
        bus.publish("view", to_play=i % seats)
        bus.publish("move_rejected", cells=[f"left-{1 + i % 13}"])
        clock.advance(0.0001)
    # one frame at once (leading edge), then nothing until the interval ends
    assert len(frames) == 1
    clock.advance(0.05)
    assert len(frames) == 2
    last = frames[-1]
    assert lit(last, RED) == {f"left-{1 + 299 % 13}"}
    assert lit(last, leds.palette.turn) == set(geo.seats[299 % seats].rack)
    assert leds.events_seen == 600
    # an unchanged state sends nothing more
    bus.publish("view", to_play=299 % seats)
    clock.advance(1)
    assert len(frames) == 2


def test_frames_are_rate_limited_to_the_interval(geo: TableGeometry) -> None:
    leds, frames, clock, bus = make(geo, interval=0.1)
    times: list[float] = []
    leds.sink = lambda colors: times.append(clock.now())
    for i in range(100):  # one change every 10 ms for 1 s
        bus.publish("view", to_play=i % 4)
        clock.advance(0.01)
    clock.advance(0.2)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert min(gaps) >= 0.1 - 1e-9
    assert 9 <= len(times) <= 12


def test_board_frames_and_resend_after_board_returns(geo: TableGeometry) -> None:
    leds, frames, clock, bus = make(geo)
    bus.publish("move_rejected", cells=["center", "seat0-1", "nowhere"])
    boards = leds.board_frames()
    assert set(boards) == {b.id for b in geo.boards}
    center = geo.cells["center"]
    assert center.led is not None
    assert boards[center.board][center.led] == RED
    assert sum(1 for strip in boards.values() for c in strip if c == RED) == 2
    assert leds.unknown_cells == {"nowhere"}
    n = len(frames)
    clock.advance(1)
    bus.publish("board_status", board=1, online=False)
    clock.advance(1)
    assert len(frames) == n  # offline: nothing changed to send
    bus.publish("board_status", board=1, online=True)
    clock.advance(1)
    assert len(frames) == n + 1 and frames[-1] == frames[-2]


def test_sink_failure_is_contained_and_close_blanks(geo: TableGeometry) -> None:
    clock = ManualScheduler()
    calls: list[dict] = []

    def flaky(colors: dict) -> None:
        calls.append(colors)
        if len(calls) == 1:
            raise OSError("board 2 went away")

    leds = CellLeds(geo, flaky, scheduler=clock)
    leds.set_layer("error", ["center"])
    clock.advance(1)
    leds.set_layer("error", ["left-1"])
    assert len(calls) == 2
    leds.close()
    leds.close()
    assert len(calls) == 3 and set(calls[-1].values()) == {OFF}
    with pytest.raises(ValueError, match="unknown LED layer"):
        leds.set_layer("sparkles", [])


def test_palette_is_validated() -> None:
    with pytest.raises(ValueError, match="error"):
        LedPalette(error=(300, 0, 0))


def test_last_move_follows_the_suggestion_it_carried_out_and_view_corrections(
    geo: TableGeometry,
) -> None:
    leds, frames, clock, bus = make(geo)
    bus.publish(
        "suggestion", kind="play", seat=2, piece="5-3", from_cell="seat2-4", to_cell="right-1"
    )
    clock.advance(0.1)
    # the referee's move_accepted names no cells: the suggestion's are used
    bus.publish("move_accepted", seat=2, move={"seat": 2, "tile": "3-5", "end": "right"})
    clock.advance(0.1)
    assert lit(frames[-1], leds.palette.last_move) == {"seat2-4", "right-1"}
    assert lit(frames[-1], leds.palette.suggestion) == set()
    # a move that is not the suggested one lights nothing it cannot know
    bus.publish(
        "suggestion", kind="play", seat=3, piece="1-1", from_cell="seat3-1", to_cell="left-1"
    )
    bus.publish("move_accepted", seat=3, move={"seat": 3, "tile": "1-4", "end": "left"})
    clock.advance(0.1)
    assert lit(frames[-1], leds.palette.last_move) == set()
    # a view with an open correction keeps its cells red; null clears them
    bus.publish("view", to_play=0, correction={"cells": ["left-5"], "instruction": "take it back"})
    clock.advance(0.1)
    assert lit(frames[-1], RED) == {"left-5"}
    bus.publish("view", to_play=0, correction=None)
    clock.advance(0.1)
    assert lit(frames[-1], RED) == set()
