"""A table's result message, built the same way by a real table and a headless one.

The director checks every field against its own replay of the records
(:mod:`.service`), so what a table claims here is only a proposal: the
score per side, the winner's entrant id (None for a tie), and each game of
a series with its own score.
"""

from __future__ import annotations

from typing import Any


def result_message(event: int, round_no: int, table: int, revision: int, match: dict[str, Any],
                   games: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``result`` message (unsigned) of announced ``match`` played as ``games`` (records)."""
    scores = [score_of(g) for g in games]
    total = [sum(s[i] for s in scores) for i in range(len(scores[0]))]  # two sides, or three or four
    ids = [int(e["id"]) for e in match["entrants"]]
    side = winner_side(games, scores, int(match.get("best_of", 1)))
    return {
        "kind": "result", "event": event, "round": round_no, "table": table, "revision": revision,
        "match": int(match["match"]), "entrants": ids, "score": nums(total), "games": [nums(s) for s in scores],
        "winner": None if side is None else ids[side], "records": games,
    }


def score_of(record: dict[str, Any]) -> tuple[float, ...]:
    """The record's score per side (two sides, or three or four at a table of k entrants)."""
    from tablesense.games.record import replay

    rr = replay(record)
    return tuple(float(x) for x in rr.score)


def winner_side(games: list[dict[str, Any]], scores: list[tuple[float, ...]], best_of: int) -> int | None:
    """The side that won the match (a series of ``best_of`` games), None for a tie."""
    from .pairing import series_winner

    if best_of > 1:
        return series_winner([(s[0], s[1]) for s in scores], best_of)
    best = max(scores[0])
    top = [i for i, x in enumerate(scores[0]) if x == best]
    return top[0] if len(top) == 1 else None


def nums(xs: Any) -> list[int | float]:
    """Whole numbers as ints (a score of 30, not 30.0), others as floats."""
    return [int(x) if float(x).is_integer() else float(x) for x in xs]
