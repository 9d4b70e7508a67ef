"""The ``reasoner`` Kems player: legal with 4, 6 and 8 seats, reproducible for
a seed, and its opponent model (a replay of the opponent's swaps and waits
with ``tracking``'s policy) explains what ``tracking`` really did and sees
the fours made from a dealt pair that ``tracking``'s own estimate misses.
Strength is measured by ``benchmarks/players.py``, not here."""

from __future__ import annotations

import random

import pytest

from tablesense.games.kems import Call, Card, KemsMatch, KemsOptions, KemsRound, Refresh, Swap
from tablesense.games.kems_players import (
    ReasonerPlayer,
    TrackingPlayer,
    four_probability,
    play_match,
    play_round,
    track,
)
from tablesense.games.kems_players.inference import policy_four_probability, policy_likelihood

C = Card.parse
DEAL = ["9S 9H KS KH", "7S 8S TS JS", "QS QH AS AH", "7H 8H TH JH"]


@pytest.mark.parametrize("seats", [4, 6, 8])
def test_reasoner_plays_only_legal_events_with_every_seat_count(seats: int) -> None:
    rng = random.Random(7)
    match = KemsMatch(seats=seats)
    players = [ReasonerPlayer() if s % 2 else TrackingPlayer() for s in range(seats)]
    ended = 0
    for _ in range(4):
        rnd = match.new_hand(rng)
        if play_round(rnd, players, rng, max_ticks=150):  # play() checks every event
            match.finish_hand()
            ended += 1
        else:
            match.abandon_hand()
    assert ended > 0


def test_a_reasoner_match_is_the_same_for_the_same_seed() -> None:
    def record(seed: int) -> dict[str, object]:
        players = [ReasonerPlayer() if s % 2 else TrackingPlayer() for s in range(4)]
        options = KemsOptions.from_dict({"target": 3})
        return play_match(players, random.Random(seed), options).to_record()

    assert record(4) == record(4)
    assert record(4) != record(5)


def _tracking_rounds(count: int, seed: int) -> list[KemsRound]:
    """Rounds of four ``tracking`` players, stopped before their call."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        rnd = KemsMatch().new_hand(rng)
        if rnd.is_misdeal:
            continue
        players = [TrackingPlayer() for _ in range(4)]
        if play_round(rnd, players, rng, max_ticks=60):
            while rnd.is_over:
                rnd.undo()
            out.append(rnd)
    return out


def test_the_opponent_model_explains_what_tracking_really_did() -> None:
    """The true dealt hand of a ``tracking`` seat replays its every swap and
    every wait at a refresh exactly (no mismatch allowed)."""
    checked = 0
    for rnd in _tracking_rounds(40, 11):
        for target in range(4):
            observer = (target + 1) % 4
            view = rnd.view(observer)
            like = policy_likelihood(view, target, list(rnd.deal[target]), TrackingPlayer(), 0.0)
            assert like > 0.0, (target, rnd.deal[target], [str(e) for e in rnd.events])
            checked += 1
    assert checked > 100


def test_the_opponent_model_separates_fours_from_threes() -> None:
    """Right after a ``tracking`` seat's swap that leaves two or more taken
    cards of one rank in its hand: the model's estimate is high when it holds
    four and low when it does not (``tracking``'s own estimate sees few of
    the fours made from a dealt pair)."""
    rng = random.Random(2)
    model = TrackingPlayer()
    fours: list[float] = []
    others: list[float] = []
    for _ in range(70):
        rnd = KemsMatch().new_hand(rng)
        if rnd.is_misdeal:
            continue
        players = [TrackingPlayer() for _ in range(4)]
        for _tick in range(60):
            if rnd.is_over:
                break
            seats = list(range(4))
            rng.shuffle(seats)
            acted = False
            for s in seats:
                event = players[s].choose(rnd, s, rng)
                if event is None:
                    continue
                rnd.play(event)
                acted = True
                if rnd.is_over:
                    break
                if isinstance(event, Swap):
                    view = rnd.view((s + 1) % 4)
                    know = track(view)
                    held = know.held[s]
                    if len(held) >= 2 and len({c.rank for c in held}) == 1:
                        p = policy_four_probability(view, know, s, model, 0.005)
                        assert p is not None
                        (fours if rnd.has_four(s) else others).append(p)
            if not acted and not rnd.is_over:
                rnd.play(Refresh())
    assert len(fours) > 10 and len(others) > 10
    assert sum(fours) / len(fours) > 0.6
    assert sum(others) / len(others) < 0.2


def _queens_for_seat_2() -> KemsRound:
    """Seat 2, dealt two queens and two aces, takes the board's two queens
    for two of its aces: four queens, two of them never seen."""
    rnd = KemsRound.from_text(DEAL, "9D 9C QD QC")
    rnd.play(Swap(2, C("AS"), C("QD")))
    rnd.play(Swap(2, C("AH"), C("QC")))
    return rnd


def test_reasoner_contres_a_four_made_from_a_dealt_pair() -> None:
    rnd = _queens_for_seat_2()
    know = track(rnd.view(1))
    assert four_probability(know, 2) < 0.5  # tracking's estimate waits
    assert TrackingPlayer().choose(rnd, 1, random.Random(1)) != Call(1, "contre", 2)
    # only a dealt pair explains taking a queen while holding a pair of aces
    assert ReasonerPlayer().four(rnd.view(1), know, 2) > 0.8
    assert ReasonerPlayer().choose(rnd, 1, random.Random(1)) == Call(1, "contre", 2)


def test_reasoner_trusts_the_partner_to_call_at_once() -> None:
    """Once seat 2's partner has acted without calling kems, seat 2 holds no four."""
    rnd = _queens_for_seat_2()
    rnd.play(Refresh())
    reasoner = ReasonerPlayer()
    assert reasoner.four(rnd.view(1), track(rnd.view(1)), 2) == 0.0
    assert not isinstance(reasoner.choose(rnd, 1, random.Random(1)), Call)


def test_reasoner_kems_on_the_sign_and_double_after_the_partners_kems() -> None:
    rnd = KemsRound.from_text(DEAL, "9D 9C QD QC")
    rnd.play(Swap(0, C("KS"), C("9D")))
    rnd.play(Swap(0, C("KH"), C("9C")))
    rng = random.Random(1)
    assert ReasonerPlayer().choose(rnd, 2, rng) == Call(2, "kems")
    rnd.play(Swap(2, C("AS"), C("QD")))
    rnd.play(Swap(2, C("AH"), C("QC")))
    rnd.play(Call(2, "kems"))
    assert ReasonerPlayer().choose(rnd, 0, rng) == Call(0, "double")


def test_reasoner_never_calls_without_evidence() -> None:
    rnd = KemsRound.from_text(DEAL, "9D 9C QD QC")
    rng = random.Random(1)
    for _ in range(30):
        e = ReasonerPlayer().choose(rnd, 1, rng)
        assert not isinstance(e, Call)
        if e is None:
            rnd.play(Refresh())
        else:
            rnd.play(e)


def test_reasoner_contres_exactly_when_its_estimate_reaches_the_threshold() -> None:
    """In positions of tracking play, the reasoner (no sign lit) calls
    contre exactly when its estimate for an opponent reaches ``contre_at``."""
    contres = 0
    for seed in range(12):
        r = random.Random(seed)
        rnd = KemsMatch().new_hand(r)
        for _ in range(80):
            if rnd.is_over:
                break
            view = rnd.view(0)
            if not view.signal:
                reasoner = ReasonerPlayer()
                know = track(view)
                p = max(reasoner.four(view, know, t) for t in (1, 3))
                b = reasoner.choose(rnd, 0, random.Random(1))
                contre = isinstance(b, Call) and b.kind == "contre"
                assert contre == (p >= reasoner.contre_at), (p, b)
                contres += contre
            e = TrackingPlayer().choose(rnd, r.randrange(4), r)
            if isinstance(e, Call):
                break
            rnd.play(e if e is not None else Refresh())
    assert contres > 0
