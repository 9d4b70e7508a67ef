"""How the referee is put together: no mixin, a base with no method left for
another part to fill in (no stub), its state one typed dataclass, and its
parts (journal, buttons, coach, display) composed over it."""

from __future__ import annotations

import inspect

from tablekit import Hands, make_referee, perform

from tablesense.referee.base import RefereeBase
from tablesense.referee.buttons import TableButtons
from tablesense.referee.coaching import TableCoach
from tablesense.referee.core import MatchSpec, Referee
from tablesense.referee.journaling import TableJournal
from tablesense.referee.state import MatchState, Phase
from tablesense.referee.view import TableDisplay
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry


def test_the_base_declares_no_stub_for_another_part() -> None:
    stubs = [
        name
        for name, fn in vars(RefereeBase).items()
        if inspect.isfunction(fn) and "raise NotImplementedError" in inspect.getsource(fn)
    ]
    assert stubs == []


def test_no_mixin_and_four_composed_parts_over_a_typed_state() -> None:
    assert Referee.__mro__ == (Referee, RefereeBase, object)
    ref = Referee(MatchSpec("kems", "classic", seed=3), TableGeometry.load("kems-4"), TagRegistry.virtual(0))
    parts = {"journal": TableJournal, "buttons": TableButtons, "coaching": TableCoach, "display": TableDisplay}
    for name, kind in parts.items():
        part = getattr(ref, name)
        assert isinstance(part, kind) and part.ref is ref, name
    # a hand's end is the journal's: it lives beside the deal that follows it
    assert not hasattr(ref, "_finish") and not hasattr(ref, "_next_hand") and not hasattr(ref, "_commit")
    assert isinstance(ref.state, MatchState) and ref.state.phase is Phase.IDLE
    # what changes as a match is played is in the state, not loose on the referee
    loose = set(vars(ref)) - {"spec", "geometry", "registry", "timing", "game", "match", "rules", "state",
                              "cells", "boards_kind", "_emit", "_open_cells"} - set(parts)
    assert loose == set()


def test_the_phase_is_the_enum_after_each_step() -> None:
    ref, _, _ = make_referee()
    assert ref.state.phase is Phase.PLAY
    h = Hands(ref)
    h.settle()
    perform(h, ref.hand.legal_moves()[-1])
    assert type(ref.state.phase) is Phase and ref.view()["phase"] == "play"


def test_an_undo_undoes_a_pending_end_with_its_move() -> None:
    ref, _, stored = make_referee()
    h = Hands(ref)
    h.settle()
    perform(h, ref.hand.legal_moves()[-1])
    assert ref.state.accepted == 1
    ref.state.finish_at = ref.state.now + 5.0  # as a Kems call waiting for its partner's double
    ref.referee_press()
    assert ref.buttons.menu is not None and ref.buttons.menu.action == "undo"
    ref.press(2)
    assert stored[-1] == {"type": "undo", "by": 2}
    assert ref.state.accepted == 0 and ref.state.finish_at is None
