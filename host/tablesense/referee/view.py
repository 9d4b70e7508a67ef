"""What the referee shows: the public display state (:meth:`ViewMixin.view`,
published as the ``view`` event), the text of each move, teams and scores.

Everything here goes to every display subscriber (the page, ``/ws``,
``/events``, ``/api/view``), so it holds only what everyone at the table may
see.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tablesense.games.common import say
from tablesense.referee.base import RefereeBase


class ViewMixin(RefereeBase):
    """The public display state and the texts of moves and results."""

    def finished_hands(self) -> list[Any]:
        """Hands (rounds) finished so far, voided ones not included."""
        return self._finished()

    def record(self, limit: int | None = None) -> dict[str, Any]:
        """The match's game record (finished hands; the first ``limit``)."""
        rec = self.coaching.annotate(self.match.to_record())
        if limit is not None:
            rec["hands"] = rec["hands"][:limit]
        return rec

    def accepted_in_hand(self) -> int:
        """Moves (or Kems events) accepted in the current hand so far."""
        hand = self.hand
        if hand is None:
            return 0
        moves = getattr(hand, "moves", None)
        return len(moves if moves is not None else hand.events)

    def last_move_text(self) -> str | None:
        hand = self.hand
        if hand is None:
            return None
        moves = getattr(hand, "moves", None)
        if moves is None:
            moves = getattr(hand, "events", [])
        return self._move_text(moves[-1]) if moves else None

    def _move_text(self, move: Any) -> str:
        name = type(move).__name__
        seat = getattr(move, "seat", None)
        who = self.rules.seat_label(seat) if isinstance(seat, int) else say("the table")
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
                    who=who, call=call, target=self.rules.seat_label(move.target),
                )
            return say("{who} calls {call}", who=who, call=call)
        return str(move)

    def _rack_counts(self) -> list[int] | None:
        """Dominoes: the pips left on each rack of the hand just finished (the
        count the score comes from); None for Kems."""
        done = self._finished()
        return self.game.rack_pips(done[-1]) if done else None

    def team_of_seat(self, seat: int) -> int:
        return self.match.team_of(seat)

    def team_names(self) -> list[str]:
        """``"South & North"`` per team (a seat's name when it plays alone)."""
        n = len(self.spec.seat_names)
        teams: dict[int, list[str]] = {}
        for seat in range(n):
            teams.setdefault(self.team_of_seat(seat), []).append(self.rules.seat_label(seat))
        return [_together(teams[t]) for t in sorted(teams)]

    def view(self) -> dict[str, Any]:
        """The whole public display state (CONTRACTS section 6)."""
        spec = self.spec
        hand = self.hand if self.hand is not None else self._last_finished()
        n = len(spec.seat_names)
        seats = []
        to_play = self._to_play()
        for i in range(n):
            team = self.team_of_seat(i)
            count = len(hand.hands[i]) if hand is not None else None
            seats.append(
                {
                    "index": i,
                    "name": self.rules.seat_label(i),
                    "team": team,
                    "count": count,
                    "is_turn": to_play == i,
                    "kind": spec.seat_kinds[i] if i < len(spec.seat_kinds) else "human",
                }
            )
        out: dict[str, Any] = {
            "game": spec.game,
            "variant": spec.variant,
            "table": self.geometry.name,
            "seats": seats,
            "scores": [_num(p) for p in self.match.score],
            "target": self._target(),
            "hand_no": self.hand_no,
            "to_play": to_play,
            "message": self.message,
            "boards": [
                {"id": b.id, "online": not (self.sensed and b.id in self.sensed.boards_offline)}
                for b in self.geometry.boards
            ],
            "last_move": self.last_move,
            "result": self._result_view(),
            "phase": self.phase.value,
            "paused": self.paused,
            "correction": self._public_correction(),
            "match_over": self.match.is_over,
            "winner": self.match.winner,
            "moves": self.accepted,
            "review": self.coaching.review_view(),
        }
        done = self._finished()
        out.update(self.game.pieces_view(hand, done[-1] if done else None, self.last_hand_no,
                                         boneyard=bool(self.geometry.boneyard)))
        return out

    def _result_view(self) -> dict[str, Any] | None:
        """The last result, with ``how`` its outcome as the rule texts name it
        (in the table's language; the page shows it beside the points)."""
        if not self.last_result:
            return self.last_result
        how = self.last_result.get("label") or self.last_result.get("outcome") or ""
        return {**self.last_result, "how": _OUTCOMES.get(how, how)}

    def _public_correction(self) -> dict[str, Any] | None:
        """The pending correction as everyone may read it (no hidden piece)."""
        if self.correction is None:
            return None
        data = self._rejection_data(self.correction)
        data.pop("private", None)
        return data

    def _last_finished(self) -> Any:
        if self.phase not in ("between", "over"):
            return None
        done = self._finished()
        return done[-1] if done else None

    def _view(self) -> None:
        self._emit("view", **self.view())


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
