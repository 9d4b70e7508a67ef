"""The display page in headless Chromium, fed with views of games played by
the real engines: after every move the page shows the right line of play
(arms, orientation, doubles crosswise), turn, counts and scores; an error
message appears and clears; Kems board cards follow every swap."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pagestate import arms, page_state, wait_seq

from tablesense.games.registry import find_game
from tablesense.outputs.events import EventBus
from tablesense.web.preview import displayed_line, dominoes_view, kems_view, random_domino_moves
from tablesense.web.server import DisplayServer, serve_display

DOMINOES = find_game("dominoes").page_facts()
KEMS = find_game("kems").page_facts()


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[EventBus, DisplayServer]]:
    bus = EventBus()
    server = serve_display(bus)
    try:
        yield bus, server
    finally:
        server.stop()
        bus.close()


@pytest.fixture(scope="module")
def page(browser: Any, served: tuple[EventBus, DisplayServer]) -> Iterator[Any]:
    _bus, server = served
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.goto(server.url)
    pg.wait_for_function("document.body.dataset.conn === 'live'", timeout=5000)
    yield pg
    ctx.close()
    assert errors == [], f"the page reported errors: {errors}"


def publish(bus: EventBus, view: dict[str, Any]) -> int:
    return bus.publish("view", **view).seq


def check_dominoes(state: dict[str, Any], hand: Any) -> None:
    assert state["error"] == ""
    assert arms(state) == displayed_line(hand)
    by_arm = {(t["arm"], t["index"]): t for t in state["line"]}
    for end in ("left", "right"):
        for i, lp in enumerate(hand.arm(end)):
            shown = by_arm[(end, i)]
            assert int(shown["outer"]) == lp.outer and int(shown["inner"]) == lp.inner
            assert shown["crosswise"] == lp.tile.is_double
    if hand.line:
        center = by_arm[("center", 0)]
        left_num, right_num = (int(x) for x in center["shown"].split("-"))
        if hand.arm("left"):
            assert left_num == hand.arm("left")[0].inner
        if hand.arm("right"):
            assert right_num == hand.arm("right")[0].inner
        assert center["crosswise"] == hand.line[0].tile.is_double
    counts = [int(s["count"]) for s in state["seats"]]
    assert counts == [len(h) for h in hand.hands]
    turns = [s["seat"] for s in state["seats"] if s["turn"]]
    assert turns == ([] if hand.is_over else [hand.to_play])


def test_dominoes_hand_move_by_move(
    page: Any, served: tuple[EventBus, DisplayServer], artifacts: Path
) -> None:
    from tablesense.games.dominoes import DominoMatch, move_to_json

    bus, _ = served
    rng = random.Random(20261129)
    match = DominoMatch("pairs-pips")
    hand = match.new_hand(rng=rng)
    state = wait_seq(page, publish(bus, dominoes_view(match, hand, facts=DOMINOES, hand_no=1)))
    check_dominoes(state, hand)
    assert state["lineHidden"] is False and state["boardHidden"] is True
    assert state["hand"] == "Hand 1" and state["target"].startswith("to ")
    assert state["scoreLabels"] == ["Ana & Carla", "Bruno & Davi"]
    page.screenshot(path=str(artifacts / "dominoes-engine-start.png"))

    step = 0
    while not hand.is_over:
        (move,) = random_domino_moves(hand, rng, 1)
        step += 1
        seq = publish(bus, dominoes_view(match, hand, facts=DOMINOES, hand_no=1, last_move=move_to_json(move)))
        state = wait_seq(page, seq)
        check_dominoes(state, hand)
        if type(move).__name__ == "Play":
            assert str(move.tile) in state["lastMove"]
        if step == 6:
            page.screenshot(path=str(artifacts / "dominoes-engine-mid.png"))
            # a bad move: the instruction shows in red, then clears
            bad = {"text": "Put 6-6 back on Bruno's rack", "level": "error"}
            state = wait_seq(page, publish(bus, dominoes_view(match, hand, facts=DOMINOES, hand_no=1, message=bad)))
            assert state["message"] == {"hidden": False, "text": bad["text"], "level": "error"}
            check_dominoes(state, hand)  # the game state did not change
            page.screenshot(path=str(artifacts / "dominoes-engine-error.png"))
            state = wait_seq(page, publish(bus, dominoes_view(match, hand, facts=DOMINOES, hand_no=1)))
            assert state["message"]["hidden"] is True and state["message"]["text"] == ""
    result = match.finish_hand()
    res = {"hand_no": 1, **result.to_json()}
    state = wait_seq(page, publish(bus, dominoes_view(match, hand, facts=DOMINOES, hand_no=1, result=res)))
    assert state["scores"] == [
        str(int(s)) if float(s).is_integer() else str(s) for s in match.score
    ]
    assert state["result"].startswith("Hand 1:")
    if result.winner is not None:
        assert ["Ana & Carla", "Bruno & Davi"][result.winner] + " win" in state["result"]
    page.screenshot(path=str(artifacts / "dominoes-engine-end.png"))
    # The next hand has no line yet: the last hand's final line is shown, dimmed.
    final = displayed_line(hand)
    next_hand = match.new_hand(rng=rng)
    view = dominoes_view(match, next_hand, facts=DOMINOES, hand_no=2, result=res)
    view["last_line"] = {**dominoes_view(match, hand, facts=DOMINOES, hand_no=1)["line"], "hand_no": 1}
    state = wait_seq(page, publish(bus, view))
    assert state["line"] == []
    assert sorted(state["previousLine"]) == sorted(final["center"] + final["left"] + final["right"])
    assert page.locator(".line-caption").inner_text() == "Hand 1: the final line"
    page.screenshot(path=str(artifacts / "dominoes-engine-next-hand.png"))
    random_domino_moves(next_hand, rng, 1)
    state = wait_seq(
        page,
        publish(
            bus, {**dominoes_view(match, next_hand, facts=DOMINOES, hand_no=2), "last_line": view["last_line"]}
        ),
    )
    assert state["previousLine"] == [] and len(state["line"]) == 1


def test_long_line_turns_and_phone_layout(
    page: Any, served: tuple[EventBus, DisplayServer], artifacts: Path
) -> None:
    """A line long enough to turn at both ends still shows every tile in order."""
    from tablesense.games.dominoes import DominoMatch

    bus, _ = served
    for seed in range(50):
        match = DominoMatch("pairs-pips")
        hand = match.new_hand(rng=random.Random(seed))
        random_domino_moves(hand, random.Random(seed), 200)
        if len(hand.arm("left")) >= 6 and len(hand.arm("right")) >= 6:
            break
    else:  # pragma: no cover - the seeds above always give one
        pytest.fail("no seed gave a long line")
    state = wait_seq(page, publish(bus, dominoes_view(match, hand, facts=DOMINOES, hand_no=1)))
    check_dominoes(state, hand)
    # every tile lies inside the drawing, and no two tiles overlap
    boxes = page.evaluate(
        "() => [...document.querySelectorAll('#line g.tile rect')].map((r) => {"
        " const b = r.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; })"
    )
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            overlap_x = min(a[2], b[2]) - max(a[0], b[0])
            overlap_y = min(a[3], b[3]) - max(a[1], b[1])
            assert overlap_x <= 0.5 or overlap_y <= 0.5, (a, b)
    page.screenshot(path=str(artifacts / "dominoes-engine-long-line.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    state = page_state(page)
    check_dominoes(state, hand)
    page.screenshot(path=str(artifacts / "dominoes-engine-phone.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 720})


def test_kems_round_swap_by_swap(
    page: Any, served: tuple[EventBus, DisplayServer], artifacts: Path
) -> None:
    from tablesense.games.kems import KemsMatch, event_to_json

    bus, _ = served
    rng = random.Random(5)
    match = KemsMatch()
    rnd = match.new_hand(rng=rng)
    while rnd.is_misdeal:
        match.finish_hand()
        rnd = match.new_hand(rng=rng)
    hand_no = len(match.hands) + 1
    state = wait_seq(page, publish(bus, kems_view(match, rnd, facts=KEMS, hand_no=hand_no)))
    assert state["game"] == "Kems" and state["lineHidden"] is True and state["boardHidden"] is False
    assert state["board"] == [str(c) for c in rnd.board]
    for step in range(8):
        seat = rng.randrange(rnd.seats)
        swap = rng.choice(rnd.legal_swaps(seat))
        rnd.play(swap)
        seq = publish(bus, kems_view(match, rnd, facts=KEMS, hand_no=hand_no, last_move=event_to_json(swap)))
        state = wait_seq(page, seq)
        assert state["board"] == [str(c) for c in rnd.board]
        assert [int(s["count"]) for s in state["seats"]] == [len(h) for h in rnd.hands]
        assert not any(s["turn"] for s in state["seats"])  # Kems is simultaneous
        # cards as people write them: 10♥, Q♠ (never TH, QS)
        assert f"gave {shown(swap.give)}, took {shown(swap.take)}" in state["lastMove"]
        if step == 3:
            bad = {"text": "Ana holds 5 cards: put one back on the board", "level": "error"}
            state = wait_seq(
                page, publish(bus, kems_view(match, rnd, facts=KEMS, hand_no=hand_no, message=bad))
            )
            assert state["message"]["text"] == bad["text"] and state["message"]["level"] == "error"
            page.screenshot(path=str(artifacts / "kems-engine-error.png"))
            state = wait_seq(page, publish(bus, kems_view(match, rnd, facts=KEMS, hand_no=hand_no)))
            assert state["message"]["hidden"] is True
    assert state["scores"] == ["0", "0"]
    page.screenshot(path=str(artifacts / "kems-engine.png"))


SIGNS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


def shown(card: Any) -> str:
    """A card as the page writes it: ``TH`` → ``10♥``."""
    code = str(card)
    return ("10" if code[0] == "T" else code[0]) + SIGNS[code[1]]


def test_board_offline_and_reconnect_after_server_side_close(
    page: Any, served: tuple[EventBus, DisplayServer]
) -> None:
    bus, server = served
    view = {
        "game": "kems",
        "board": ["7S", "8S", "9S", "TS"],
        "seats": [],
        "scores": [1, 2],
        "boards": [{"id": 1, "online": True}, {"id": 2, "online": False}],
    }
    state = wait_seq(page, publish(bus, view))
    assert state["boards"] == [[1, True], [2, False]]
    # the server ends every live stream (as on shutdown): the page reconnects
    # by itself and draws the next view
    hub = server.app.state.hub
    hub.close_clients()
    page.wait_for_function("document.body.dataset.conn === 'live'", timeout=8000)
    view["boards"] = [{"id": 1, "online": True}, {"id": 2, "online": True}]
    state = wait_seq(page, publish(bus, view))
    assert state["boards"] == [[1, True], [2, True]]


@pytest.mark.parametrize("seats", [6, 8])
def test_six_and_eight_seat_kems_fit_a_kiosk_screen(
    page: Any, served: tuple[EventBus, DisplayServer], artifacts: Path, seats: int
) -> None:
    from tablesense.games.kems import KemsMatch

    bus, _ = served
    rng = random.Random(8)
    match = KemsMatch(seats=seats)
    rnd = match.new_hand(rng=rng)
    while rnd.is_misdeal:
        match.finish_hand()
        rnd = match.new_hand(rng=rng)
    view = kems_view(match, rnd, facts=KEMS, hand_no=len(match.hands) + 1)
    view["message"] = {"text": "Kems! the partner may still call double", "level": "info"}
    for seat in view["seats"]:
        seat["kind"] = "bot"  # the demo's table: a "computer" badge on every seat
    state = wait_seq(page, publish(bus, view))
    names = ["Ana", "Bruno", "Carla", "Davi", "Eva", "Fabio", "Gil", "Hugo"][:seats]
    assert [s["name"] for s in state["seats"]] == names
    teams = seats // 2
    assert state["scoreLabels"] == [f"{names[t]} & {names[t + teams]}" for t in range(teams)]
    assert state["board"] == [str(c) for c in rnd.board]
    # every seat is visible without scrolling on a 1280x720 kiosk, across too
    height, inner, width, inner_w = page.evaluate(
        "() => [document.documentElement.scrollHeight, window.innerHeight,"
        " document.documentElement.scrollWidth, window.innerWidth]"
    )
    assert height <= inner and width <= inner_w
    for seat in page.query_selector_all("#seats .seat"):
        box = seat.bounding_box()
        assert box is not None and box["x"] + box["width"] <= inner_w
    # no corner index upside down: the display is read from one side
    rotated = page.evaluate(
        "() => [...document.querySelectorAll('#board .card .rank')]"
        ".filter((r) => getComputedStyle(r).transform !== 'none').length"
    )
    assert rotated == 0
    page.screenshot(path=str(artifacts / f"kems-{seats}-seats.png"))


@pytest.mark.parametrize(("lang", "shown"), [("en", "3.5"), ("pt-BR", "3,5"), ("ms", "3.5")])
def test_a_half_point_reads_as_the_table_language_writes_it(browser: Any, lang: str, shown: str) -> None:
    # brazilian-points scores halves (a blocked hand); "3.5" reads as
    # thirty-five hundred in Portuguese
    bus = EventBus()
    server = serve_display(bus, lang=lang)
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        pg = ctx.new_page()
        pg.goto(server.url)
        pg.wait_for_function("document.body.dataset.conn === 'live'", timeout=5000)
        view = {"game": "kems", "board": ["7S", "8S", "9S", "TS"], "seats": [], "scores": [3.5, 1],
                "target": 6}
        state = wait_seq(pg, publish(bus, view))
        assert state["scores"] == [shown, "1"]
    finally:
        ctx.close()
        server.stop()
        bus.close()
