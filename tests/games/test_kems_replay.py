"""Replay of Kems records: every shipped example, and every way a record can
be wrong (format errors, exit 2; illegal steps, exit 1)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tablesense.games.common import IllegalStepError, RecordFormatError
from tablesense.games.kems import KemsRound, replay_record
from testsupport import REPO

EXAMPLES = REPO / "docs" / "examples"

# outcome/label of each round, final score and match winner of each example
EXPECTED: dict[str, tuple[list[tuple[str, str]], list[int], int | None]] = {
    "kems-match.json": (
        [("kems", "kems")] * 3 + [("redeal", "misdeal")] + [("kems", "kems")] * 2,
        [2, 3],
        1,
    ),
    "kems-double.json": ([("double", "double kems")], [3, 0], None),
    "kems-contre.json": ([("contre", "contre")], [0, 1], None),
    "kems-failed-contre.json": ([("contre", "failed contre")], [1, 0], None),
    "kems-redeal.json": ([("redeal", "misdeal"), ("kems", "kems")], [1, 0], None),
    "kems-six-seats.json": ([("contre", "contre"), ("kems", "kems")], [0, 0, 2], 2),
}


def load(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / name).read_text())


def test_every_kems_example_is_covered() -> None:
    shipped = {p.name for p in EXAMPLES.glob("kems-*.json")}
    assert shipped == set(EXPECTED) | {"kems-illegal.json", "kems-malformed.json"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_replays(name: str) -> None:
    rounds, score, winner = EXPECTED[name]
    result = replay_record(load(name)).to_json()
    assert [(h["outcome"], h["label"]) for h in result["hands"]] == rounds
    assert result["score"] == score
    assert result["winner"] == winner
    assert result["ok"] is True


def test_six_seat_example_uses_the_32_card_deck() -> None:
    record = load("kems-six-seats.json")
    assert record["options"]["deck"] == 32
    first = record["hands"][0]
    assert len(first["deal"]) == 6
    assert len(first["stock"]) == 32 - 6 * 4 - 4


def test_six_seats_are_dealt_from_32_cards_by_default() -> None:
    """The record format (changed 2026-12-01): with 6 seats and no ``deck``
    option the deck is the 32-card one (six hands and a board fit)."""
    record = load("kems-six-seats.json")
    del record["options"]["deck"]
    assert replay_record(record).winner == 2
    record["options"]["deck"] = 52
    with pytest.raises(RecordFormatError, match="52"):
        replay_record(record)


def test_illegal_example() -> None:
    with pytest.raises(IllegalStepError) as err:
        replay_record(load("kems-illegal.json"))
    assert (err.value.hand, err.value.move) == (0, 1)
    assert "no direct swap between partners" in err.value.message


def test_malformed_example() -> None:
    with pytest.raises(RecordFormatError, match="'10S' is not a card"):
        replay_record(load("kems-malformed.json"))


def base() -> dict[str, Any]:
    return load("kems-contre.json")


def mutate(path: list[Any], value: Any, delete: bool = False) -> dict[str, Any]:
    record = copy.deepcopy(base())
    node = record
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return record


@pytest.mark.parametrize(
    ("path", "value", "delete", "message"),
    [
        (["variant"], "blitz", False, "unknown Kems variant"),
        (["options"], {"deck": 40}, False, "options: option deck"),
        (["options"], {"jokers": True}, False, "unknown Kems option"),
        (["hands"], {}, False, "hands must be a list"),
        (["hands", 0, "stock"], None, True, "has no 'stock'"),
        (["hands", 0, "x-table"], "T1", False, None),
        (["hands", 0, "dealer"], 0, False, "unknown field 'dealer'"),
        (["hands", 0, "deal", 0, 0], "9X", False, "not a card"),
        (["hands", 0, "deal", 0, 0], "2S", False, "not a card of the 32-card deck"),
        (["hands", 0, "deal", 0, 0], "9H", False, "appears twice"),
        (["hands", 0, "deal", 3], None, True, "Kems is played by 4, 6 or 8 seats"),
        (["hands", 0, "board"], ["9D"], False, "board holds 1 card"),
        (["hands", 0, "events", 0], {"seat": 0}, False, "events\\[0\\]"),
        (["unexpected"], 1, False, "unknown field 'unexpected'"),
    ],
)
def test_format_errors(path: list[Any], value: Any, delete: bool, message: str | None) -> None:
    record = mutate(path, value, delete)
    if message is None:
        replay_record(record)  # x- fields are accepted
        return
    with pytest.raises(RecordFormatError, match=message):
        replay_record(record)


def test_a_round_must_end_with_a_call() -> None:
    record = base()
    record["hands"][0]["events"].pop()
    with pytest.raises(IllegalStepError) as err:
        replay_record(record)
    assert (err.value.hand, err.value.move) == (0, 3)
    assert "ends at its first call" in err.value.message


def test_nothing_follows_the_call() -> None:
    record = base()
    record["hands"][0]["events"].append({"refresh": True})
    with pytest.raises(IllegalStepError) as err:
        replay_record(record)
    assert (err.value.hand, err.value.move) == (0, 4)
    assert "round is over" in err.value.message


def test_a_misdeal_round_has_no_events() -> None:
    record = load("kems-redeal.json")
    record["hands"][0]["events"] = [{"refresh": True}]
    with pytest.raises(IllegalStepError) as err:
        replay_record(record)
    assert (err.value.hand, err.value.move) == (0, 0)
    assert "seat 0 was dealt three 9s" in err.value.message


def test_no_round_after_the_match_is_won() -> None:
    record = load("kems-six-seats.json")
    record["hands"].append(copy.deepcopy(record["hands"][0]))
    with pytest.raises(IllegalStepError) as err:
        replay_record(record)
    assert (err.value.hand, err.value.move) == (2, 0)
    assert "match was over" in err.value.message


def test_every_round_has_the_same_seats() -> None:
    record = load("kems-redeal.json")
    record["hands"][1]["deal"].append(["2S", "3S", "4S", "5S"])
    with pytest.raises(RecordFormatError, match="this match has 4 seats"):
        replay_record(record)


def test_a_record_without_rounds_is_malformed() -> None:
    """As for dominoes: a record holds at least one round (exit 2)."""
    with pytest.raises(RecordFormatError, match="at least one round"):
        replay_record(
            {
                "format": "tablesense.record/1",
                "game": "kems",
                "variant": "classic",
                "options": {},
                "hands": [],
            }
        )


def test_written_rounds_read_back() -> None:
    rnd = KemsRound.from_text(
        ["9S 9H KS KH", "7S 8S TS JS", "QS QH AS AH", "7H 8H TH JH"], "9D 9C QD QC"
    )
    obj = rnd.to_json()
    assert obj["deal"][0] == ["9S", "9H", "KS", "KH"]
    assert obj["board"] == ["9D", "9C", "QD", "QC"]
    assert len(obj["stock"]) == 12 and obj["events"] == []


def test_examples_are_valid_json_files(tmp_path: Path) -> None:
    for path in EXAMPLES.glob("kems-*.json"):
        json.loads(path.read_text(encoding="utf-8"))
