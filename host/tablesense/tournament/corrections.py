"""The director's corrections service: a match's result changed after the fact.

Only with a reason, always audited with the result before and after; a
refused correction is audited too. (A table of three or four is corrected
by :func:`.kway.correct_table`.)
"""

from __future__ import annotations

import math

from sqlalchemy import select
from sqlalchemy.orm import Session

from tablesense.games.common import say
from tablesense.i18n import N_

from .audit import AuditTrail, DirectorError, _append_audit, _check_id, _check_text
from .db import Entrant, Match
from .scope import EventScope


class Corrections:
    """Corrections of one event's results (shares the director's scope and lock)."""

    def __init__(self, scope: EventScope, audit: AuditTrail) -> None:
        self.db = scope.db
        self.event_id = scope.event_id
        self._lock = scope.lock
        self._audit = audit

    def correct(self, match_id: int, score: tuple[float, float], winner: int | None, reason: str, actor: str) -> None:
        """Change a match's result after the fact: only with a reason, always audited."""
        if not reason.strip():
            raise DirectorError(say("a correction needs a reason"))
        reason = _check_text(reason, N_("a reason"), 1000)
        _check_id(match_id, N_("match"))
        if winner is not None:
            _check_id(winner, N_("entrant"))
        bad = [x for x in score if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x)
               or not 0 <= x <= 1_000_000]
        if len(score) != 2 or bad:
            self._audit.write(actor, "correction-refused", match_id=match_id, reason="score is not two finite numbers",
                       score=[repr(x)[:20] for x in score])
            raise DirectorError(say(
                "a score is two numbers from 0 to 1000000 in pairing order, e.g. 150-97 (NaN and Infinity are not scores)"
            ))
        with self._lock, self.db.session() as s:
            m = s.get(Match, match_id)
            if m is None or m.event_id != self.event_id:
                raise DirectorError(say("that match is not in this event (the page is out of date: reload it)"))
            if m.entrants and len(m.entrants) > 2:
                raise DirectorError(say("table {table} in round {round} is a table of {n}: correct it with one score "
                                        "per entrant in seat order (tablesense tournament correct {table} --round "
                                        "{round} --score {example}), not A-B", table=m.table_no, round=m.round_no,
                                        n=len(m.entrants), example="-".join(["0"] * len(m.entrants))))
            where = (say("the match at table {table} in round {round}", table=m.table_no, round=m.round_no)
                     if m.table_no else say("the bye in round {round}", round=m.round_no))
            if winner not in (None, m.entrant_a, m.entrant_b):
                raise DirectorError(say("{entrant} did not play {where}", entrant=_entrant_label(s, self.event_id, winner),
                                        where=where))
            # The score is in pairing order (first-named entrant first); the
            # winner is the side with more points (given or not) unless they are
            # level (a knockout tie decided otherwise), or the standings contradict it.
            leader = m.entrant_a if score[0] > score[1] else m.entrant_b if score[1] > score[0] else None
            winner = leader if winner is None else winner
            if leader is not None and winner != leader:
                raise DirectorError(say(
                    "score {score} makes {leader} the winner of {where}, not {winner}: "
                    "the score is in pairing order (first-named entrant first)",
                    score=f"{score[0]:g}-{score[1]:g}", leader=_entrant_label(s, self.event_id, leader), where=where,
                    winner=_entrant_label(s, self.event_id, winner)))
            before = {"score": [m.score_a, m.score_b], "winner": m.winner_id}
            m.score_a, m.score_b = float(score[0]), float(score[1])
            m.winner_id = winner
            m.status = "confirmed"
            m.confirmed = True
            _append_audit(s, self.event_id, actor, "correction", match_id, reason, {
                "before": before, "after": {"score": list(score), "winner": winner},
            })


def _entrant_label(s: Session, event_id: int, entrant_id: int | None) -> str:
    """``#3 Ana & Bia``: an entrant as the director knows it (its number in the event, its name)."""
    from .present import entrant_numbers, numbered

    e = s.get(Entrant, entrant_id) if entrant_id is not None else None
    if e is None or e.event_id != event_id:
        return "#?"
    numbers = entrant_numbers(s.scalars(select(Entrant.id).where(Entrant.event_id == event_id)))
    return numbered(numbers.get(e.id), e.name)
