"""One test per rule sentence of seed 000 (``pairs-pips`` and ``pips-two-player``).

Each test is named after the sentence it checks; docs/rules/pairs-pips.md and
docs/rules/pips-two-player.md quote the sentences and the options.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from tablesense.games.common import HandResult, IllegalPlayError
from tablesense.games.dominoes import (
    ALL_TILES,
    DominoHand,
    DominoMatch,
    Draw,
    Pass,
    Play,
    Tile,
)

T = Tile.parse
TOTAL_PIPS = sum(t.pips for t in ALL_TILES)


def W(x: int | None) -> int:
    """The value of an optional the test knows is set (for the type checker)."""
    assert x is not None
    return x


def play_out(hand: DominoHand, rng: random.Random) -> HandResult:
    while not hand.is_over:
        hand.play(rng.choice(hand.legal_moves()))
    return hand.result()


def hands_until(
    variant: str,
    cond: Callable[[DominoHand, HandResult], bool],
    options: dict | None = None,
    tries: int = 20000,
    seed: int = 0,
) -> DominoHand:
    rng = random.Random(seed)
    for _ in range(tries):
        h = DominoMatch(variant, options).new_hand(rng)
        h.playout(rng)
        if cond(h, h.result()):
            return h
    raise AssertionError("no such hand found")


def opponents_pips(h: DominoHand, team: int) -> int:
    return sum(h.pips_in_hand(s) for s in range(h.seats) if h.team_of(s) != team)


# --------------------------------------------------------------------------- dealing


def test_maximum_4_players_where_each_player_receives_7_pieces() -> None:
    h = DominoMatch("pairs-pips").new_hand(random.Random(1))
    assert h.seats == 4 and [len(d) for d in h.deal] == [7, 7, 7, 7] and h.boneyard == []


def test_or_play_in_2_players_with_7_pieces_each_and_14_pieces_to_buy() -> None:
    h = DominoMatch("pips-two-player").new_hand(random.Random(1))
    assert h.seats == 2 and [len(d) for d in h.deal] == [7, 7] and len(h.boneyard) == 14


def test_between_pairs_partners_sit_opposite() -> None:
    m = DominoMatch("pairs-pips")
    assert [m.team_of(s) for s in range(4)] == [0, 1, 0, 1]
    assert [DominoMatch("pips-two-player").team_of(s) for s in range(2)] == [0, 1]


# --------------------------------------------------------------------------- opening


def test_the_one_with_the_6x6_piece_always_starts_the_game() -> None:
    rng = random.Random(2)
    m = DominoMatch("pairs-pips")
    for _ in range(3):
        h = m.new_hand(rng)
        holder = h.holder(T("6-6"))
        assert h.to_play == holder
        assert h.legal_moves() == [Play(W(holder), T("6-6"))]
        other = next(t for t in h.hand_of(W(holder)) if t != T("6-6"))
        with pytest.raises(IllegalPlayError, match="opens with 6-6"):
            h.check(Play(W(holder), other))
        play_out(h, rng)
        m.finish_hand()
        if m.is_over:
            break


def test_he_starts_the_game_by_placing_this_piece_in_the_center_of_the_table() -> None:
    h = DominoMatch("pairs-pips").new_hand(random.Random(3))
    h.play(Play(h.to_play, T("6-6")))
    assert h.line[0].end is None and (h.left_end, h.right_end) == (6, 6)


def test_the_other_games_start_in_rotation_from_this_player() -> None:
    """ "whoever draws the highest piece before the first game starts, the other
    games start in counterclockwise from this player" (option opening=rotation)."""
    rng = random.Random(4)
    for rotation, step in (("next", 1), ("previous", -1)):
        m = DominoMatch("pairs-pips", {"opening": "rotation", "rotation": rotation, "target": 1000})
        first = m.new_hand(rng)
        opener = first.to_play
        play_out(first, rng)
        m.finish_hand()
        for k in range(1, 4):
            h = m.new_hand(rng)
            assert h.to_play == (opener + step * k) % 4
            # any tile may open a rotated hand
            assert {mv.tile for mv in h.legal_moves() if isinstance(mv, Play)} == set(
                h.hand_of(h.to_play)
            )
            play_out(h, rng)
            m.finish_hand()


def test_from_there_play_clockwise() -> None:
    """Seats are numbered in playing order: after s plays or passes, s+1 plays."""
    rng = random.Random(5)
    h = DominoMatch("pairs-pips").new_hand(rng)
    while not h.is_over:
        seat = h.to_play
        h.play(rng.choice(h.legal_moves()))
        if not h.is_over:
            assert h.to_play == (seat + 1) % 4


# --------------------------------------------------------------------------- playing


def test_each_player_must_try_to_fit_their_pieces_to_the_ends_one_at_a_time() -> None:
    rng = random.Random(6)
    for _ in range(30):
        h = DominoMatch("pairs-pips", {"forced_block": "allowed"}).new_hand(rng)
        while not h.is_over:
            seat = h.to_play
            for m in h.legal_moves():
                if isinstance(m, Play) and h.left_end is not None:
                    end = h.left_end if m.end == "left" else h.right_end
                    assert m.tile.has(W(end))
            fits = {
                t
                for t in h.hand_of(seat)
                if h.left_end is None or t.has(W(h.left_end)) or t.has(W(h.right_end))
            }
            assert {m.tile for m in h.legal_moves() if isinstance(m, Play)} <= fits
            if h.left_end is not None:
                assert {m.tile for m in h.legal_moves() if isinstance(m, Play)} == fits
            h.play(rng.choice(h.legal_moves()))


def test_if_the_player_does_not_have_any_piece_that_fits_either_side_he_must_pass() -> None:
    rng = random.Random(7)
    passes = 0
    for _ in range(30):
        h = DominoMatch("pairs-pips").new_hand(rng)
        while not h.is_over:
            seat = h.to_play
            can = h.left_end is None or any(
                t.has(W(h.left_end)) or t.has(W(h.right_end)) for t in h.hand_of(seat)
            )
            assert h.is_legal(Pass(seat)) == (not can)
            if can and h.left_end is not None:
                with pytest.raises(IllegalPlayError, match="it may not pass"):
                    h.check(Pass(seat))
            passes += not can
            h.play(rng.choice(h.legal_moves()))
    assert passes > 0


def test_the_game_can_end_when_one_player_beats_the_game_or_when_it_is_locked() -> None:
    rng = random.Random(8)
    seen = set()
    for _ in range(200):
        h = DominoMatch("pairs-pips").new_hand(rng)
        r = play_out(h, rng)
        seen.add(r.outcome)
        if r.outcome == "domino":
            assert h.count(W(h.last_player)) == 0
        else:
            assert all(
                not (t.has(W(h.left_end)) or t.has(W(h.right_end)))
                for s in range(4)
                for t in h.hand_of(s)
            )
    assert seen == {"domino", "blocked"}


def test_the_game_is_closed_when_it_is_no_longer_possible_to_download_pieces() -> None:
    """A hand ends blocked right after the play that leaves nobody able to play."""
    h = hands_until("pairs-pips", lambda h, r: r.outcome == "blocked")
    assert isinstance(h.moves[-1], Play)
    h.undo()
    assert not h.is_over


def test_only_the_natural_closes_being_allowed() -> None:
    """With a choice, a play that blocks the game is illegal (forced_block=forbidden)."""
    rng = random.Random(9)
    for _ in range(3000):
        h = DominoMatch("pairs-pips").new_hand(rng)
        loose = DominoMatch("pairs-pips", {"forced_block": "allowed"}).new_hand(deal=h.deal)
        while not h.is_over:
            strict, free = h.legal_moves(), loose.legal_moves()
            if set(strict) != set(free):
                blocker = next(m for m in free if m not in strict)
                assert isinstance(blocker, Play)
                with pytest.raises(IllegalPlayError, match="must stay open"):
                    h.check(blocker)
                loose.play(blocker)
                assert loose.is_over and loose.outcome == "blocked"
                return
            m = rng.choice(strict)
            h.play(m)
            loose.play(m)
    pytest.fail("no forced block found")


# --------------------------------------------------------------------------- scoring


def test_the_point_value_of_each_piece_is_the_sum_of_its_two_ends() -> None:
    assert T("0-0").pips == 0 and T("3-4").pips == 7 and T("6-6").pips == 12
    assert TOTAL_PIPS == 168


@pytest.mark.parametrize("variant", ["pairs-pips", "pips-two-player"])
def test_whoever_drops_all_the_pieces_wins_the_sum_of_the_opponents_pieces(variant: str) -> None:
    h = hands_until(variant, lambda h, r: r.outcome == "domino")
    r = h.result()
    team = h.team_of(W(h.last_player))
    assert r.winner == team
    assert r.points[team] == opponents_pips(h, team) > 0
    assert r.points[1 - team] == 0


def test_his_partner_takes_the_points_too_as_a_pair() -> None:
    h = hands_until("pairs-pips", lambda h, r: r.outcome == "domino")
    winner = h.last_player
    assert h.result().winner == h.team_of((W(winner) + 2) % 4)


@pytest.mark.parametrize("variant", ["pairs-pips", "pips-two-player"])
def test_when_the_game_is_closed_whoever_has_fewer_points_wins_the_opponents_points(
    variant: str,
) -> None:
    h = hands_until(variant, lambda h, r: r.outcome == "blocked" and len(set(h.team_pips())) == 2)
    pips = h.team_pips()
    low = pips.index(min(pips))
    r = h.result()
    assert r.winner == low and r.points[low] == pips[1 - low] and r.points[1 - low] == 0


def test_if_there_is_a_tie_the_pair_that_locked_the_game_loses() -> None:
    h = hands_until(
        "pairs-pips",
        lambda h, r: r.outcome == "blocked" and len(set(h.team_pips())) == 1,
        tries=200000,
        options={"forced_block": "allowed"},
    )
    locker = h.team_of(W(h.last_player))
    r = h.result()
    assert r.winner == 1 - locker
    assert r.points[1 - locker] == h.team_pips()[locker] and r.points[locker] == 0
    # regional alternatives: nobody scores, or the hand is replayed
    for tie, label in (("nobody", "tie: nobody scores"), ("replay", "tie: hand replayed")):
        m = DominoMatch("pairs-pips", {"blocked_tie": tie, "forced_block": "allowed"})
        again = m.new_hand(deal=h.deal)
        for mv in h.moves:
            again.play(mv)
        res = m.finish_hand()
        assert res.winner is None and res.points == (0, 0) and res.label == label
        if tie == "replay":
            # the replayed hand follows the same opening rule
            assert m.next_opening.tile == T("6-6")


def test_score_all_pips_left_is_a_regional_option() -> None:
    h = hands_until("pairs-pips", lambda h, r: r.outcome == "domino")
    m = DominoMatch("pairs-pips", {"score_all_pips": True})
    again = m.new_hand(deal=h.deal)
    for mv in h.moves:
        again.play(mv)
    r = m.finish_hand()
    assert r.points[W(r.winner)] == sum(h.team_pips())


def test_the_game_ends_when_one_of_the_pairs_reaches_the_50_point_mark() -> None:
    rng = random.Random(10)
    m = DominoMatch("pairs-pips")
    assert m.target == 50
    before = list(m.score)
    while not m.is_over:
        h = m.new_hand(rng)
        play_out(h, rng)
        before = list(m.score)
        m.finish_hand()
        if not m.is_over:
            assert max(m.score) < 50
    assert max(before) < 50 <= m.score[W(m.winner)]
    with pytest.raises(ValueError, match="match is over"):
        m.new_hand(rng)


def test_the_pair_that_accumulates_100_points_first_is_the_winner() -> None:
    """The text also names 100: option ``target``."""
    rng = random.Random(11)
    m = DominoMatch("pairs-pips", {"target": 100})
    while not m.is_over:
        play_out(m.new_hand(rng), rng)
        m.finish_hand()
    assert m.score[W(m.winner)] >= 100


# --------------------------------------------------------------------------- two players


def test_two_players_must_buy_from_the_boneyard_before_passing() -> None:
    """ "14 pieces to buy in the case of opponent doesn't have the piece": a seat
    that cannot play draws (the next boneyard tile) until it can, and passes only
    when the boneyard is empty."""
    rng = random.Random(12)
    draws = passes = 0
    for _ in range(40):
        h = DominoMatch("pips-two-player").new_hand(rng)
        while not h.is_over:
            seat = h.to_play
            moves = h.legal_moves()
            can = h.left_end is None or bool(h.playable(seat))
            if not can and h.boneyard:
                assert moves == [Draw(seat, h.boneyard[0])]
                with pytest.raises(IllegalPlayError, match="must draw"):
                    h.check(Pass(seat))
                wrong = next(t for t in h.boneyard[1:] + h.hand_of(1 - seat))
                with pytest.raises(IllegalPlayError):
                    h.check(Draw(seat, wrong))
                draws += 1
            elif not can:
                assert moves == [Pass(seat)]
                passes += 1
            else:
                assert all(isinstance(m, Play) for m in moves)
                if h.boneyard:
                    with pytest.raises(IllegalPlayError, match="may not draw"):
                        h.check(Draw(seat, h.boneyard[0]))
            before = h.to_play
            h.play(rng.choice(moves))
            if isinstance(h.moves[-1], Draw) and not h.is_over:
                assert h.to_play == before  # the drawer plays on
    assert draws > 0 and passes > 0


def test_two_players_the_game_closes_when_no_tile_left_anywhere_fits() -> None:
    """ "The game is closed when it is no longer possible to download pieces"
    (the record format, 2026-12-01): the hand ends right after the play that
    leaves no tile in any hand or in the boneyard fitting either end; nobody
    draws for a tile that cannot exist, and the boneyard counts for nobody."""
    h = hands_until("pips-two-player", lambda h, r: r.outcome == "blocked" and bool(h.boneyard))
    last = h.moves[-1]
    assert isinstance(last, Play)
    ends = {W(h.left_end), W(h.right_end)}
    off_line = h.hand_of(0) + h.hand_of(1) + h.boneyard
    assert not any(t.has(n) for t in off_line for n in ends)
    with pytest.raises(IllegalPlayError, match="hand is over"):
        h.check(Draw(h.to_play, h.boneyard[0]))
    r = h.result()
    if r.label is None:  # not a tie: the winner scores the loser's hand only
        loser = 1 - W(r.winner)
        assert r.points[W(r.winner)] == h.pips_in_hand(loser)
    # one play earlier the hand was still open: a fitting tile was somewhere
    h.undo()
    assert not h.is_over


def test_two_players_a_hand_still_open_goes_on_through_the_boneyard() -> None:
    """While a fitting tile is still somewhere, a seat that cannot play draws
    (and may draw the boneyard empty when the fitting tiles are in the other
    hand): the hand is not closed early."""
    rng = random.Random(21)
    for _ in range(300):
        h = DominoMatch("pips-two-player").new_hand(rng)
        while not h.is_over:
            h.play(rng.choice(h.legal_moves()))
            if not h.is_over and h.left_end is not None:
                ends = (W(h.left_end), W(h.right_end))
                off_line = h.hand_of(0) + h.hand_of(1) + h.boneyard
                assert any(t.has(n) for t in off_line for n in ends)


def test_a_replayed_hand_opens_by_the_rules_of_its_own_deal() -> None:
    """``blocked_tie: "replay"``: the replayed hand is dealt again and opens as
    any hand does (the 6-6 holder, or the fallback of *its own* deal), not with
    the fallback tile the tied hand opened with."""
    rng = random.Random(0)
    for _ in range(20000):
        m = DominoMatch("pips-two-player", {"blocked_tie": "replay"})
        h = m.new_hand(rng)
        h.playout(rng)
        r = h.result()
        if not (r.outcome == "blocked" and r.winner is None and T("6-6") in h.dealt_boneyard):
            continue
        fallback = h.opening.tile
        assert fallback is not None and fallback != T("6-6")
        m.finish_hand()
        assert m.next_opening.tile == T("6-6")
        # a new deal in which both 6-6 and the old fallback tile are held
        while True:
            tiles = list(ALL_TILES)
            rng.shuffle(tiles)
            deal, bone = [tiles[:7], tiles[7:14]], tiles[14:]
            held = deal[0] + deal[1]
            if T("6-6") in held and fallback in held:
                break
        again = m.new_hand(deal=deal, boneyard=bone)
        assert again.opening.tile == T("6-6") and again.to_play == again.holder(T("6-6"))
        with pytest.raises(IllegalPlayError):
            again.check(Play(W(again.holder(fallback)), fallback))
        return
    pytest.fail("no tied hand with 6-6 in the boneyard")


def test_two_players_when_6_6_is_in_the_boneyard_the_highest_double_opens() -> None:
    rng = random.Random(13)
    for _ in range(200):
        h = DominoMatch("pips-two-player").new_hand(rng)
        if T("6-6") in h.boneyard:
            held = [t for s in range(2) for t in h.hand_of(s)]
            doubles = [t for t in held if t.is_double]
            want = max(doubles) if doubles else max(held, key=lambda t: (t.pips, t.high))
            assert h.opening.tile == want and h.to_play == h.holder(want)
            return
    pytest.fail("6-6 never in the boneyard")


def test_at_a_table_a_draw_may_take_any_boneyard_tile_and_the_record_keeps_the_order() -> None:
    """``free_draw``: the face-down order is unknown to a sensing table; the
    record lists the boneyard in the order the tiles were drawn and replays."""
    from tablesense.games.record import replay

    rng = random.Random(14)
    m = DominoMatch("pips-two-player")
    h = m.new_hand(rng, free_draw=True)
    drew = 0
    while not h.is_over:
        moves = h.legal_moves()
        draws = [x for x in moves if isinstance(x, Draw)]
        if draws:
            assert {x.tile for x in draws} == set(h.boneyard)
            with pytest.raises(IllegalPlayError, match="not in the boneyard"):
                h.check(Draw(h.to_play, h.hand_of(1 - h.to_play)[0]))
            pick = draws[-1]  # not the "next" one
            h.play(pick)
            assert h.dealt_boneyard[len(h.dealt_boneyard) - len(h.boneyard) - 1] == pick.tile
            drew += 1
        else:
            h.play(rng.choice(moves))
    assert drew
    m.finish_hand()
    assert replay(m.to_record()).hands[0] == m.results[0]
