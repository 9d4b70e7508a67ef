"""The table-top routes over their injected site (web/tabletop.py
``TabletopSite``/``TabletopRoutes``), with a table top that records what it
is asked: who may see and move what, the coach on a seat's own view only,
and the live view's presence (a seat's page arrives, and leaves when its tab
closes: the shared WebSocket helper of web/sockets.py releases it)."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tablesense.web.tabletop import BadField, KeyRefused, TableKeys, TabletopRoutes, TabletopSite


class Top:
    """Two seats, seat 0 a person's; every call recorded."""

    seats = [0]
    open_hands = True
    dealer = "person"
    geometry = SimpleNamespace(seats=[SimpleNamespace(name="south"), SimpleNamespace(name="north")])

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def view(self, who: int | None, open_view: bool) -> dict[str, Any]:
        return {"who": who, "open": open_view, "version": 7}

    def layout(self) -> dict[str, Any]:
        return {"game": "dominoes", "seats": [{"index": 0, "name": "south"}, {"index": 1, "name": "north"}]}

    def lift(self, hand: str, cell: Any, *, from_stock: bool = False) -> str:
        self.calls.append(("lift", hand, cell, from_stock))
        return "6-6"

    def press(self, seat: int, kind: str, hold: float) -> None:
        self.calls.append(("press", seat, kind, hold))

    def scenario(self) -> dict[str, Any]:
        return {"tags": "every one"}


class Coach:
    coach = True

    def hint(self, seat: int) -> str:
        return f"hint for {seat}"

    def review(self, seat: int) -> str:
        return f"review for {seat}"

    def ask(self, seat: int) -> None:
        pass


class Presence:
    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []
        self.left = threading.Event()

    def arrive(self, seat: int) -> None:
        self.seen.append(("arrive", seat))

    def leave(self, seat: int) -> None:
        self.seen.append(("leave", seat))
        self.left.set()


@pytest.fixture
def site() -> TabletopSite:
    return TabletopSite(Top(), TableKeys([0], open_hands=True), Coach(), Presence())


def test_who_asks_is_decided_by_the_key(site: TabletopSite) -> None:
    key, open_key = site.keys.seats[0], site.keys.open
    assert site.who("0", None, key) == (0, False)
    assert site.who(None, "1", open_key) == (None, True)
    assert site.who(None, None, None) == (None, False), "no seat: the public view"
    with pytest.raises(KeyRefused, match="south's seat"):
        site.who("0", None, "guess")
    with pytest.raises(ValueError, match="north's seat is not open to a person"):
        site.who("1", None, key)
    with pytest.raises(KeyRefused, match="open-hands view"):
        site.who(None, "1", key)


def test_the_coach_is_on_a_seats_own_view_only(site: TabletopSite) -> None:
    assert site.seen_by(0, False)["coach"] == {"on": True, "hint": "hint for 0", "review": "review for 0"}
    assert "coach" not in site.seen_by(None, False)
    assert "coach" not in site.seen_by(None, True)


def test_the_public_view_moves_nothing_and_fields_are_typed(site: TabletopSite) -> None:
    assert site.hand_for({"seat": 0, "key": site.keys.seats[0]}) == "seat:0"
    assert site.hand_for({"open": True, "key": site.keys.open}) == "open"
    with pytest.raises(KeyRefused, match="the public view moves nothing"):
        site.hand_for({})
    with pytest.raises(BadField, match="cell must be a cell name"):
        site.hand_for({"seat": 0, "key": site.keys.seats[0], "cell": ["a"]})


def test_the_page_context_of_a_wrong_key_is_the_public_view_and_why(site: TabletopSite) -> None:
    context = site.page_context("en", "0", None, "guess")
    assert context["seat"] == "" and not context["chooser"] and "south's seat" in context["refused"]
    mine = site.page_context("en", "0", None, site.keys.seats[0])
    assert mine["seat"] == "0" and mine["refused"] == "" and [s["index"] for s in mine["seats"]] == [0]


def _client(site: TabletopSite) -> TestClient:
    app = FastAPI()
    app.include_router(TabletopRoutes(site).router())
    return TestClient(app, raise_server_exceptions=False)


def test_the_routes_answer_over_the_site(site: TabletopSite) -> None:
    client, top, key = _client(site), site.top, site.keys.seats[0]
    assert client.post("/tabletop/api/lift", json={"seat": 0, "key": key, "cell": "seat0-1"}).json() == {
        "ok": True, "piece": "6-6"}
    refused = client.post("/tabletop/api/press", json={"seat": 0, "key": key, "button_seat": 1, "kind": "main"})
    assert refused.status_code == 403 and "north's button" in refused.json()["error"]
    assert client.post("/tabletop/api/press", json={"seat": 0, "key": key, "kind": "main", "hold": 99}).json()["ok"]
    assert top.calls == [("lift", "seat:0", "seat0-1", False), ("press", 0, "main", 3.0)], "a hold is capped"
    assert client.get("/tabletop/api/state", params={"seat": 0, "key": "x"}).status_code == 403
    assert client.get("/tabletop/api/scenario", params={"key": key}).status_code == 403
    assert client.get("/tabletop/api/scenario", params={"key": site.keys.open}).json() == {"tags": "every one"}
    assert client.get("/tabletop", params={"seat": 0, "key": "x"}).status_code == 403


def test_a_seats_live_view_arrives_and_leaves_with_its_tab(site: TabletopSite) -> None:
    client, presence = _client(site), site.presence
    with client.websocket_connect(f"/tabletop/ws?seat=0&key={site.keys.seats[0]}") as socket:
        first = socket.receive_json()
        assert first["who"] == 0 and "version" not in first and first["coach"]["hint"] == "hint for 0"
        assert presence.seen == [("arrive", 0)]
    assert presence.left.wait(5.0), "the closed tab released its seat"
    assert presence.seen == [("arrive", 0), ("leave", 0)]
    with client.websocket_connect("/tabletop/ws") as socket:  # the public view: nobody arrives
        assert socket.receive_json()["who"] is None
    assert presence.seen == [("arrive", 0), ("leave", 0)]
