"""What the referee shows: the public display state (:meth:`TableDisplay.view`,
published as the ``view`` event), the text of each move, teams and scores.

Everything here goes to every display subscriber (the page, ``/ws``,
``/events``, ``/api/view``), so it holds only what everyone at the table may
see. The display is a part composed into the referee (``referee.display``):
it reads the referee through :class:`ShownReferee` and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from tablesense.games.common import say
from tablesense.referee.facts import RefereeFacts
from tablesense.referee.rules import Rejection
from tablesense.referee.spec import Emit
from tablesense.referee.state import Phase


class _Reviews(Protocol):
    def annotate(self, record: dict[str, Any]) -> dict[str, Any]: ...

    def review_view(self) -> dict[str, Any] | None: ...


class ShownReferee(RefereeFacts, Protocol):
    """What the display reads of the referee it is part of (it writes nothing)."""

    @property
    def coaching(self) -> _Reviews: ...

    @property
    def _emit(self) -> Emit: ...

    def _finished(self) -> list[Any]: ...

    def _to_play(self) -> int | None: ...

    def _target(self) -> Any: ...

    def _rejection_data(self, rejection: Rejection) -> dict[str, Any]: ...

class TableDisplay:
    """The referee's public display state (``referee.display``): the whole
    view (:meth:`view`, published by :meth:`publish`), the game record
    (:meth:`record`), the words for moves and teams."""

    def __init__(self, referee: ShownReferee) -> None:
        self.ref = referee

    def record(self, limit: int | None = None) -> dict[str, Any]:
        """The match's game record (finished hands; the first ``limit``)."""
        rec = self.ref.coaching.annotate(self.ref.match.to_record())
        if limit is not None:
            rec["hands"] = rec["hands"][:limit]
        return rec

    def accepted_in_hand(self) -> int:
        """Moves (or Kems events) accepted in the current hand so far."""
        hand = self.ref.hand
        if hand is None:
            return 0
        moves = getattr(hand, "moves", None)
        return len(moves if moves is not None else hand.events)

    def last_move_text(self) -> str | None:
        hand = self.ref.hand
        if hand is None:
            return None
        moves = getattr(hand, "moves", None)
        if moves is None:
            moves = getattr(hand, "events", [])
        return self.move_text(moves[-1]) if moves else None

    def move_text(self, move: Any) -> str:
        name = type(move).__name__
        seat = getattr(move, "seat", None)
        who = self.ref.rules.seat_label(seat) if isinstance(seat, int) else say("the table")
        if name == "Play":
            if move.end == "left":
                return say("{who} plays {tile} on the left end", who=who, tile=str(move.tile))
            if move.end == "right":
                return say("{who} plays {tile} on the right end", who=who, tile=str(move.tile))
            return say("{who} plays {tile}", who=who, tile=str(move.tile))
        if name == "Pass":
            return say("{who} passes", who=who)
        if name == "Draw":
            return say("{who} draws", who=who)
        if name == "Announce":
            return say("{who} announces {tile}", who=who, tile=str(move.tile))
        if name == "Swap":
            return say("{who} gives {give}, takes {take}", who=who, give=str(move.give), take=str(move.take))
        if name == "Refresh":
            return say("new board cards")
        if name == "Call":
            call = _call_word(move.kind)
            if move.target is not None:
                return say(
                    "{who} calls {call} on {target}",
                    who=who, call=call, target=self.ref.rules.seat_label(move.target),
                )
            return say("{who} calls {call}", who=who, call=call)
        return str(move)

    def rack_counts(self) -> list[int] | None:
        """Dominoes: the pips left on each rack of the hand just finished (the
        count the score comes from); None for Kems."""
        done = self.ref._finished()
        return self.ref.game.rack_pips(done[-1]) if done else None

    def team_of_seat(self, seat: int) -> int:
        return self.ref.match.team_of(seat)

    def team_names(self) -> list[str]:
        """``"South & North"`` per team (a seat's name when it plays alone)."""
        n = len(self.ref.spec.seat_names)
        teams: dict[int, list[str]] = {}
        for seat in range(n):
            teams.setdefault(self.team_of_seat(seat), []).append(self.ref.rules.seat_label(seat))
        return [_together(teams[t]) for t in sorted(teams)]

    def view(self) -> dict[str, Any]:
        """The whole public display state (CONTRACTS section 6)."""
        ref = self.ref
        spec = ref.spec
        hand = ref.hand if ref.hand is not None else self._last_finished()
        sensed = ref.state.sensed
        to_play = ref._to_play()
        seats = [
            {
                "index": i,
                "name": ref.rules.seat_label(i),
                "team": self.team_of_seat(i),
                "count": len(hand.hands[i]) if hand is not None else None,
                "is_turn": to_play == i,
                "kind": spec.seat_kinds[i] if i < len(spec.seat_kinds) else "human",
            }
            for i in range(len(spec.seat_names))
        ]
        out: dict[str, Any] = {
            "game": spec.game,
            # what the pages draw differently per game, so they never branch on its name
            "facts": ref.game.page_facts(),
            "variant": spec.variant,
            "table": ref.geometry.name,
            "seats": seats,
            "scores": [_num(p) for p in ref.match.score],
            "target": ref._target(),
            "hand_no": ref.state.hand_no,
            "to_play": to_play,
            "message": None if ref.state.message is None else ref.state.message.to_json(),
            "boards": [
                {"id": b.id, "online": not (sensed and b.id in sensed.boards_offline)}
                for b in ref.geometry.boards
            ],
            "last_move": ref.state.last_move,
            "result": self._result_view(),
            "phase": ref.state.phase.value,
            "paused": ref.state.paused,
            "correction": self._public_correction(),
            "match_over": ref.match.is_over,
            "winner": ref.match.winner,
            "moves": ref.state.accepted,
            "review": ref.coaching.review_view(),
        }
        done = ref._finished()
        out.update(ref.game.pieces_view(hand, done[-1] if done else None, ref.state.last_hand_no,
                                        boneyard=bool(ref.geometry.boneyard)))
        return out

    def _result_view(self) -> dict[str, Any] | None:
        """The last result, with ``how`` its outcome as the rule texts name it
        (in the table's language; the page shows it beside the points)."""
        result = self.ref.state.last_result
        if not result:
            return result
        how = result.get("label") or result.get("outcome") or ""
        return {**result, "how": _OUTCOMES.get(how, how)}

    def _public_correction(self) -> dict[str, Any] | None:
        """The pending correction as everyone may read it (no hidden piece)."""
        if self.ref.state.correction is None:
            return None
        data = self.ref._rejection_data(self.ref.state.correction)
        data.pop("private", None)
        return data

    def _last_finished(self) -> Any:
        if self.ref.state.phase not in (Phase.BETWEEN, Phase.OVER):
            return None
        done = self.ref._finished()
        return done[-1] if done else None

    def publish(self) -> None:
        """Send the view to every display (the ``view`` event)."""
        self.ref._emit("view", **self.view())


def _num(p: float) -> int | float:
    return int(p) if float(p).is_integer() else float(p)


#: Hand and round results by the names the rule texts give them: the Brazilian
#: terms as seed 001 writes them (a short gloss in English only), the Kems
#: calls as seed 003 says them in Malay ("melawan Kems" for contre).
_OUTCOMES: dict[str, str] = {
    "batida": say("batida: went out"),
    "batida de bucha": say("batida de bucha: went out with a double"),
    "cruzada": say("cruzada: a double out on both ends"),
    "lá-e-lô": say("lá-e-lô: the last tile fits both ends"),
    "quadriciclo": say("quadriciclo: out with the announced double"),
    "4x4": say("4x4: the announced double, out on both ends"),
    "cegonha": say("cegonha: three doubles dead, out on both ends"),
    "domino": say("went out"),
    "blocked": say("blocked"),
    "kems": say("Kems"),
    "false kems": say("false Kems"),
    "double kems": say("Double Kems"),
    "kems, false double": say("Kems, false Double Kems"),
    "false double": say("false Double Kems"),
    "contre": say("contre: against a Kems"),
    "double contre": say("double contre"),
    "failed contre": say("failed contre"),
    "void": say("voided by the referee"),
    "misdeal": say("misdeal"),
}


def _together(names: Sequence[str]) -> str:
    """A team's name: its seats joined ("South & North"), translatable."""
    if len(names) == 1:
        return names[0]
    return say("{first} & {rest}", first=names[0], rest=_together(names[1:]))


def _call_word(kind: str) -> str:
    """A Kems call by the name seed 003 gives it (Kems, Double Kems, contre)."""
    words = {"kems": say("Kems"), "double": say("Double Kems"), "contre": say("contre")}
    return words.get(kind, kind)


def _scores(teams: Sequence[str], pts: Sequence[float]) -> str:
    if not pts or not teams:
        return ""
    head = say("{team} {points}", team=teams[0], points=f"{_num(pts[0]):+}")
    if len(pts) == 1 or len(teams) == 1:
        return head
    return say("{first}, {rest}", first=head, rest=_scores(teams[1:], pts[1:]))


def _result_text(result: Mapping[str, Any], teams: Sequence[str], word: str = "hand") -> str:
    kems = word == "round"
    if not result:
        return say("round over") if kems else say("hand over")
    winner = result.get("winner")
    how = result.get("label") or result.get("outcome") or ""
    how = _OUTCOMES.get(how, how)
    pts = result.get("points") or []
    who = say("nobody scores") if winner is None else say("{team} win", team=teams[winner])
    scored = _scores(teams, pts)
    if kems:
        return say("round {n}: {who} ({how}); {scored}", n=result.get("hand_no"), who=who, how=how, scored=scored)
    return say("hand {n}: {who} ({how}); {scored}", n=result.get("hand_no"), who=who, how=how, scored=scored)
