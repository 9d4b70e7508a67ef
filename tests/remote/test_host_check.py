"""Who opened the code: the joining table checks that the lobby under a code
is the host table's (docs/remote.md, "Who opened the code"). An impostor
table on the same broker that learned the code opens it first: `play
--remote join` refuses it (exit 3, the reason said) and, when the host's
lobby is there too, joins the host's. A director's code names no key: the
host table's registered key must endorse the lobby's match key."""

from __future__ import annotations

import time

import pytest
from remotekit import Broker, Play

from tablesense.remote.wire import (
    CODE_ALPHABET,
    CODE_LENGTH,
    HostRefused,
    Wire,
    code_of,
    endorse,
    lobby_problem,
    new_code,
)
from tablesense.tournament.broker_client import BrokerURL
from tablesense.tournament.security import TableKey


def _lobby(key: TableKey, code: str, user: str, endorsed_by: TableKey | None = None) -> dict[str, object]:
    body: dict[str, object] = {"type": "lobby", "code": code, "key": key.public, "from": user}
    if endorsed_by is not None:
        body["endorsed"] = endorse(endorsed_by, code, key.public)
    return body


def test_a_code_names_its_host_key_and_nothing_else_passes() -> None:
    host, other = TableKey.from_seed(b"host-table"), TableKey.from_seed(b"impostor-table")
    code = code_of(host.public)
    assert code == code_of(host.public) and len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)
    assert code != code_of(other.public)
    assert len({code_of(TableKey.generate().public) for _ in range(100)}) == 100  # random as the keys are
    assert lobby_problem(code, "table-1", _lobby(host, code, "table-1"), None) is None
    said = lobby_problem(code, "table-3", _lobby(other, code, "table-3"), None)
    assert said is not None and "table-3 opened match" in said and "does not name its key" in said
    assert "without a key" in str(lobby_problem(code, "table-3", {"code": code}, None))
    assert "does not name" in str(lobby_problem(code, "table-3", {"key": "not base64!"}, None))


def test_a_directors_code_needs_the_registered_host_tables_endorsement() -> None:
    registered, match_key, other = TableKey.generate(), TableKey.generate(), TableKey.generate()
    code = new_code()  # drawn by the director: it names no key
    good = _lobby(match_key, code, "table-1", endorsed_by=registered)
    assert lobby_problem(code, "table-1", good, registered.public) is None
    for bad in (
        _lobby(other, code, "table-3"),  # no endorsement
        _lobby(other, code, "table-3", endorsed_by=other),  # endorsed by itself
        {**_lobby(other, code, "table-3"), "endorsed": good["endorsed"]},  # the host's endorsement, another key
    ):
        said = lobby_problem(code, str(bad["from"]), bad, registered.public)
        assert said is not None and "without the endorsement of the host table the director named" in said
    other_code = new_code()
    moved = _lobby(match_key, other_code, "table-1", endorsed_by=registered)
    assert lobby_problem(code, "table-1", {**moved, "code": code}, registered.public) is not None


@pytest.mark.broker
def test_an_impostor_opens_the_code_first_and_the_joining_table_refuses_it(remote_broker: Broker) -> None:
    host_key, impostor_key = TableKey.generate(), TableKey.generate()
    code, director_code, registered = code_of(host_key.public), new_code(), TableKey.generate()
    impostor = Wire(BrokerURL.parse(remote_broker.url_with_password("table-3")), impostor_key)
    host = Wire(BrokerURL.parse(remote_broker.url_with_password("table-1")), host_key)
    guest = Wire(BrokerURL.parse(remote_broker.url_with_password("table-2")), TableKey.generate())
    impostor.connect()
    try:
        impostor.announce(code, {"game": "dominoes", "variant": "pairs-pips", "seats": [1, 3]})
        # only the impostor's lobby under the code: `play --remote join` refuses it, exit 3
        join = Play("--remote", "join", code, "--broker", remote_broker.url("table-2"), "--seed", "5",
                    "--remote-timeout", "60")
        rc, out = join.finish(60)
        said = "".join(join.lines)
        assert rc == 3, said[-2000:]
        assert out == "" and f"not joining: table-3 opened match {code}, but the code does not name its key" in said
        # the host opens it too: the joining table takes the host's lobby, the impostor's is said and left
        host.connect()
        guest.connect()
        host.announce(code, {"variant": "pairs-pips"})
        user, lobby = guest.find(code, timeout=10)
        assert (user, lobby["key"]) == ("table-1", host_key.public)
        assert guest.trusted == {"table-1": host_key.public}
        assert any("table-3 opened match" in x for x in guest.impostors)
        # a director's code: the impostor endorses its own key; the host's table key endorses the host's
        impostor.announce(director_code, {"variant": "pairs-pips"}, endorsed_by=impostor_key)
        with pytest.raises(HostRefused, match="without the endorsement of the host table the director named"):
            guest.find(director_code, timeout=2, host_key=registered.public)
        host.announce(director_code, {"variant": "pairs-pips"}, endorsed_by=registered)
        start = time.monotonic()
        assert guest.find(director_code, timeout=10, host_key=registered.public)[0] == "table-1"
        assert time.monotonic() - start < 5
        impostor.withdraw(director_code)
        impostor.close()
        # a copy of the host's key under another table's name: two hosts, neither is trusted
        impostor = Wire(BrokerURL.parse(remote_broker.url_with_password("table-3")), host_key)
        impostor.connect()
        impostor.announce(code, {"variant": "pairs-pips"})  # over the impostor's own lobby (its topic)
        with pytest.raises(HostRefused, match=f"2 tables opened match {code} as its host \\(table-1, table-3\\)"):
            guest.find(code, timeout=5)
        impostor.withdraw(code)
        host.withdraw(code)
        host.withdraw(director_code)
    finally:
        for wire in (impostor, host, guest):
            wire.close()
