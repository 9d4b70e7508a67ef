"""Rehearsals beyond dominoes pairs (issue 30): a Kems event of pairs, and
events of three or four entrants a table (brazilian-points with three
players, Kems with three teams of two), each unattended to a winner on real
``play --director --virtual-table`` processes over a TLS broker. Kept quick
(one table, one round, a target of one point, a fast virtual pace); a fuller
evening of Kems tables of three teams (two tables, two rounds) runs with
``--runslow``."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from tablesense.games.record import replay
from tablesense.tournament import kway
from tablesense.tournament.db import Database, Result
from tablesense.tournament.mosquitto import mosquitto_binary
from tablesense.tournament.rehearsal import Plan, Rehearsal, Report, rehearse
from tablesense.tournament.service import Director
from testsupport import need


def _run(tmp_path: Path, **plan: object) -> tuple[Report, Director, list[str]]:
    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    said: list[str] = []
    full = Plan(workdir=tmp_path / "evening", rounds=1, tables=1, target=1, speed=50.0, port=0,
                password="rehearsal-password", round_timeout=240.0)
    for k, v in plan.items():
        setattr(full, k, v)
    report = rehearse(full, tell=lambda line: said.append(str(line)))
    d = Director(Database(f"sqlite:///{tmp_path / 'evening' / 'rehearsal.db'}"), report.event_id)
    return report, d, said


def _results(d: Director) -> list[Result]:
    with d.db.session() as s:
        return list(s.scalars(select(Result)))


def test_a_kems_evening_of_pairs_rehearses_to_a_winner(tmp_path: Path) -> None:
    report, d, said = _run(tmp_path, game="kems", variant="classic", pairs=2)
    assert report.rounds == 1 and report.matches == 1 and len(report.winners) == 1, said
    assert all(m.confirmed for m in d.matches(1))
    results = _results(d)
    assert len(results) == 1
    rec = results[0].payload["records"][0]
    assert rec["game"] == "kems" and replay(rec).to_json()["ok"] is True
    assert any(line.startswith("round 1, table 1: #") for line in said), said
    assert f"the winner: {report.winners[0]}" in said
    log = (tmp_path / "evening" / "table-1" / "play.log").read_text()
    assert "kems" in log.lower() and "stopped between matches (1 played in this run)" in log, log[-1500:]


@pytest.mark.parametrize(("game", "variant", "seats"), [("dominoes", "brazilian-points", 3), ("kems", "classic", 6)])
def test_a_table_of_three_entrants_rehearses_to_a_winner(tmp_path: Path, game: str, variant: str, seats: int) -> None:
    report, d, said = _run(tmp_path, game=game, variant=variant, seats=seats, pairs=3)
    assert report.rounds == 1 and report.matches == 1 and len(report.winners) == 1, said
    (m,) = d.matches(1)
    assert m.confirmed and len(kway.match_entrants(m)) == 3
    scores = kway.match_scores(m)
    assert scores is not None and len(scores) == 3
    # the rehearsal's line names all three by number, each with its score
    line = next(x for x in said if x.startswith("round 1, table 1: "))
    assert line.count("#") == 3, line
    (res,) = _results(d)
    rec = res.payload["records"][0]
    assert rec["game"] == game and replay(rec).to_json()["ok"] is True
    # the standings rank by placement points, and the winner is the one the table's score makes
    st = d.standings()
    assert st[0].tiebreaks["placement_points"] == max(kway.placement_points(scores))
    assert next(e.name for e in d.entrants() if e.id == st[0].entrant) == report.winners[0]


@pytest.mark.slow
def test_a_kems_evening_of_three_teams_a_table_over_two_rounds(tmp_path: Path) -> None:
    """--runslow: six teams of two, Kems at six seats on two tables, two Swiss rounds."""
    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    said: list[str] = []
    r = Rehearsal(Plan(workdir=tmp_path / "evening", game="kems", variant="classic", seats=6, pairs=6, rounds=2,
                       tables=2, target=2, speed=20.0, port=0, password="rehearsal-password", round_timeout=600.0),
                  tell=lambda line: said.append(str(line)))
    try:
        r.start()
        report = r.run()
    finally:
        r.stop()
    assert report.rounds == 2 and report.matches == 4 and report.winners, said
    d = Director(Database(f"sqlite:///{tmp_path / 'evening' / 'rehearsal.db'}"), report.event_id)
    assert all(m.confirmed for rnd in (1, 2) for m in d.matches(rnd))
    assert len(_results(d)) == 4


def test_a_game_variant_or_table_size_that_cannot_be_is_a_wrong_argument(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tablesense.cli import app

    def rehearse_cli(*args: str) -> tuple[int, str]:
        done = CliRunner().invoke(app, ["tournament", "rehearse", "--port", "0", "--workdir", str(tmp_path), *args])
        return done.exit_code, " ".join(done.output.split())

    assert rehearse_cli("--game", "chess") == (2, "error: --game 'chess': choose dominoes or kems")
    code, out = rehearse_cli("--game", "kems", "--variant", "pairs-pips")
    assert code == 2 and "not a variant of kems (its variants: classic)" in out, out
    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    code, out = rehearse_cli("--game", "kems", "--seats", "5")
    assert code == 2 and "Kems is played by 4, 6 or 8 seats, not 5" in out, out
    assert not list(tmp_path.glob("table-*")), "no table was started"
