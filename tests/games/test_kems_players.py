"""Kems computer players: they see only their seat's view, play legal
events, call on the partner's signal, and the stronger ones beat the weaker
ones (fixed seeds: deterministic)."""

from __future__ import annotations

import random
from dataclasses import fields
from typing import Any

import pytest

from tablesense.games.kems import (
    Call,
    Card,
    KemsOptions,
    KemsRound,
    Refresh,
    SeatView,
    Swap,
    replay_record,
)
from tablesense.games.kems_players import (
    PLAYERS,
    GreedyPlayer,
    RandomPlayer,
    TrackingPlayer,
    arena,
    four_probability,
    make_player,
    play_match,
    play_round,
    track,
)

C = Card.parse
DEAL = ["9S 9H KS KH", "7S 8S TS JS", "QS QH AS AH", "7H 8H TH JH"]


class ViewOnly:
    """A round that answers nothing but ``view``: a player that peeks at
    anything else (another seat's hand, the stock order) fails."""

    def __init__(self, rnd: KemsRound) -> None:
        self._rnd = rnd

    def view(self, seat: int) -> SeatView:
        return self._rnd.view(seat)

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a player read round.{name}: players may only use round.view(seat)")


def test_the_seat_view_holds_no_hidden_information() -> None:
    names = {f.name for f in fields(SeatView)}
    assert names == {
        "seat", "seats", "hand", "board", "events", "stock_count", "signal",
        "options", "is_over", "awaiting_double", "laid",
    }  # fmt: skip
    rnd = KemsRound.from_text(DEAL, "9D 9C QD QC")
    view = rnd.view(1)
    assert view.hand == tuple(rnd.hands[1]) and view.stock_count == 12


@pytest.mark.parametrize("name", sorted(PLAYERS))
def test_players_use_only_their_view_and_play_legal_events(name: str) -> None:
    rng = random.Random(3)
    player = make_player(name)
    for seed in range(15):
        rnd = KemsRound.from_text(DEAL, "9D 9C QD QC")
        game_rng = random.Random(seed)
        for _ in range(200):
            if rnd.is_over and not rnd.awaiting_double:
                break
            seat = game_rng.randrange(4)
            event = player.choose(ViewOnly(rnd), seat, rng)  # type: ignore[arg-type]
            if event is None:
                if not rnd.is_over:
                    rnd.play(Refresh())
                continue
            assert event.seat == seat
            rnd.play(event)  # raises if illegal


def test_make_player_rejects_unknown_names() -> None:
    with pytest.raises(ValueError, match="unknown Kems player"):
        make_player("oracle")


@pytest.mark.parametrize("player", [RandomPlayer(), GreedyPlayer(), TrackingPlayer()])
def test_kems_on_the_partners_signal_and_double_after_its_kems(player: Any) -> None:
    rnd = KemsRound.from_text(DEAL, "9D 9C QD QC")
    rnd.play(Swap(0, C("KS"), C("9D")))
    rnd.play(Swap(0, C("KH"), C("9C")))
    rng = random.Random(1)
    assert player.choose(rnd, 2, rng) == Call(2, "kems")  # partner 0 signals four 9s
    rnd.play(Swap(2, C("AS"), C("QD")))
    rnd.play(Swap(2, C("AH"), C("QC")))
    rnd.play(Call(2, "kems"))
    assert player.choose(rnd, 0, rng) == Call(0, "double")  # seat 2 signals four queens
    assert player.choose(rnd, 1, rng) is None


def test_no_call_without_a_signal() -> None:
    rnd = KemsRound.from_text(DEAL, "9D 9C QD QC")
    rng = random.Random(1)
    for _ in range(50):
        for player in (RandomPlayer(), GreedyPlayer(), TrackingPlayer()):
            event = player.choose(rnd, 2, rng)
            assert not isinstance(event, Call)


def test_greedy_collects_the_rank_it_holds_most_of() -> None:
    rnd = KemsRound.from_text(DEAL, "9D 9C QD QC")
    rng = random.Random(1)
    event = GreedyPlayer().choose(rnd, 0, rng)
    assert isinstance(event, Swap) and event.take.rank == "9" and event.give.rank == "K"
    # nothing on the board raises seat 1's best count: it waits
    assert GreedyPlayer().choose(rnd, 1, rng) is None
    # queens for seat 2
    event = GreedyPlayer().choose(rnd, 2, rng)
    assert isinstance(event, Swap) and event.take.rank == "Q" and event.give.rank == "A"


def test_tracking_knows_what_was_seen() -> None:
    rnd = KemsRound.from_text(DEAL, "9D 9C QD QC")
    rnd.play(Swap(1, C("7S"), C("QD")))
    rnd.play(Refresh())
    know = track(rnd.view(3))
    assert know.held[1] == {C("QD")}
    assert know.in_stock == {C("9D"), C("9C"), C("7S"), C("QC")}
    assert C("QD") not in know.unseen and C("9S") in know.unseen
    assert know.slots(1) == 3 and know.slots(0) == 4
    # every card is located exactly once from seat 3's point of view
    located = set(rnd.hands[3]) | set(rnd.board) | know.in_stock | know.unseen
    located |= {c for s in range(4) if s != 3 for c in know.held[s]}
    assert len(located) == 32


def test_tracking_calls_contre_on_an_opponent_seen_taking_four() -> None:
    # seat 1 visibly takes four 7s, one at a time through refreshes
    rnd = KemsRound.from_text(
        ["9S 9H KS KH", "8S 8D TS JS", "QS QH AS AH", "8H 8C TH JH"],
        "7S 7H 9D 9C",
        stock="7D 7C QD QC TD TC JD JC AD AC KD KC",
    )
    rnd.play(Swap(1, C("8S"), C("7S")))
    rnd.play(Swap(1, C("8D"), C("7H")))
    rnd.play(Refresh())
    rnd.play(Swap(1, C("TS"), C("7D")))
    assert not rnd.has_four(1)
    know = track(rnd.view(0))
    assert four_probability(know, 1) < 0.5
    assert not isinstance(TrackingPlayer().choose(rnd, 0, random.Random(1)), Call)
    rnd.play(Swap(1, C("JS"), C("7C")))
    assert rnd.has_four(1)
    assert four_probability(track(rnd.view(0)), 1) == 1.0
    assert TrackingPlayer().choose(rnd, 0, random.Random(1)) == Call(0, "contre", 1)
    # its partner's own seat (2) may not contre a partner: it names seat 1 or 3 only
    event = TrackingPlayer().choose(rnd, 2, random.Random(1))
    assert event == Call(2, "contre", 1)


def test_four_probability_rises_with_evidence() -> None:
    # seat 1 holds two 8s from the deal; it takes two more 8s, greedily
    rnd = KemsRound.from_text(
        ["9S 9H KS KH", "8S 8D TS JS", "QS QH AS AH", "7H 7C TH JH"],
        "8H 8C 9D 9C",
    )
    p0 = four_probability(track(rnd.view(0)), 1)
    rnd.play(Swap(1, C("TS"), C("8H")))
    p1 = four_probability(track(rnd.view(0)), 1)
    rnd.play(Swap(1, C("JS"), C("8C")))
    p2 = four_probability(track(rnd.view(0)), 1)
    # after one take four 8s are impossible (8C is on the board); after the
    # second they are possible but unlikely: a seat with one hidden 8 would
    # have taken the same two 8s (greedy), and one 8 is likelier than two
    assert p0 == p1 == 0.0
    assert 0.0 < p2 < 0.5


def test_play_round_ends_at_a_call_and_records_replay() -> None:
    rng = random.Random(4)
    players = [make_player(n) for n in ("tracking", "greedy", "tracking", "greedy")]
    match = play_match(players, rng, KemsOptions.from_dict({"target": 3}, 4))
    assert match.is_over
    result = replay_record(match.to_record())
    assert list(result.score) == match.score and result.winner == match.winner


def test_play_round_gives_up_after_max_ticks() -> None:
    class Idle:
        name = "idle"

        def choose(self, round: Any, seat: int, rng: random.Random) -> None:
            return None

    rnd = KemsRound.from_text(DEAL, "9D 9C QD QC")
    assert play_round(rnd, [Idle()] * 4, random.Random(1), max_ticks=5) is False
    assert rnd.events == [Refresh()] * 5


@pytest.mark.parametrize("seats", [4, 6, 8])
def test_matches_finish_with_every_seat_count(seats: int) -> None:
    rng = random.Random(seats)
    players = [make_player(["greedy", "tracking", "random"][s % 3]) for s in range(seats)]
    match = play_match(players, rng, KemsOptions.from_dict({"target": 2}, seats))
    assert match.is_over
    replay_record(match.to_record())


def test_greedy_beats_random() -> None:
    result = arena(
        "greedy", "random", matches=6, seed=7, options=KemsOptions.from_dict({"target": 3}, 4)
    )
    assert result.a_wins >= 5


def test_tracking_beats_greedy() -> None:
    result = arena(
        "tracking", "greedy", matches=12, seed=3, options=KemsOptions.from_dict({"target": 5}, 4)
    )
    assert result.a_wins > result.b_wins
    assert result.outcomes["contre"] > 0 and result.outcomes["failed contre"] == 0


def test_win_rate_table_command(capsys: pytest.CaptureFixture[str]) -> None:
    from tablesense.games.kems_players import _main

    assert _main(["--matches", "2", "--target", "1", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "| random | greedy |" in out and "| greedy | tracking |" in out
    assert "| tracking | tracking |" in out and "| tracking | reasoner |" in out
    assert out.count("\n") == 12


def test_a_seat_may_be_shown_the_real_button_light() -> None:
    # at a real table the light is what the human partner pressed: a bot
    # trusts it, right or wrong
    rnd = KemsRound.from_text(DEAL, "9D 9C QD QC")
    rng = random.Random(1)
    for player in (RandomPlayer(), GreedyPlayer(), TrackingPlayer()):
        assert player.decide(rnd.view(2, signal=True), rng) == Call(2, "kems")
    assert not rnd.view(2).signal


@pytest.mark.slow
def test_soak_random_option_matches_replay() -> None:
    """Many computer matches under random options and seat counts: every
    record replays to the match's own score (run with --runslow)."""
    rng = random.Random(2026)
    for i in range(120):
        seats = rng.choice([4, 6, 8])
        values: dict[str, Any] = {
            "target": rng.randint(1, 4),
            "double_points": rng.choice([2, 3]),
            "false_call": rng.choice(["opponents-plus-one", "caller-minus-one"]),
            "refresh": rng.choice(["bottom", "discard"]),
            "misdeal_at": rng.choice([3, 4, None]),
            "allow_take_back": rng.random() < 0.3,
        }
        if seats == 6 and rng.random() < 0.3:
            values["deck"] = 32
        options = KemsOptions.from_dict(values, seats)
        players = [make_player(rng.choice(sorted(PLAYERS))) for _ in range(seats)]
        match = play_match(players, rng, options, max_rounds=60)
        result = replay_record(match.to_record())
        assert list(result.score) == match.score, i
        assert result.winner == match.winner, i
