"""Hypothesis properties of the Kems engine: random legal rounds end or are
refreshed safely, cards are conserved, undo is exact, and the engine and
replay agree on what is legal."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tablesense.games.common import IllegalStepError, RecordFormatError
from tablesense.games.kems import (
    Call,
    Card,
    KemsEvent,
    KemsMatch,
    KemsOptions,
    KemsRound,
    Refresh,
    Swap,
    deck,
    event_to_json,
    replay_record,
)

SETTINGS = settings(max_examples=60, deadline=None)

options_st = st.fixed_dictionaries(
    {},
    optional={
        "double_points": st.sampled_from([2, 3]),
        "false_call": st.sampled_from(["opponents-plus-one", "caller-minus-one"]),
        "false_double": st.sampled_from(["penalty", "kems-stands"]),
        "double_contre": st.sampled_from(["both-hands", "never"]),
        "allow_take_back": st.booleans(),
        "refresh": st.sampled_from(["bottom", "discard"]),
        "misdeal_at": st.sampled_from([3, 4, None]),
    },
)


def table(seats: int, values: dict[str, Any], seed: int) -> tuple[KemsMatch, KemsRound]:
    match = KemsMatch(KemsOptions.from_dict(values, seats), seats)
    return match, match.new_hand(random.Random(seed))


def conserved(rnd: KemsRound) -> None:
    cards = rnd.cards_in_play()
    assert Counter(cards) == Counter(deck(rnd.options.deck))
    assert all(len(h) == 4 for h in rnd.hands)
    assert len(rnd.board) == 4


def random_event(rnd: KemsRound, rng: random.Random, call_rate: float) -> KemsEvent:
    """A random legal event: mostly swaps, some refreshes, rarely a call."""
    x = rng.random()
    if x < call_rate or rnd.is_over:
        seat = rng.randrange(rnd.seats)
        calls = (
            [c for s in range(rnd.seats) for c in rnd.legal_calls(s)]
            if rnd.is_over
            else rnd.legal_calls(seat)
        )
        return rng.choice(calls)
    if x < call_rate + 0.15:
        return Refresh()
    seat = rng.randrange(rnd.seats)
    return rng.choice(rnd.legal_swaps(seat))


@SETTINGS
@given(
    seats=st.sampled_from([4, 6, 8]),
    values=options_st,
    seed=st.integers(0, 2**32),
    steps=st.integers(0, 300),
)
def test_random_legal_rounds_end_or_refresh_safely(
    seats: int, values: dict[str, Any], seed: int, steps: int
) -> None:
    _, rnd = table(seats, values, seed)
    rng = random.Random(seed ^ 0x5EED)
    conserved(rnd)
    for _ in range(steps):
        if rnd.is_over and not rnd.awaiting_double:
            break
        event = random_event(rnd, rng, call_rate=0.01)
        assert rnd.is_legal(event)
        rnd.play(event)
        conserved(rnd)
    if rnd.is_over:
        result = rnd.result()
        assert len(result.points) == seats // 2
        assert result.outcome in ("kems", "double", "contre", "redeal", "void")
        # a round moves the score by at most double_points
        assert all(abs(p) <= rnd.options.double_points for p in result.points)
        if result.outcome in ("redeal", "void"):
            assert set(result.points) == {0}
        else:
            assert any(p != 0 for p in result.points)


@SETTINGS
@given(seats=st.sampled_from([4, 6, 8]), values=options_st, seed=st.integers(0, 2**32))
def test_undo_restores_the_exact_state(seats: int, values: dict[str, Any], seed: int) -> None:
    _, rnd = table(seats, values, seed)
    if rnd.is_misdeal:
        return
    rng = random.Random(seed)
    states = []
    while not rnd.is_over and len(states) < 80:
        states.append(
            ([list(h) for h in rnd.hands], list(rnd.board), list(rnd.stock), list(rnd.discards))
        )
        rnd.play(random_event(rnd, rng, call_rate=0.02))
    while rnd.events:
        rnd.undo()
        assert ([list(h) for h in rnd.hands], rnd.board, rnd.stock, rnd.discards) == states.pop()
        assert not rnd.is_over


def record_of(
    rnd: KemsRound, events: list[dict[str, Any]], values: dict[str, Any]
) -> dict[str, Any]:
    obj = rnd.to_json()
    obj["events"] = events
    return {
        "format": "tablesense.record/1",
        "game": "kems",
        "variant": "classic",
        "options": KemsOptions.from_dict(values, rnd.seats).to_dict(),
        "hands": [obj],
    }


def any_event(rnd: KemsRound, rng: random.Random) -> KemsEvent:
    """Any well-formed event, legal or not."""
    cards = deck(52)
    seat = rng.randrange(rnd.seats + 1)  # sometimes a seat that does not exist
    kind = rng.random()
    if kind < 0.6:
        give = rng.choice(rnd.hands[seat % rnd.seats] + cards[:4])
        take = rng.choice(rnd.board + rnd.hands[rng.randrange(rnd.seats)] + [give])
        return Swap(seat, give, take)
    if kind < 0.75:
        return Refresh()
    call = rng.choice(["kems", "double", "contre"])
    return Call(seat, call, rng.randrange(rnd.seats + 1) if call == "contre" else None)  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(seats=st.sampled_from([4, 6, 8]), values=options_st, seed=st.integers(0, 2**32))
def test_engine_legal_iff_replay_accepts(seats: int, values: dict[str, Any], seed: int) -> None:
    """Play a random mix of legal and illegal events through the engine: a
    record of the legal prefix plus the first rejected event is rejected by
    replay at exactly that index, and a record of legal events that ends
    with a call replays to the engine's own result."""
    _, rnd = table(seats, values, seed)
    rng = random.Random(seed)
    fresh = KemsRound(rnd.deal, rnd.initial_board, rnd.initial_stock, rnd.options)
    written: list[dict[str, Any]] = []
    for _ in range(60):
        closed = rnd.is_over and not rnd.awaiting_double
        if closed and rng.random() < 0.5:
            break  # a complete round: replay must accept it
        if closed or rng.random() < 0.04:
            event = any_event(rnd, rng)  # often illegal
        else:
            event = random_event(rnd, rng, call_rate=0.03)
        written.append(event_to_json(event))
        if rnd.is_legal(event):
            rnd.play(event)
            continue
        bad_seat = any(
            isinstance(v, int) and not 0 <= v < seats
            for v in (getattr(event, "seat", None), getattr(event, "target", None))
        )
        try:
            replay_record(record_of(fresh, written, values))
        except IllegalStepError as err:
            assert not bad_seat, "a seat that does not exist is a format error (exit 2)"
            assert (err.hand, err.move) == (0, len(written) - 1)
        except RecordFormatError as err:
            assert bad_seat, err
            assert f"events[{len(written) - 1}]" in str(err)
        else:
            raise AssertionError(f"replay accepted {event}, which the engine rejects")
        return
    # every event was legal
    if rnd.is_over:
        result = replay_record(record_of(fresh, written, values))
        assert result.hands[0] == rnd.result()
    else:
        try:
            replay_record(record_of(fresh, written, values))
        except IllegalStepError as err:
            assert err.move == len(written)
        else:
            raise AssertionError("replay accepted a round without a call")


@SETTINGS
@given(seats=st.sampled_from([4, 6, 8]), seed=st.integers(0, 2**32))
def test_dealt_rounds_are_well_formed(seats: int, seed: int) -> None:
    match = KemsMatch(seats=seats)
    rnd = match.new_hand(random.Random(seed))
    conserved(rnd)
    assert len(set(rnd.cards_in_play())) == match.options.deck
    assert rnd.is_misdeal == any(max(Counter(c.rank for c in h).values()) >= 3 for h in rnd.hands)
    # a card that is not in the 32-card deck never appears in a 32-card game
    if match.options.deck == 32:
        assert all(c.rank in "789TJQKA" for c in rnd.cards_in_play())


@SETTINGS
@given(text=st.text(alphabet="0123456789TJQKAXSHDCth ", max_size=4))
def test_card_parse_accepts_exactly_the_52_names(text: str) -> None:
    names = {str(c) for c in deck(52)}
    try:
        card = Card.parse(text)
    except ValueError:
        assert text not in names
    else:
        assert str(card) == text


def test_record_format_errors_are_not_illegal_steps() -> None:
    # a sanity check of the split the properties rely on
    try:
        replay_record({"variant": "classic", "options": {}, "hands": [{"deal": 1}]})
    except RecordFormatError:
        pass
    else:  # pragma: no cover
        raise AssertionError("expected a format error")
