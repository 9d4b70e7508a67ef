"""Events beyond two entrants: tables of k entrants, paired by score, placement points.

Which events: individual ``brazilian-points`` dominoes with 3 seats (three
players a table) and Kems with 6 or 8 seats (3 or 4 teams of two a table).
The 2-player game and the 4-seat partnership games stay two-entrant matches
(service.py and pairing.py). A k-entrant event is a Swiss:

- **Pairing.** Round 1 is drawn (or seeded). Later rounds sort the entrants
  by their standing and fill each table from the top with the k-1 entrants
  that have met the table's first entrant (and each other) least, preferring
  entrants close in the standings; then pairs of tables swap members while
  that lowers the number of repeated meetings. When the field does not
  divide by k, the lowest-placed entrants who have not had one get a
  pairing bye (never twice while someone else has not had one).
- **Placement points.** At a table of k, an entrant scores one point for
  every entrant it finishes ahead of and half a point for every entrant it
  finishes level with: 2 / 1 / 0 at a table of three, 3 / 2 / 1 / 0 at a
  table of four; two tied for first at a table of three score 1½ each. A
  pairing bye scores the average, (k-1)/2. The standings order by the
  event's tie-breaks; for k-entrant events those may be
  ``placement_points``, ``games_won`` (first places, a shared first ½),
  ``points_for`` (match points scored), ``point_difference`` (points scored
  minus the average of the opponents' at the same table), ``buchholz`` (sum
  of the opponents' placement points, per meeting) and ``lots``.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from tablesense.games.common import say
from tablesense.games.registry import find_game

from .checks import Replayed, replay_one
from .db import Entrant, Match, Round, Table
from .db import match_entrants as match_entrants
from .db import match_scores as match_scores
from .standings import Standing, lots_value

KWAY_TIEBREAKS: tuple[str, ...] = ("placement_points", "games_won", "points_for", "point_difference", "buchholz", "lots")
DEFAULT_KWAY_TIEBREAKS: tuple[str, ...] = ("placement_points", "points_for", "buchholz", "lots")


class KwayError(ValueError):
    """A k-entrant event option, pairing or result that cannot be (the text says why)."""


def entrants_per_table(game: str, variant: str, seats: int) -> int:
    """How many entrants sit at one table: teams of two in Kems, individuals at 3 seats."""
    return find_game(game).teams_at_table(variant, int(seats))


def prepare_options(game: str, variant: str, fmt: str, opts: dict[str, Any], given: Iterable[str]) -> int:
    """Check (and complete) a new event's options for its table size; returns k.

    A k-entrant event must be a Swiss with best-of-1 matches, and its
    tie-breaks default to :data:`DEFAULT_KWAY_TIEBREAKS` unless given.
    """
    k = entrants_per_table(game, variant, int(opts.get("seats", 4)))
    if k <= 2:
        return k
    if fmt != "swiss":
        raise KwayError(f"tables of {k} entrants are paired as a Swiss; {fmt} is for two-entrant matches")
    if int(opts.get("best_of", 1)) != 1:
        raise KwayError(f"tables of {k} entrants play one match each round (best_of 1)")
    if "tiebreaks" not in set(given):
        opts["tiebreaks"] = list(DEFAULT_KWAY_TIEBREAKS)
    bad = [t for t in opts["tiebreaks"] if t not in KWAY_TIEBREAKS]
    if bad:
        raise KwayError(f"tie-break(s) {', '.join(bad)} are for two-entrant matches; "
                        f"tables of {k} take {', '.join(KWAY_TIEBREAKS)}")
    return k


def seat_plan(game: str, members: Sequence[Sequence[str]], seats: int) -> list[dict[str, Any]]:
    """Who sits where: each seat's entrant is the team the game seats there, and
    an entrant's players take its seats in order. Kems: entrant t holds seats t
    and t + seats/2 (partners face each other, teams alternate); dominoes
    individuals: entrant i holds seat i."""
    the_game = find_game(game)
    plan = []
    taken = [0] * len(members)
    for seat in range(seats):
        t = the_game.team_of_seat(seats, seat)
        plan.append({"seat": seat, "entrant": t, "player": members[t][taken[t]]})
        taken[t] += 1
    return plan


def placement_points(scores: Sequence[float]) -> list[float]:
    """One point per entrant finished ahead of, half per entrant level with."""
    return [sum(1.0 if s > o else 0.5 if s == o else 0.0 for j, o in enumerate(scores) if j != i)
            for i, s in enumerate(scores)]


def winner_side(scores: Sequence[float]) -> int | None:
    """The side with the most points, or None when the top is shared."""
    best = max(scores)
    top = [i for i, s in enumerate(scores) if s == best]
    return top[0] if len(top) == 1 else None


# ---------------------------------------------------------------- results


def verify_records(game: str, variant: str, body: Mapping[str, Any], k: int,
                   replays: Sequence[Replayed | None] = ()) -> tuple[list[float], int | None, list[list[float]]]:
    """Replay the single game record of a k-entrant result; its scores must be the reported ones.

    ``replays``: the record already replayed (:func:`.checks.replay_records`).
    Returns (scores per entrant, winning side or None, [scores] per game).
    """
    records = body.get("records")
    if not isinstance(records, list) or len(records) != 1 or not isinstance(records[0], dict):
        raise KwayError("a result of a table of more than two entrants carries exactly one game record")
    rec = records[0]
    if rec.get("game") != game or rec.get("variant") != variant:
        raise KwayError(f"record 0 is not a {game} {variant} record")
    rr = (replays[0] if replays else None) or replay_one(rec)
    if rr.error:
        raise KwayError(f"record 0 does not replay{rr.error}")
    scores = list(rr.score)
    if len(scores) != k:
        raise KwayError(f"record 0 has {len(scores)} sides; this table has {k} entrants")
    reported = body.get("score")
    if not isinstance(reported, list) or [float(x) for x in reported] != scores:
        raise KwayError(f"reported score {reported} does not follow from the records {scores}")
    games = body.get("games")
    if games is not None and [[float(x) for x in g] for g in games] != [scores]:
        raise KwayError(f"reported games {games} do not follow from the records {[scores]}")
    # The top scorer wins (a shared top is no winner): placement points order the rest.
    return scores, winner_side(scores), [scores]


# ---------------------------------------------------------------- standings


@dataclass
class _Line:
    played: int = 0
    firsts: float = 0.0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    pp: float = 0.0
    pf: float = 0.0
    pa: float = 0.0


def compute_standings(
    entrants: Iterable[int],
    matches: Iterable[tuple[str, list[int], list[float] | None]],
    tiebreaks: Sequence[str],
    *,
    k: int,
    lots_seed: str = "",
) -> list[Standing]:
    """Standings of a k-entrant event from (kind, entrants, scores) of its counted matches."""
    lines: dict[int, _Line] = {e: _Line() for e in entrants}
    met: dict[int, list[int]] = {e: [] for e in lines}
    for kind, ids, scores in matches:
        if kind == "requested-bye":
            continue
        if kind == "pairing-bye" or len(ids) == 1:
            ln = lines.setdefault(ids[0], _Line())
            ln.played += 1
            ln.pp += (k - 1) / 2
            continue
        if scores is None:
            continue
        pts = placement_points(scores)
        best = max(scores)
        n_top = sum(1 for s in scores if s == best)
        for i, e in enumerate(ids):
            ln = lines.setdefault(e, _Line())
            met.setdefault(e, [])
            ln.played += 1
            ln.pp += pts[i]
            ln.pf += scores[i]
            ln.pa += sum(scores[j] for j in range(len(ids)) if j != i) / (len(ids) - 1)
            if scores[i] == best and n_top == 1:
                ln.wins += 1
                ln.firsts += 1
            elif scores[i] == best:
                ln.draws += 1
                ln.firsts += 0.5
            else:
                ln.losses += 1
            met[e].extend(o for o in ids if o != e)
    values: dict[int, dict[str, float]] = {}
    for e, ln in lines.items():
        v = {
            "placement_points": ln.pp,
            "games_won": ln.firsts,
            "points_for": ln.pf,
            "point_difference": ln.pf - ln.pa,
            "buchholz": sum(lines[o].pp for o in met.get(e, []) if o in lines),
            "lots": lots_value(lots_seed, e),
        }
        values[e] = {t: v[t] for t in tiebreaks}
    order = sorted(lines, key=lambda e: (tuple(-values[e][t] for t in tiebreaks), e))
    out: list[Standing] = []
    prev: tuple[float, ...] | None = None
    rank = 0
    for i, e in enumerate(order, start=1):
        key = tuple(values[e][t] for t in tiebreaks)
        if key != prev:
            rank = i
            prev = key
        ln = lines[e]
        out.append(Standing(entrant=e, played=ln.played, wins=ln.wins, draws=ln.draws, losses=ln.losses,
                            points_for=ln.pf, points_against=ln.pa, rank=rank, tiebreaks=dict(values[e])))
    return out


# ---------------------------------------------------------------- pairing


@dataclass(frozen=True)
class Player:
    entrant: int
    score: float  # placement points so far
    rank: int  # place in the standings (0 = first)
    had_bye: bool


def meetings(history: Iterable[Sequence[int]]) -> dict[frozenset[int], int]:
    """How often each two entrants have sat at the same table."""
    out: dict[frozenset[int], int] = {}
    for ids in history:
        for a, b in itertools.combinations(ids, 2):
            key = frozenset((a, b))
            out[key] = out.get(key, 0) + 1
    return out


def group_round(players: Sequence[Player], k: int, met: Mapping[frozenset[int], int], rng: random.Random | None = None,
                *, first_round: bool = False) -> tuple[list[list[int]], list[int]]:
    """Tables of ``k`` for one round and the entrants given a pairing bye.

    Round 1 (``first_round``) is a draw in ``players`` order unless ``rng``
    shuffles it. Later rounds: see the module docstring.
    """
    ordered = sorted(players, key=lambda p: (p.rank, p.entrant))
    if first_round and rng is not None:
        ordered = list(ordered)
        rng.shuffle(ordered)
    n_byes = len(ordered) % k
    byes: list[int] = []
    if n_byes:
        pool = [p for p in reversed(ordered) if not p.had_bye] + [p for p in reversed(ordered) if p.had_bye]
        byes = [p.entrant for p in pool[:n_byes]]
    left = [p for p in ordered if p.entrant not in byes]
    if first_round:
        return [[p.entrant for p in left[i:i + k]] for i in range(0, len(left), k)], byes
    rank = {p.entrant: i for i, p in enumerate(left)}

    def cost(group: Sequence[int]) -> tuple[int, int]:
        repeats = sum(met.get(frozenset((a, b)), 0) for a, b in itertools.combinations(group, 2))
        spread = max(rank[e] for e in group) - min(rank[e] for e in group)
        return repeats, spread

    groups: list[list[int]] = []
    rest = [p.entrant for p in left]
    window = 3 * k
    while rest:
        head, cands = rest[0], rest[1:]
        best = min(
            (list(c) for c in itertools.combinations(cands[:window], k - 1)),
            key=lambda c: cost([head, *c]),
        )
        group = [head, *best]
        groups.append(group)
        rest = [e for e in rest if e not in group]
    _improve(groups, cost)
    return groups, byes


def _improve(groups: list[list[int]], cost: Any, rounds: int = 4) -> None:
    """Swap members between tables while that lowers the repeated meetings (then the spread)."""
    for _ in range(rounds):
        better = False
        for gi, gj in itertools.combinations(range(len(groups)), 2):
            for x in range(len(groups[gi])):
                for y in range(len(groups[gj])):
                    a, b = list(groups[gi]), list(groups[gj])
                    a[x], b[y] = b[y], a[x]
                    old = [sum(t) for t in zip(cost(groups[gi]), cost(groups[gj]), strict=True)]
                    new = [sum(t) for t in zip(cost(a), cost(b), strict=True)]
                    if new[0] < old[0]:
                        groups[gi], groups[gj] = a, b
                        better = True
        if not better:
            return


def plan_round(director: Any, nxt: int) -> tuple[list[list[int]], list[int], int]:
    """The tables and byes of round ``nxt`` of a k-entrant Swiss (nothing is written)."""
    from .audit import DirectorError

    with director.db.session() as s:
        ev = director.event(s)
        opts = dict(ev.options)
        k = entrants_per_table(ev.game, ev.variant, int(opts.get("seats", 4)))
        entrants = list(s.scalars(select(Entrant).where(Entrant.event_id == director.event_id)
                                  .order_by(Entrant.seed, Entrant.id)))
        history = [(m.kind, match_entrants(m)) for m in s.scalars(select(Match).where(Match.event_id == director.event_id))]
    if nxt > int(opts["rounds"]):
        raise DirectorError(f"the Swiss has {opts['rounds']} rounds; the event is over")
    active = [e for e in entrants if e.status != "withdrawn" and nxt not in e.bye_rounds]
    if len(active) < k:
        raise DirectorError(f"fewer than {k} active entrants for a table of {k}")
    had_bye = {ids[0] for kind, ids in history if kind == "pairing-bye"}
    met = meetings(ids for kind, ids in history if kind == "match")
    if nxt == 1:
        if opts.get("first_round") == "rating":  # neighbours in club rating share a table (ratings.py)
            from .ratings import rating_order

            order = rating_order(director.db, director.event_id, [e.id for e in active])
            active = sorted(active, key=lambda e: order.index(e.id))
        players = [Player(e.id, 0.0, i, False) for i, e in enumerate(active)]
        rng = None if opts.get("first_round") in ("seeded", "rating") else random.Random(f"{opts['lots_seed']}:round:{nxt}")
        groups, byes = group_round(players, k, met, rng, first_round=True)
        return groups, byes, k
    table = director.standings()
    rank = {st.entrant: i for i, st in enumerate(table)}
    score = {st.entrant: st.tiebreaks.get("placement_points", 0.0) for st in table}
    players = [Player(e.id, score.get(e.id, 0.0), rank.get(e.id, 0), e.id in had_bye) for e in active]
    groups, byes = group_round(players, k, met)
    return groups, byes, k


def pair_next_round(director: Any, actor: str = "director", *, force: bool = False) -> int:
    """Pair and store the next round of a k-entrant Swiss; returns its number."""
    from .audit import DirectorError, _append_audit

    with director._lock:
        cur = director.current_round_no()
        if cur and not force and not director.round_complete(cur):
            raise DirectorError(f"round {cur} still has matches without a confirmed result")
        nxt = cur + 1
        groups, byes, k = plan_round(director, nxt)
        with director.db.session() as s:
            ev = director.event(s)
            tables = sorted(s.scalars(select(Table.number).where(Table.event_id == director.event_id)))
            rnd = Round(event_id=director.event_id, number=nxt, stage="swiss", status="paired")
            s.add(rnd)
            s.flush()
            requested = [e.id for e in s.scalars(select(Entrant).where(Entrant.event_id == director.event_id))
                         if nxt in e.bye_rounds]
            number = 0
            for i, g in enumerate(groups):
                number += 1
                s.add(Match(event_id=director.event_id, round_id=rnd.id, round_no=nxt, number=number,
                            table_no=tables[i % len(tables)] if tables else None, entrant_a=g[0], entrant_b=g[1],
                            entrants=list(g), kind="match", best_of=1, status="pending", games=[], confirmed=False))
            for e in byes:
                number += 1
                s.add(Match(event_id=director.event_id, round_id=rnd.id, round_no=nxt, number=number, entrant_a=e,
                            entrant_b=None, kind="pairing-bye", best_of=1, status="confirmed", games=[], confirmed=True,
                            winner_id=None))
            for e in requested:
                number += 1
                s.add(Match(event_id=director.event_id, round_id=rnd.id, round_no=nxt, number=number, entrant_a=e,
                            entrant_b=None, kind="requested-bye", best_of=1, status="confirmed", score_a=0.0,
                            games=[], confirmed=True))
            ev.status = "running"
            _append_audit(s, director.event_id, actor, "round-paired", None, "", {
                "round": nxt, "stage": "swiss", "tables": groups, "byes": byes, "requested_byes": requested, "k": k,
            })
        return nxt


def correct_table(director: Any, match_id: int, score: str, reason: str, actor: str) -> str:
    """Correct a table of k: ``score`` is one number per entrant in seat order ("3-4-0").

    Like a two-entrant correction: needs a reason, confirms the match, and
    writes the before and after to the audit log. Returns what changed.
    """
    import math

    from .audit import DirectorError, _append_audit

    if not reason.strip():
        raise DirectorError(say("a correction needs a reason"))
    try:
        scores = [float(x) for x in score.split("-")]
    except ValueError:
        raise DirectorError(say("a table's score is one number per entrant, e.g. 3-4-0, not {score}",
                                score=repr(score[:40]))) from None
    if any(not math.isfinite(x) or not 0 <= x <= 1_000_000 for x in scores):
        raise DirectorError(say("each score is a number from 0 to 1000000"))
    with director._lock, director.db.session() as s:
        m = s.get(Match, match_id)
        if m is None or m.event_id != director.event_id:
            raise DirectorError(say("that match is not in this event (the page is out of date: reload it)"))
        ids = match_entrants(m)
        if len(scores) != len(ids):
            raise DirectorError(say("table {table} in round {round} has {n} entrants: give {n} scores in seat order, "
                                    "e.g. {example}", table=m.table_no, round=m.round_no, n=len(ids),
                                    example="-".join(["0"] * len(ids))))
        where = say("round {round}, table {table}", round=m.round_no, table=m.table_no or "-")
        before = {"scores": match_scores(m), "winner": m.winner_id}
        side = winner_side(scores)
        m.scores = scores
        m.score_a, m.score_b = scores[0], scores[1]
        m.winner_id = None if side is None else ids[side]
        m.status = "confirmed"
        m.confirmed = True
        _append_audit(s, director.event_id, actor, "correction", match_id, reason[:1000], {
            "before": before, "after": {"scores": scores, "winner": m.winner_id},
        })
        names = {e.id: e.name for e in s.scalars(select(Entrant).where(Entrant.event_id == director.event_id))}
    shown = ", ".join(f"{names.get(e, '?')} {x:g}" for e, x in zip(ids, scores, strict=True))
    return say("{where}: {sides}; confirmed, and written to the audit log with the reason {reason}", where=where,
               sides=shown, reason=repr(reason))
