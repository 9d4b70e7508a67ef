"""Game records (the shared spec): common fields, dispatch, the shipped
dominoes examples, and the spec's dominoes details (ends, openings, hand ends)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from tablesense.games.common import IllegalStepError, RecordFormatError
from tablesense.games.dominoes import DominoMatch, Play, Tile
from tablesense.games.record import dumps, load, loads, replay, write
from testsupport import REPO

EXAMPLES = Path(REPO) / "docs" / "examples"
DOMINO_EXAMPLES = sorted(
    p for p in EXAMPLES.glob("*.json") if p.name.split("-")[0] in ("pairs", "pips", "brazilian")
)


def W(x: int | None) -> int:
    """The value of an optional the test knows is set (for the type checker)."""
    assert x is not None
    return x


def a_record(variant: str = "pairs-pips", seed: int = 1, hands: int = 2, **options) -> dict:
    rng = random.Random(seed)
    m = DominoMatch(variant, options or None)
    for _ in range(hands):
        if m.is_over:
            break
        h = m.new_hand(rng)
        h.playout(rng)
        m.finish_hand()
    return m.to_record()


# -- the shipped examples


def test_every_variant_ships_examples() -> None:
    names = {p.name for p in DOMINO_EXAMPLES}
    for variant in ("pairs-pips", "pips-two-player", "brazilian-points"):
        for kind in ("match", "blocked", "illegal", "malformed"):
            assert f"{variant}-{kind}.json" in names


@pytest.mark.parametrize("path", DOMINO_EXAMPLES, ids=lambda p: p.name)
def test_examples_replay_as_their_name_says(path: Path) -> None:
    obj = load(path)
    if path.stem.endswith("-illegal"):
        with pytest.raises(IllegalStepError) as info:
            replay(obj)
        assert info.value.message and info.value.hand >= 0 and info.value.move >= 0
    elif path.stem.endswith("-malformed"):
        with pytest.raises(RecordFormatError):
            replay(obj)
    else:
        out = replay(obj).to_json()
        assert out["ok"] is True and len(out["hands"]) == len(obj["hands"])
        if path.stem.endswith("-match"):
            assert out["winner"] is not None


def test_example_files_are_what_the_writer_writes() -> None:
    """Examples stay in the canonical form: low number first, 'end' named."""
    for path in DOMINO_EXAMPLES:
        if path.stem.endswith(("-illegal", "-malformed")):
            continue
        text = path.read_text()
        assert dumps(json.loads(text)) == text


# -- common fields


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: r.pop("format"), "missing"),
        (lambda r: r.update(format="tablesense.record/2"), "format"),
        (lambda r: r.update(game="chess"), "game"),
        (lambda r: r.update(variant=3), "variant"),
        (lambda r: r.update(variant="fives"), "variant"),
        (lambda r: r.update(options=[]), "options"),
        (lambda r: r.update(options={"speed": 3}), "unknown option"),
        (lambda r: r.update(hands={}), "hands"),
        (lambda r: r.update(hands=[]), "at least one hand"),
        (lambda r: r.update(players=["a"]), "unknown fields"),
        (lambda r: r["hands"][0].update(seats=4), "unknown fields"),
        (lambda r: r["hands"][0].pop("moves"), "required"),
        (lambda r: r["hands"][0]["deal"].pop(), "played by 4 seats, not 3"),
        (lambda r: r["hands"][1]["deal"].pop(), "one list of tiles per seat"),
        (lambda r: r["hands"][0]["deal"][0].__setitem__(0, "6-7"), "0..6"),
        (lambda r: r["hands"][0]["moves"].__setitem__(0, {"seat": 0}), "move 0"),
        (lambda r: r["hands"][0]["moves"].__setitem__(1, {"seat": 9, "pass": True}), "no seat 9"),
        (lambda r: r["hands"][1]["deal"][0].__setitem__(0, r["hands"][1]["deal"][1][0]), "twice"),
    ],
)
def test_records_that_do_not_fit_the_format_are_format_errors(change, message) -> None:
    rec = a_record()
    change(rec)
    with pytest.raises(RecordFormatError, match=message):
        replay(rec)


def test_writer_fields_are_ignored_and_missing_options_take_defaults() -> None:
    rec = a_record()
    rec["x-table"] = "club 3"
    rec["hands"][0]["x-started"] = "2026-11-29T15:00:00Z"
    rec["hands"][0]["moves"][0]["x-ms"] = 900
    base = replay(a_record())
    assert replay(rec) == base
    del rec["options"]
    assert replay(rec) == base  # the record used the defaults


@pytest.mark.parametrize(
    "text",
    [b"", b"{", b"[]", b"\xff\xfe", b'{"format": NaN}', b'{"a": 1, "a": 2}', b"null"],
)
def test_text_that_is_not_one_json_object_is_a_format_error(text: bytes) -> None:
    with pytest.raises(RecordFormatError):
        replay(text)


def test_replay_accepts_text_bytes_and_objects(tmp_path: Path) -> None:
    rec = a_record()
    want = replay(rec)
    assert replay(json.dumps(rec)) == want == replay(json.dumps(rec).encode())
    path = tmp_path / "r.json"
    write(rec, path)
    assert load(path) == rec and loads(path.read_bytes()) == rec
    with pytest.raises(RecordFormatError, match="cannot read"):
        load(tmp_path / "missing.json")


def test_a_kems_record_goes_to_the_kems_engine() -> None:
    kems = pytest.importorskip("tablesense.games.kems")
    path = EXAMPLES / "kems-match.json"
    if not path.exists():
        pytest.skip("no Kems example yet")
    obj = load(path)
    assert replay(obj) == kems.replay_record(obj)


# -- the spec's dominoes details


def test_result_object_matches_the_spec() -> None:
    out = replay(a_record("brazilian-points", hands=3)).to_json()
    assert out["ok"] is True and set(out) >= {"hands", "score", "winner"}
    for h in out["hands"]:
        assert set(h) <= {"outcome", "winner", "points", "label"}
        assert all(isinstance(p, int | float) for p in h["points"])


def test_left_is_the_end_at_the_first_number_of_the_opening_tile_as_written() -> None:
    """Write the opening tile high number first: every later end flips, and the
    record means the same game."""
    rec = a_record(opening="rotation", hands=3, seed=4)
    base = replay(rec)
    flipped = copy.deepcopy(rec)
    for h in flipped["hands"]:
        opening = next(m for m in h["moves"] if "tile" in m)
        a, b = opening["tile"].split("-")
        if a == b:
            continue
        opening["tile"] = f"{b}-{a}"
        for m in h["moves"]:
            if m.get("end"):
                m["end"] = {"left": "right", "right": "left"}[m["end"]]
    assert flipped != rec
    assert replay(flipped) == base


def test_end_is_required_whenever_the_tile_fits_both_ends() -> None:
    rec = a_record(hands=1, seed=5)
    moves = rec["hands"][0]["moves"]
    # the second play goes on 6-6: both ends show 6
    k = next(i for i, m in enumerate(moves) if i > 0 and "tile" in m)
    del moves[k]["end"]
    with pytest.raises(IllegalStepError, match="say which end") as info:
        replay(rec)
    assert (info.value.hand, info.value.move) == (0, k)


def test_end_may_be_omitted_when_the_tile_fits_one_end() -> None:
    rec = a_record(hands=1, seed=6)
    match = DominoMatch("pairs-pips")
    hand = match.new_hand(deal=[[Tile.parse(t) for t in d] for d in rec["hands"][0]["deal"]])
    omitted = 0
    for m in rec["hands"][0]["moves"]:
        if "end" in m:
            t = Tile.parse(m["tile"])
            if t.has(W(hand.left_end)) != t.has(W(hand.right_end)):
                del m["end"]
                omitted += 1
        hand.play(
            Play(m["seat"], Tile.parse(m["tile"]), m.get("end"))
            if "tile" in m
            else hand.legal_moves()[0]
        )
    assert omitted
    assert replay(rec).hands[0] == replay(a_record(hands=1, seed=6)).hands[0]


def test_a_hand_may_not_stop_before_it_ends_and_nothing_may_follow_its_end() -> None:
    rec = a_record(hands=1, seed=7)
    n = len(rec["hands"][0]["moves"])
    short = copy.deepcopy(rec)
    short["hands"][0]["moves"].pop()
    with pytest.raises(IllegalStepError, match="stops before it ends") as info:
        replay(short)
    assert (info.value.hand, info.value.move) == (0, n - 1)
    longer = copy.deepcopy(rec)
    longer["hands"][0]["moves"].append({"seat": 0, "pass": True})
    with pytest.raises(IllegalStepError, match="hand is over") as info:
        replay(longer)
    assert info.value.move == n


def test_the_first_hand_opens_with_6_6_by_its_holder() -> None:
    rec = a_record(hands=1, seed=8)
    moves = rec["hands"][0]["moves"]
    deal = rec["hands"][0]["deal"]
    holder = moves[0]["seat"]
    moves[0] = {
        "seat": holder,
        "tile": deal[holder][0] if deal[holder][0] != "6-6" else deal[holder][1],
    }
    with pytest.raises(IllegalStepError, match="opens with 6-6") as info:
        replay(rec)
    assert (info.value.hand, info.value.move) == (0, 0)


def test_no_hand_may_follow_the_end_of_the_match() -> None:
    rec = a_record(hands=200, seed=9)
    extra = a_record(hands=1, seed=10)["hands"][0]
    rec["hands"].append(extra)
    with pytest.raises(IllegalStepError, match="match was already over") as info:
        replay(rec)
    assert info.value.hand == len(rec["hands"]) - 1


def test_the_games_room_and_its_docs_cite_nothing_outside_the_repository() -> None:
    """The record format is ours (docs/record-format.md) and the rule texts are
    cited by name ("seed 001, Portuguese"): no path of a development machine,
    no file of the material the project was created from."""
    import re

    root = Path(REPO)
    files = [
        *sorted((root / "host" / "tablesense" / "games").rglob("*.py")),
        *sorted((root / "docs" / "rules").glob("*.md")),
        root / "docs" / "record-format.md",
    ]
    outside = re.compile(r"/work/|shared/spec|shared/seeds|\.\./shared|\b\d{3}_[0-9a-f]{16}\.txt")
    found = [
        f"{path.relative_to(root)}:{n}: {line.strip()}"
        for path in files
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if outside.search(line)
    ]
    assert not found, "\n".join(found)
    assert "tablesense.record/1" in (root / "docs" / "record-format.md").read_text()
