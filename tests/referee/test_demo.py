"""``tablesense demo``: same seed, same record (with or without link faults);
every game and variant plays; the display page is served."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from tablesense.games.record import replay
from tablesense.referee.demo import DemoConfig, run_demo


def demo_record(*args: str, timeout: float = 150) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "tablesense.cli", "demo", "--no-web", *args, "--timeout", "120"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_same_seed_same_record_with_and_without_link_faults() -> None:
    """On the virtual table (real firmware behind pseudo-terminals, the link,
    the referee): faults on the link, and a board unplugged mid-hand (play
    pauses, then resumes), must not change a single move."""
    clean = demo_record("--hands", "1", "--seed", "3")
    assert len(clean["hands"]) == 1 and clean["hands"][0]["moves"]
    assert replay(clean).to_json()["ok"] is True

    def unplug_later(world: Any) -> None:
        def run() -> None:
            time.sleep(4.0)
            world.unplug(2)
            time.sleep(2.0)
            world.replug(2)

        threading.Thread(target=run, daemon=True).start()

    bus_messages: list[str] = []
    faulty = run_demo(
        DemoConfig(hands=1, seed=3, web=False, link_faults=0.02, timeout=120),
        on_world=unplug_later,
        log=_Collect(bus_messages),
    )
    assert faulty.record == clean
    # the demo's own virtual board: never sent to a USB cable (issue 31)
    assert any("virtual board 2 is not answering" in m for m in bus_messages), bus_messages[-5:]
    assert not any("USB" in m for m in bus_messages)


class _Collect:
    """A console stand-in that keeps what the demo prints."""

    def __init__(self, into: list[str]) -> None:
        self.into = into

    def print(self, text: str, **kwargs: Any) -> None:
        self.into.append(str(text))


@pytest.mark.parametrize(
    ("game", "variant", "seats", "hands"),
    [
        ("dominoes", "pips-two-player", None, 1),
        ("dominoes", "brazilian-points", 3, 1),
        ("kems", "classic", 8, 2),
    ],
)
def test_every_variant_plays_on_the_table(
    game: str, variant: str, seats: int | None, hands: int
) -> None:
    cfg = DemoConfig(
        game=game,
        variant=variant,
        seats=seats,
        hands=hands,
        seed=7,
        web=False,
        link="direct",
        timeout=60,
    )
    first = run_demo(cfg)
    assert first.hands_played == hands, first.errors
    assert first.errors == []
    result = replay(first.record).to_json()
    assert result["ok"] is True
    assert len(result["hands"]) == hands


def test_display_page_is_served_and_follows_the_match() -> None:
    import httpx

    seen: dict[str, Any] = {}

    def watch(url: str | None) -> None:
        def poll() -> None:
            assert url is not None
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    r = httpx.get(url.rstrip("/") + "/api/view", timeout=2)
                    view = r.json().get("view")
                    if view and view.get("moves", 0) >= 1:
                        seen["view"] = view
                        seen["page"] = httpx.get(url, timeout=2).status_code
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)

        seen["url"] = url
        threading.Thread(target=poll, daemon=True).start()

    cfg = DemoConfig(
        game="kems", hands=2, seed=4, web=True, port=0, speed=40, link="direct", timeout=60
    )
    result = run_demo(cfg, on_ready=watch)
    assert result.url and result.url.startswith("http://127.0.0.1:")
    deadline = time.monotonic() + 5
    while "view" not in seen and time.monotonic() < deadline:
        time.sleep(0.1)
    view = seen.get("view")
    assert view is not None, "the page never showed a move"
    assert seen["page"] == 200
    assert view["game"] == "kems" and len(view["board"]) == 4 and len(view["seats"]) == 4


@pytest.mark.slow
def test_soak_whole_hands_with_heavier_link_faults() -> None:
    clean = demo_record("--hands", "3", "--seed", "9", timeout=400)
    faulty = demo_record("--hands", "3", "--seed", "9", "--link-faults", "0.02", timeout=400)
    assert faulty == clean


@pytest.mark.slow
@pytest.mark.parametrize(
    ("game", "variant", "seats"),
    [
        ("dominoes", "pairs-pips", None),
        ("dominoes", "pips-two-player", None),
        ("dominoes", "brazilian-points", None),
        ("dominoes", "brazilian-points", 3),
        ("kems", "classic", 4),
        ("kems", "classic", 6),
        ("kems", "classic", 8),
    ],
)
def test_whole_match_to_the_target(game: str, variant: str, seats: int | None) -> None:
    cfg = DemoConfig(
        game=game,
        variant=variant,
        seats=seats,
        seed=2,
        web=False,
        link="direct",
        timeout=400,
        fast=True,
    )
    result = run_demo(cfg)
    assert result.match_over, result.errors
    replayed = replay(result.record).to_json()
    assert replayed["ok"] is True and replayed["winner"] is not None
