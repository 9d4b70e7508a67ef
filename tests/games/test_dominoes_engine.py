"""The dominoes engine's API: values, moves, checks, undo, clones, playouts."""

from __future__ import annotations

import random
import sys

import pytest

from tablesense.games.common import IllegalPlayError, OptionError, RecordFormatError
from tablesense.games.dominoes import (
    ALL_TILES,
    VARIANTS,
    Announce,
    DealError,
    DominoHand,
    DominoMatch,
    DominoOptions,
    Draw,
    LinePlay,
    Opening,
    Pass,
    Play,
    Tile,
    deal_tiles,
    move_from_json,
    move_to_json,
)

T = Tile.parse


def W(x: int | None) -> int:
    """The value of an optional the test knows is set (for the type checker)."""
    assert x is not None
    return x


def random_hand(variant: str, seed: int, steps: int, seats: int | None = None) -> DominoHand:
    rng = random.Random(seed)
    hand = DominoMatch(variant, seats=seats).new_hand(rng)
    for _ in range(steps):
        if hand.is_over:
            break
        moves = [m for m in hand.legal_moves() if not isinstance(m, Announce)]
        hand.play(rng.choice(moves))
    return hand


def snapshot(h: DominoHand) -> tuple:
    return (h.hands, h.line, h.left_end, h.right_end, h.to_play, h.moves, h.boneyard, h.is_over)


# -- tiles


def test_tile_parse_accepts_either_order_and_writes_low_first() -> None:
    assert T("5-3") == Tile(3, 5) == T("3-5")
    assert str(T("5-3")) == "3-5"
    assert repr(T("6-6")) == "Tile(6, 6)"
    assert eval(repr(T("2-4"))) == T("2-4")


def test_tile_values() -> None:
    assert len(ALL_TILES) == 28 and len(set(ALL_TILES)) == 28
    assert T("3-4").pips == 7 and T("0-0").pips == 0 and T("6-6").pips == 12
    assert T("5-5").is_double and not T("4-5").is_double
    assert T("2-5").has(5) and not T("2-5").has(3)
    assert T("2-5").other(2) == 5 and T("4-4").other(4) == 4
    assert [t.index for t in ALL_TILES] == list(range(28))


@pytest.mark.parametrize("text", ["7-1", "a-b", "12", "1-2-3", "", "-1-2", " 1 - 2x"])
def test_tile_parse_rejects_garbage(text: str) -> None:
    with pytest.raises(ValueError):
        T(text)


def test_tile_constructor_rejects_high_before_low() -> None:
    with pytest.raises(ValueError):
        Tile(5, 3)


# -- moves and their JSON


@pytest.mark.parametrize(
    "move, obj",
    [
        (Play(0, T("6-6")), {"seat": 0, "tile": "6-6"}),
        (Play(1, T("3-6"), "left"), {"seat": 1, "tile": "3-6", "end": "left"}),
        (Play(2, T("3-5"), None, 5), {"seat": 2, "tile": "5-3"}),
        (Pass(3), {"seat": 3, "pass": True}),
        (Draw(1, T("0-4")), {"seat": 1, "draw": "0-4"}),
        (Announce(2, T("4-4")), {"seat": 2, "announce": "4-4"}),
    ],
)
def test_moves_round_trip_through_json(move, obj) -> None:
    assert move_to_json(move) == obj
    assert move_from_json(obj) == move


def test_play_first_number_is_normalized() -> None:
    assert Play(0, T("3-5"), None, 3) == Play(0, T("3-5"))
    with pytest.raises(ValueError):
        Play(0, T("3-5"), None, 4)


@pytest.mark.parametrize(
    "obj",
    [
        [],
        {"tile": "3-5"},
        {"seat": -1, "pass": True},
        {"seat": True, "pass": True},
        {"seat": 0, "pass": False},
        {"seat": 0, "tile": "3-5", "end": "middle"},
        {"seat": 0, "tile": "3-5", "colour": "red"},
        {"seat": 0, "draw": "9-9"},
        {"seat": 0, "jump": 1},
    ],
)
def test_move_from_json_rejects_what_the_format_does_not_describe(obj) -> None:
    with pytest.raises(RecordFormatError):
        move_from_json(obj)


def test_move_from_json_ignores_writer_fields() -> None:
    assert move_from_json({"seat": 0, "pass": True, "x-ms": 1200}) == Pass(0)


# -- options


def test_options_defaults_and_round_trip() -> None:
    o = DominoOptions.from_dict("pairs-pips")
    assert o.target == 50 and o.opening == "double-six" and o.forced_block == "forbidden"
    assert DominoOptions.from_dict("pairs-pips", o.to_dict()) == o
    b = DominoOptions.from_dict("brazilian-points", {"target": 6, "start_score": [1, -1]})
    assert b.target == 6 and b.start_score == (1, -1)
    assert b.to_dict()["start_score"] == [1, -1]
    assert "opening" not in b.to_dict()


@pytest.mark.parametrize(
    "variant, options",
    [
        ("pairs-pips", {"targt": 50}),
        ("pairs-pips", {"target": -5}),
        ("pairs-pips", {"target": "50"}),
        ("pairs-pips", {"opening": "random"}),
        ("pips-two-player", {"announce": True}),
        ("brazilian-points", {"opening": "rotation"}),
        ("brazilian-points", {"start_score": "1,2"}),
        ("chess", {}),
    ],
)
def test_options_reject_unknown_names_and_values(variant, options) -> None:
    with pytest.raises(OptionError):
        DominoOptions.from_dict(variant, options)


def test_match_rejects_wrong_seat_counts() -> None:
    with pytest.raises(OptionError):
        DominoMatch("pairs-pips", seats=3)
    with pytest.raises(OptionError):
        DominoMatch("brazilian-points", seats=2)
    assert DominoMatch("brazilian-points", seats=3).teams == 3


# -- deals


@pytest.mark.parametrize(
    "variant, seats", [(v, None) for v in VARIANTS] + [("brazilian-points", 3)]
)
def test_rng_deals_fit_the_variant(variant: str, seats: int | None) -> None:
    rng = random.Random(1)
    for _ in range(50):
        m = DominoMatch(variant, seats=seats)
        h = m.new_hand(rng)
        tiles = [t for hand in h.deal for t in hand] + list(h.dealt_boneyard)
        assert sorted(tiles) == list(ALL_TILES)


def test_deal_errors_name_the_problem() -> None:
    hands, _ = deal_tiles("pairs-pips", 4, random.Random(2))
    opts = DominoOptions.from_dict("pairs-pips")
    dup = [list(h) for h in hands]
    dup[1][0] = dup[0][0]
    with pytest.raises(DealError, match="dealt twice"):
        DominoHand(opts, dup)
    with pytest.raises(DealError, match="7 tiles"):
        DominoHand(opts, [hands[0] + hands[1][:1], hands[1][1:], hands[2], hands[3]])
    with pytest.raises(DealError, match="4 seats"):
        DominoHand(opts, hands[:3])
    with pytest.raises(DealError, match="no boneyard"):
        DominoHand(opts, [hands[0][1:], *hands[1:]], boneyard=[hands[0][0]])


def test_new_hand_needs_a_deal_or_an_rng_and_one_hand_at_a_time() -> None:
    m = DominoMatch("pairs-pips")
    with pytest.raises(ValueError, match="random.Random"):
        m.new_hand()
    m.new_hand(random.Random(1))
    with pytest.raises(ValueError, match="not finished"):
        m.new_hand(random.Random(1))
    with pytest.raises(ValueError, match="still in play"):
        m.finish_hand()


# -- a hand's state


def test_line_arms_and_ends_follow_the_plays() -> None:
    h = random_hand("pairs-pips", 3, 12)
    opening = h.line[0]
    assert opening.end is None and opening.tile == T("6-6")
    left, right = h.arm("left"), h.arm("right")
    assert len(left) + len(right) + 1 == len(h.line)
    assert h.left_end == (left[-1].outer if left else opening.outer)
    assert h.right_end == (right[-1].outer if right else opening.inner)
    # neighbours touch
    prev = opening.outer
    for lp in left:
        assert lp.inner == prev
        prev = lp.outer
    prev = opening.inner
    for lp in right:
        assert lp.inner == prev
        prev = lp.outer


def test_line_view_reads_left_to_right_with_matching_neighbours() -> None:
    assert random_hand("pairs-pips", 1, 0).line_view() == {"left": [], "center": None, "right": []}
    h = random_hand("pairs-pips", 3, 14)
    view = h.line_view()
    row = [*reversed(view["left"]), view["center"], *view["right"]]
    assert len(row) == len(h.line)
    for a, b in zip(row, row[1:], strict=False):
        assert a.split("-")[1] == b.split("-")[0]
    assert int(row[0].split("-")[0]) == h.left_end and int(row[-1].split("-")[1]) == h.right_end


def test_check_names_the_problem_in_a_sentence() -> None:
    h = DominoMatch("pairs-pips").new_hand(random.Random(4))
    opener = h.to_play
    other = (opener + 1) % 4
    some = h.hand_of(other)[0]
    with pytest.raises(IllegalPlayError, match=f"it is seat {opener}'s turn, not seat {other}'s"):
        h.check(Play(other, some))
    mine = next(t for t in h.hand_of(opener) if t != T("6-6"))
    with pytest.raises(IllegalPlayError, match="opens with 6-6"):
        h.check(Play(opener, mine))
    with pytest.raises(IllegalPlayError, match="does not hold"):
        h.check(Play(opener, some))
    with pytest.raises(IllegalPlayError, match="must open the hand"):
        h.check(Pass(opener))
    with pytest.raises(IllegalPlayError, match="no end"):
        h.check(Play(opener, T("6-6"), "left"))
    with pytest.raises(IllegalPlayError, match="no seat 7"):
        h.check(Pass(7))
    with pytest.raises(IllegalPlayError, match="brazilian-points"):
        h.check(Announce(opener, T("6-6")))
    h.play(Play(opener, T("6-6")))
    nxt = h.to_play
    misfit = next((t for t in h.hand_of(nxt) if not t.has(6)), None)
    if misfit is not None:
        with pytest.raises(IllegalPlayError, match="fits neither end"):
            h.check(Play(nxt, misfit))
    six = next((t for t in h.hand_of(nxt) if t.has(6)), None)
    if six is not None:
        # both ends show 6: the end must be named
        with pytest.raises(IllegalPlayError, match="say which end"):
            h.check(Play(nxt, six))
        assert h.is_legal(Play(nxt, six, "right"))


def test_a_play_that_fits_one_end_may_omit_it_and_is_stored_with_it() -> None:
    rng = random.Random(9)
    for seed in range(100):
        h = random_hand("pairs-pips", seed, rng.randrange(3, 15))
        if h.is_over or h.left_end == h.right_end:
            continue
        for m in h.legal_moves():
            if isinstance(m, Play) and m.tile.has(W(h.left_end)) != m.tile.has(W(h.right_end)):
                applied = h.play(Play(m.seat, m.tile))
                assert applied == m and h.moves[-1] == m
                return
    pytest.fail("no position with a one-end play found")


def test_no_move_may_follow_the_end_of_a_hand() -> None:
    h = random_hand("pairs-pips", 5, 200)
    assert h.is_over and h.legal_moves() == []
    with pytest.raises(IllegalPlayError, match="the hand is over"):
        h.check(Pass(h.to_play))
    with pytest.raises(ValueError):
        DominoMatch("pairs-pips").new_hand(random.Random(1)).result()


@pytest.mark.parametrize("variant", VARIANTS)
def test_undo_restores_every_earlier_state(variant: str) -> None:
    rng = random.Random(6)
    h = DominoMatch(variant).new_hand(rng)
    states = [snapshot(h)]
    while not h.is_over:
        h.play(rng.choice(h.legal_moves()))
        states.append(snapshot(h))
    states.pop()
    while states:
        h.undo()
        assert snapshot(h) == states.pop()
    with pytest.raises(IndexError):
        h.undo()


@pytest.mark.parametrize(
    "variant, seats", [(v, None) for v in VARIANTS] + [("brazilian-points", 3)]
)
def test_playout_and_simulate_agree_with_checked_play(variant: str, seats: int | None) -> None:
    """The fast loops make the same moves the checked API allows, and
    ``simulate`` gives what ``playout`` + ``result`` give for the same draws."""
    rng = random.Random(7)
    for k in range(150):
        h = random_hand(variant, k, rng.randrange(0, 10), seats)
        if h.is_over:
            continue
        before = snapshot(h)
        expected = h.simulate(random.Random(k))
        assert snapshot(h) == before, "simulate must not touch the hand"
        c = h.clone()
        c.playout(random.Random(k))
        assert c.result() == expected
        again = h.clone()
        for m in c.moves[len(h.moves) :]:
            again.play(m)
        assert again.is_over and again.result() == expected and again.line == c.line


def test_clone_is_independent() -> None:
    h = random_hand("pips-two-player", 8, 5)
    c = h.clone()
    c.play(c.legal_moves()[0])
    assert len(c.moves) == len(h.moves) + 1
    assert snapshot(h) != snapshot(c)


def test_opening_can_be_given_explicitly() -> None:
    opts = DominoOptions.from_dict("pairs-pips", {"opening": "rotation"})
    hands, _ = deal_tiles("pairs-pips", 4, random.Random(3))
    h = DominoHand(opts, hands, opening=Opening(seat=2))
    assert h.to_play == 2
    assert {m.tile for m in h.legal_moves() if isinstance(m, Play)} == set(hands[2])
    # left is the number written first
    t = next(t for t in hands[2] if not t.is_double)
    h.play(Play(2, t, None, t.high))
    assert (h.left_end, h.right_end) == (t.high, t.low)
    assert isinstance(h.line[0], LinePlay) and h.line[0].outer == t.high


def test_a_hand_state_is_small() -> None:
    """Thousands of states must fit in memory: under 2 KB each (shared tiles,
    moves and line entries are interned and not counted)."""
    h = random_hand("pairs-pips", 11, 30)
    shared = {id(x) for x in ALL_TILES}
    seen: set[int] = set()

    def size(obj: object) -> int:
        if id(obj) in seen or id(obj) in shared or isinstance(obj, (Tile, Play, Pass, LinePlay)):
            return 0
        if isinstance(obj, (DominoOptions, Opening, str)):
            return 0
        seen.add(id(obj))
        n = sys.getsizeof(obj)
        if isinstance(obj, (list, tuple)):
            n += sum(size(x) for x in obj)
        elif isinstance(obj, dict):
            n += sum(size(k) + size(v) for k, v in obj.items())
        elif isinstance(obj, DominoHand):
            n += sum(size(getattr(obj, s)) for s in DominoHand.__slots__)
        return n

    assert size(h) < 2048
