"""The table-top API checks every field's type before a hand moves: a wrong
type is a 400 naming the field, never a 500 with a traceback."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tablesense.web.tabletop import TableKeys, tabletop_router


class Top:
    """A table top that records what the hands were asked to do."""

    seats = [0]
    open_hands = False
    dealer = "person"

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def lift(self, hand: str, cell: Any, *, from_stock: bool = False) -> str:
        self.calls.append(("lift", cell))
        return "6-6"

    def lay(self, hand: str, piece: str, cell: Any) -> None:
        self.calls.append(("lay", cell))

    def press(self, seat: int, kind: str, hold: float) -> None:
        self.calls.append(("press", kind))


@pytest.fixture
def table() -> tuple[TestClient, Top, str]:
    top = Top()
    keys = TableKeys([0])
    app = FastAPI()
    app.include_router(tabletop_router(top, keys))
    return TestClient(app, raise_server_exceptions=False), top, keys.seats[0]


@pytest.mark.parametrize(("path", "fields", "named"), [
    ("lift", {"cell": ["seat0-1"]}, "cell"),
    ("lift", {"cell": {"x": 1}}, "cell"),
    ("lift", {"cell": "seat0-1", "stock": "yes"}, "stock"),
    ("lay", {"piece": ["6-6"], "cell": "seat0-1"}, "piece"),
    ("press", {"kind": 5, "button_seat": 0}, "kind"),
    ("press", {"kind": "pass", "hold": "long"}, "hold"),
    ("lift", {"key": ["k"], "cell": "seat0-1"}, "key"),
    ("lift", {"seat": [0], "cell": "seat0-1"}, "seat"),
])
def test_a_wrong_type_is_a_400_naming_the_field(table: tuple[TestClient, Top, str], path: str,
                                                fields: dict[str, Any], named: str) -> None:
    client, top, key = table
    r = client.post(f"/tabletop/api/{path}", json={"seat": 0, "key": key, **fields})
    assert r.status_code == 400, r.text
    assert r.json()["ok"] is False and r.json()["error"].startswith(named + " must be")
    assert top.calls == [], "a badly typed request reached the hands"


def test_well_typed_requests_still_move_the_hands(table: tuple[TestClient, Top, str]) -> None:
    client, top, key = table
    assert client.post("/tabletop/api/lift", json={"seat": "0", "key": key, "cell": "seat0-1"}).json()["ok"]
    assert client.post("/tabletop/api/lay", json={"seat": 0, "key": key, "piece": "6-6", "cell": None}).json()["ok"]
    assert client.post("/tabletop/api/press", json={"seat": 0, "key": key, "button_seat": 0, "kind": "pass",
                                                    "hold": 1.5}).json()["ok"]
    assert [c[0] for c in top.calls] == ["lift", "lay", "press"]
