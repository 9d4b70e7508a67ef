"""How the referee is put together: its base is state and helpers with no
method left for another part to fill in (no stub), one mixin (the journal),
and its other parts composed over it."""

from __future__ import annotations

import inspect

from tablekit import Hands, make_referee, perform

from tablesense.referee.base import RefereeBase
from tablesense.referee.buttons import TableButtons
from tablesense.referee.coaching import TableCoach
from tablesense.referee.core import MatchSpec, Referee
from tablesense.referee.journaling import JournalMixin
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


def test_one_mixin_and_three_composed_parts() -> None:
    assert Referee.__mro__ == (Referee, JournalMixin, RefereeBase, object)
    ref = Referee(MatchSpec("kems", "classic", seed=3), TableGeometry.load("kems-4"), TagRegistry.virtual(0))
    parts = {"buttons": TableButtons, "coaching": TableCoach, "display": TableDisplay}
    for name, kind in parts.items():
        part = getattr(ref, name)
        assert isinstance(part, kind) and part.ref is ref, name
    # a hand's end is the journal's: it lives beside the deal that follows it
    assert Referee._finish is JournalMixin._finish and Referee._next_hand is JournalMixin._next_hand


def test_an_undo_undoes_a_pending_end_with_its_move() -> None:
    ref, _, stored = make_referee()
    h = Hands(ref)
    h.settle()
    perform(h, ref.hand.legal_moves()[-1])
    assert ref.accepted == 1
    ref.finish_at = ref.now + 5.0  # as a Kems call waiting for its partner's double
    ref.referee_press()
    assert ref.buttons.menu is not None and ref.buttons.menu.action == "undo"
    ref.press(2)
    assert stored[-1] == {"type": "undo", "by": 2}
    assert ref.accepted == 0 and ref.finish_at is None
