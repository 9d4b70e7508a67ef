"""The director's pairing service: rounds, their matches, standings, assignments.

Pairs the next round with the event's format (:mod:`.pairing` holds the
algorithms, :mod:`.kway` the tables of three or four), stores it with its
audit entry in one transaction, and says what each table plays (the
payload of its retained ``assign`` topic, badges as salted digests).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tablesense.games.common import say

from . import kway
from . import pairing as pr
from .audit import DirectorError, _append_audit
from .confirmation import DEFAULT_MODE as DEFAULT_CONFIRM
from .db import Entrant, Match, Round, Table
from .remote_pairs import add_to_assignments
from .scope import EventScope
from .security import badge_digest
from .standings import MatchOutcome, Standing, compute_standings


class Rounds:
    """Pairing and standings of one event (shares the director's scope and lock)."""

    def __init__(self, scope: EventScope) -> None:
        self.db = scope.db
        self.event_id = scope.event_id
        self._lock = scope.lock
        self.event = scope.event
        self.options = scope.options
        self.current_round_no = scope.current_round_no

    def entrants_per_table(self) -> int:
        """2 for matches between two entrants; 3 or 4 for the k-entrant events of kway.py."""
        with self.db.session() as s:
            ev = self.event(s)
            return kway.entrants_per_table(ev.game, ev.variant, int(ev.options.get("seats", 4)))

    def round_complete(self, round_no: int | None = None) -> bool:
        with self.db.session() as s:
            rnd = round_no or self.current_round_no(s)
            if rnd == 0:
                return True
            left = s.scalar(
                select(func.count(Match.id)).where(
                    Match.event_id == self.event_id, Match.round_no == rnd, Match.confirmed.is_(False)
                )
            )
            return not left

    def matches(self, round_no: int | None = None) -> list[Match]:
        with self.db.session() as s:
            q = select(Match).where(Match.event_id == self.event_id)
            if round_no is not None:
                q = q.where(Match.round_no == round_no)
            return list(s.scalars(q.order_by(Match.round_no, Match.number)))

    def outcomes(self, s: Session, *, stage: str | None = None, round_nos: set[int] | None = None) -> list[MatchOutcome]:
        q = select(Match, Round.stage).join(Round, Round.id == Match.round_id).where(
            Match.event_id == self.event_id, Match.status.in_(("reported", "confirmed"))
        )
        out = []
        for m, st in s.execute(q):
            if stage is not None and st != stage:
                continue
            if round_nos is not None and m.round_no not in round_nos:
                continue
            out.append(
                MatchOutcome(m.round_no, m.entrant_a, m.entrant_b, m.score_a or 0.0, m.score_b or 0.0, m.winner_id, m.kind)
            )
        return out

    def standings(self, *, stage: str | None = None, members: Sequence[int] | None = None) -> list[Standing]:
        with self.db.session() as s:
            ev = self.event(s)
            k = kway.entrants_per_table(ev.game, ev.variant, int(ev.options.get("seats", 4)))
            if k > 2:  # tables of k: placement points (kway.py)
                ids = [e for e in s.scalars(select(Entrant.id).where(Entrant.event_id == self.event_id))]
                counted = [(m.kind, kway.match_entrants(m), kway.match_scores(m)) for m in s.scalars(select(Match).where(
                    Match.event_id == self.event_id, Match.status.in_(("reported", "confirmed"))))]
                return kway.compute_standings(ids, counted, ev.options["tiebreaks"], k=k, lots_seed=ev.options["lots_seed"])
            ids = list(members) if members is not None else [
                e for e in s.scalars(select(Entrant.id).where(Entrant.event_id == self.event_id))
            ]
            outs = self.outcomes(s, stage=stage)
            if members is not None:
                keep = set(ids)
                outs = [o for o in outs if o.a in keep and (o.b is None or o.b in keep)]
            return compute_standings(ids, outs, ev.options["tiebreaks"], lots_seed=ev.options["lots_seed"])

    def pair_next_round(self, actor: str = "director", *, force: bool = False) -> int:
        """Pair and store the next round; returns its number.

        Refuses while the current round has unconfirmed matches (``force``
        overrides, for a director who accepts a result by other means).
        """
        if self.entrants_per_table() > 2:
            return kway.pair_next_round(self, actor, force=force)
        with self._lock:
            with self.db.session() as s:
                ev = self.event(s)
                cur = self.current_round_no(s)
            if cur and not force and not self.round_complete(cur):
                raise DirectorError(say("round {n} still has matches without a confirmed result", n=cur))
            nxt = cur + 1
            stage, pairs, groups = self.plan_round(nxt)
            with self.db.session() as s:
                ev = self.event(s)
                tables = sorted(s.scalars(select(Table.number).where(Table.event_id == self.event_id)))
                rnd = Round(event_id=self.event_id, number=nxt, stage=stage, status="paired")
                s.add(rnd)
                s.flush()
                best_of = int(ev.options.get("best_of", 1)) if stage == "knockout" else 1
                byes_requested = [
                    e.id for e in s.scalars(select(Entrant).where(Entrant.event_id == self.event_id)) if nxt in e.bye_rounds
                ]
                table_i = 0
                for number, p in enumerate(pairs, start=1):
                    m = Match(
                        event_id=self.event_id, round_id=rnd.id, round_no=nxt, number=number,
                        entrant_a=p.a, entrant_b=p.b, kind="match", best_of=best_of, status="pending",
                        group_no=groups.get(p.a), games=[], confirmed=False,
                    )
                    if p.b is None:
                        bp = ev.options.get("bye_points", [0, 0])
                        m.kind = "pairing-bye"
                        m.score_a, m.score_b = float(bp[0]), float(bp[1])
                        m.winner_id = p.a
                        m.status = "confirmed"
                        m.confirmed = True
                    else:
                        m.table_no = tables[table_i % len(tables)] if tables else None
                        table_i += 1
                    s.add(m)
                for i, e in enumerate(byes_requested, start=len(pairs) + 1):
                    s.add(Match(
                        event_id=self.event_id, round_id=rnd.id, round_no=nxt, number=i, entrant_a=e, entrant_b=None,
                        kind="requested-bye", best_of=1, status="confirmed", score_a=0.0, score_b=0.0,
                        winner_id=None, games=[], confirmed=True,
                    ))
                ev.status = "running"
                _append_audit(s, self.event_id, actor, "round-paired", None, "", {
                    "round": nxt, "stage": stage, "pairs": [[p.a, p.b] for p in pairs], "requested_byes": byes_requested,
                })
            return nxt

    def plan_round(self, nxt: int) -> tuple[str, list[pr.Pairing], dict[int, int]]:
        with self.db.session() as s:
            ev = self.event(s)
            opts = ev.options
            entrants = list(s.scalars(select(Entrant).where(Entrant.event_id == self.event_id).order_by(Entrant.seed, Entrant.id)))
            active = [e for e in entrants if e.status != "withdrawn" and nxt not in e.bye_rounds]
            seeded_ids = [e.id for e in entrants if e.status != "withdrawn"]
            history = list(s.execute(select(Match.entrant_a, Match.entrant_b, Match.round_no, Match.kind, Match.winner_id, Match.group_no).where(Match.event_id == self.event_id)))
            rounds_done = {r.number: r.stage for r in s.scalars(select(Round).where(Round.event_id == self.event_id))}
            fmt = ev.format
        rng = random.Random(f"{opts['lots_seed']}:round:{nxt}")
        if fmt == "swiss":
            if nxt > int(opts["rounds"]):
                raise DirectorError(say("the Swiss has {n} rounds; the event is over", n=opts["rounds"]))
            if len(active) < 2:
                raise DirectorError(say("fewer than two active entrants"))
            if nxt == 1:
                if opts["first_round"] == "rating":  # neighbours in club rating meet: even first games (ratings.py)
                    from .ratings import rating_order

                    order = rating_order(self.db, self.event_id, [e.id for e in active])
                    return "swiss", pr.swiss_first_round(order, seeded=False, rng=None), {}
                return "swiss", pr.swiss_first_round([e.id for e in active], seeded=opts["first_round"] == "seeded", rng=rng), {}
            met = pr.opponents_map((a, b) for a, b, *_ in history)
            had_bye = {a for a, b, _r, kind, *_ in history if kind == "pairing-bye"}
            table = self.standings()
            rank = {st.entrant: i for i, st in enumerate(table)}
            score = {st.entrant: st.games_won for st in table}
            players = [
                pr.SwissPlayer(e.id, score[e.id], rank[e.id], frozenset(met.get(e.id, ())), e.id in had_bye) for e in active
            ]
            return "swiss", pr.swiss_pairings(players), {}
        if fmt == "round-robin":
            rounds = pr.berger_rounds(seeded_ids)
            if nxt > len(rounds):
                raise DirectorError(say("every round of the round robin has been played"))
            return "round-robin", [p for p in rounds[nxt - 1] if _active(p, active)], {}
        if fmt == "knockout":
            return "knockout", self._knockout_round(seeded_ids, rounds_done), {}
        # groups then knockout
        groups = pr.snake_groups(seeded_ids, int(opts["group_size"]))
        group_rounds = pr.group_stage_rounds(groups)
        group_of = {e: gi + 1 for gi, g in enumerate(groups) for e in g}
        if nxt <= len(group_rounds):
            return "group", [p for p in group_rounds[nxt - 1] if _active(p, active)], group_of
        return "knockout", self._knockout_round(seeded_ids, rounds_done, groups), {}

    def _knockout_round(
        self, seeded_ids: list[int], rounds_done: dict[int, str], groups: list[list[int]] | None = None
    ) -> list[pr.Pairing]:
        """The first knockout round from seeds (or group places), later ones from the winners."""
        ko_rounds = sorted(n for n, st in rounds_done.items() if st == "knockout")
        if not ko_rounds:
            if groups is not None:
                ranked = [[st.entrant for st in self.standings(stage="group", members=g)] for g in groups]
                seeds = pr.knockout_seeds_from_groups(ranked, int(self.options()["advance"]))
            else:
                seeds = seeded_ids
            return pr.knockout_first_round(seeds)
        last = ko_rounds[-1]
        with self.db.session() as s:
            ms = list(s.scalars(select(Match).where(Match.event_id == self.event_id, Match.round_no == last).order_by(Match.number)))
        winners = [m.winner_id for m in ms]
        if any(w is None for w in winners):
            raise DirectorError(say("knockout round {n} has a match without a winner", n=last))
        if len(winners) == 1:
            raise DirectorError(say("the knockout is decided; the event is over"))
        return pr.knockout_next_round([w for w in winners if w is not None])

    # ------------------------------------------------------------ assignments

    def assignments(self, round_no: int | None = None) -> dict[int, dict[str, Any]]:
        """What each table must play this round: the payload of its retained ``assign`` topic."""
        with self.db.session() as s:
            ev = self.event(s)
            rnd = round_no or self.current_round_no(s)
            names = {e.id: e for e in s.scalars(select(Entrant).where(Entrant.event_id == self.event_id))}
            salt = badge_salt(ev.options)
            out: dict[int, dict[str, Any]] = {}
            keys: dict[int, str] = {}
            for t, key in s.execute(select(Table.number, Table.public_key).where(Table.event_id == self.event_id)):
                out[t] = {"event": self.event_id, "round": rnd, "table": t, "matches": []}
                keys[t] = key
            for m in s.scalars(select(Match).where(Match.event_id == self.event_id, Match.round_no == rnd, Match.table_no.is_not(None)).order_by(Match.number)):
                assert m.entrant_b is not None and m.table_no is not None
                sides = [names[e] for e in kway.match_entrants(m)]
                out.setdefault(m.table_no, {"event": self.event_id, "round": rnd, "table": m.table_no, "matches": []})["matches"].append({
                    "match": m.id,
                    "number": m.number,
                    "game": ev.game,
                    "variant": ev.variant,
                    "options": {"target": ev.options["target"]},
                    "time_limit_s": ev.options.get("time_limit_s"),
                    "best_of": m.best_of,
                    # badges leave the director only as salted digests (security.badge_digest)
                    "entrants": [{"id": x.id, "name": x.name, "members": x.members,
                                  "badges": [badge_digest(b, salt) for b in x.badges]} for x in sides],
                    "badge_salt": salt,
                    "seats": _seats(sides[0].members, sides[1].members) if len(sides) == 2 else kway.seat_plan(
                        ev.game, [x.members for x in sides], int(ev.options.get("seats", 4))),
                    "done": m.confirmed,
                    "confirm": ev.options.get("confirm", DEFAULT_CONFIRM),
                })
            return add_to_assignments(out, ev.options, rnd, keys)  # matches two tables play together (remote_pairs.py)

    # ------------------------------------------------------------ ingestion


def badge_salt(options: dict[str, Any]) -> str:
    """The event's badge salt (``badge_salt``, made with the event; an event made
    before it existed uses its lots seed, as private until the event starts)."""
    return str(options.get("badge_salt") or f"lots:{options.get('lots_seed', '')}")


def _active(p: pr.Pairing, active: Sequence[Entrant]) -> bool:
    ids = {e.id for e in active}
    return p.a in ids and (p.b is None or p.b in ids)


def _seats(a: list[str], b: list[str]) -> list[dict[str, Any]]:
    """Seat plan: entrant A holds seats 0 and 2 (team 0), entrant B seats 1 and 3."""
    if len(a) == 2:
        return [
            {"seat": 0, "entrant": 0, "player": a[0]}, {"seat": 1, "entrant": 1, "player": b[0]},
            {"seat": 2, "entrant": 0, "player": a[1]}, {"seat": 3, "entrant": 1, "player": b[1]},
        ]
    return [{"seat": 0, "entrant": 0, "player": a[0]}, {"seat": 1, "entrant": 1, "player": b[0]}]
