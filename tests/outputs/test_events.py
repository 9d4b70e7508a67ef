"""The event bus: ordering, replay to late subscribers, threads and asyncio."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tablesense.outputs.events import BusClosed, EventBus, TableEvent


def test_publish_numbers_events_and_copies_data() -> None:
    bus = EventBus(clock=lambda: 12.5)
    sub = bus.subscribe()
    data = {"seat": 1, "cells": ["a", "b"]}
    ev = bus.publish("move_accepted", **data)
    data["cells"].append("c")  # a later mutation must not leak into the event
    got = sub.get(timeout=1)
    assert got == ev
    assert got is not None and got.seq == 1 and got.ts == 12.5
    assert got.data == {"seat": 1, "cells": ["a", "b"]}
    assert bus.publish("message", text="x").seq == 2


def test_non_json_data_is_refused_with_the_kind_named() -> None:
    bus = EventBus()
    with pytest.raises(TypeError, match="'view'"):
        bus.publish("view", thing=object())
    with pytest.raises(ValueError):
        bus.publish("")
    assert bus.seq == 0


def test_late_subscriber_gets_latest_view_and_board_status_first() -> None:
    bus = EventBus()
    bus.publish("board_status", board=1, online=True)
    bus.publish("view", hand_no=1)
    bus.publish("board_status", board=2, online=False)
    bus.publish("board_status", board=1, online=False)
    bus.publish("move_accepted", seat=0)
    bus.publish("view", hand_no=2)
    sub = bus.subscribe()
    evs = sub.drain()
    assert [(e.kind, e.data) for e in evs] == [
        ("board_status", {"board": 2, "online": False}),
        ("board_status", {"board": 1, "online": False}),
        ("view", {"hand_no": 2}),
    ]
    assert bus.view == {"hand_no": 2}
    no_replay = bus.subscribe(replay=False)
    assert no_replay.get_nowait() is None


def test_kind_filter_and_bounded_queue_drops_oldest() -> None:
    bus = EventBus()
    sub = bus.subscribe(kinds=["view"], maxsize=3)
    for i in range(5):
        bus.publish("view", n=i)
        bus.publish("message", text=str(i))
    assert [e.data["n"] for e in sub.drain()] == [2, 3, 4]
    assert sub.dropped == 2


def test_get_times_out_and_close_is_idempotent() -> None:
    bus = EventBus()
    sub = bus.subscribe()
    assert sub.get(timeout=0.01) is None
    bus.publish("message", text="kept")
    sub.close()
    sub.close()
    bus.publish("message", text="not delivered")
    got = sub.get(timeout=0.01)
    assert got is not None and got.data["text"] == "kept"
    assert sub.get(timeout=0.01) is None
    assert bus.subscriber_count == 0


def test_threads_publishing_keep_seq_order_per_subscriber() -> None:
    bus = EventBus()
    sub = bus.subscribe(maxsize=10_000)

    def worker(n: int) -> None:
        for i in range(500):
            bus.publish("message", worker=n, i=i)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seqs = [e.seq for e in sub.drain()]
    assert seqs == list(range(1, 2001))


def test_blocking_reader_is_woken_by_another_thread() -> None:
    bus = EventBus()
    sub = bus.subscribe()
    got: list[TableEvent | None] = []
    reader = threading.Thread(target=lambda: got.append(sub.get(timeout=5)))
    reader.start()
    bus.publish("hand_started", hand_no=3)
    reader.join(5)
    assert got and got[0] is not None and got[0].data == {"hand_no": 3}


def test_close_bus_ends_iterators_and_refuses_publish() -> None:
    bus = EventBus()
    sub = bus.subscribe()
    bus.publish("message", text="a")
    out: list[str] = []
    t = threading.Thread(target=lambda: out.extend(e.kind for e in sub))
    t.start()
    bus.close()
    t.join(5)
    assert not t.is_alive() and out == ["message"]
    bus.close()
    with pytest.raises(BusClosed):
        bus.publish("message", text="late")
    with pytest.raises(BusClosed):
        bus.subscribe()


def test_async_iteration_receives_events_from_a_thread() -> None:
    bus = EventBus()

    async def main() -> list[int]:
        sub = bus.subscribe()
        seen: list[int] = []

        def produce() -> None:
            for i in range(50):
                bus.publish("view", n=i)
            bus.close()

        loop = asyncio.get_running_loop()
        fut = loop.run_in_executor(None, produce)
        async for ev in sub:
            seen.append(ev.data["n"])
        await fut
        return seen

    assert asyncio.run(main()) == list(range(50))


def test_async_get_timeout_returns_none_and_cleans_waiter() -> None:
    bus = EventBus()

    async def main() -> tuple[TableEvent | None, TableEvent | None]:
        sub = bus.subscribe()
        first = await sub.aget(timeout=0.02)
        bus.publish("message", text="after")
        second = await sub.aget(timeout=1)
        return first, second

    first, second = asyncio.run(main())
    assert first is None
    assert second is not None and second.data == {"text": "after"}


def test_listener_errors_do_not_reach_the_publisher() -> None:
    bus = EventBus()
    seen: list[str] = []

    def bad(ev: TableEvent) -> None:
        raise RuntimeError("broken output")

    bus.add_listener(bad)
    remove = bus.add_listener(lambda ev: seen.append(ev.kind))
    bus.publish("message", text="x")
    remove()
    remove()
    bus.publish("message", text="y")
    assert seen == ["message"]


def test_event_json_round_trip() -> None:
    ev = TableEvent("view", {"a": [1, 2]}, 7, 1.5)
    assert TableEvent.from_json(ev.to_json()) == ev
    with pytest.raises(ValueError, match="not a table event"):
        TableEvent.from_json({"kind": "view"})
