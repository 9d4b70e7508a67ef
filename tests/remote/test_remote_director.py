"""A remote match reported to the tournament director (issue 32).

A real director (PostgreSQL, its bridge on the event's own TLS Mosquitto)
announces a pairs-pips match for table 1. Table 1 hosts it as a remote match
(`play --remote host --director ...`) on club A's broker; table 2 joins from
club B's, the two clubs' brokers bridged. The host table reports the match's
record signed with its table key, through its durable outbox, as a table
reports today; the director stores it. The record the director stored, the
host's and the joining table's are the same record.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from remotekit import Broker, Play, director_event

from tablesense.games.dominoes import replay_record

pytestmark = pytest.mark.broker

TARGET = 20


@pytest.mark.slow  # the suite's test_remote_page.py reports its match to a director too
def test_a_remote_match_reaches_the_director_with_the_same_record(
    bridged: tuple[Broker, Broker], pg_url: str, tmp_path: Path
) -> None:
    """Computer seats at both tables (the page's test, test_remote_page.py,
    reports a match with a person at one table to a director too)."""
    club_a, club_b = bridged
    host: Play | None = None
    join: Play | None = None
    with director_event(tmp_path, pg_url, TARGET) as event:
        try:
            host = Play("--remote", "host", "--broker", club_a.url("table-1"), "--seed", "31",
                        "--journal", str(tmp_path / "a" / "journal.sqlite"), "--remote-timeout", "500",
                        *event.host_args)
            announced = host.wait_for("tournament match", 60)
            assert "Pair 1 v Pair 2" in announced and f"(to {TARGET})" in announced, announced
            code = host.wait_for("remote match code:", 60).split("remote match code:")[1].split()[0]
            join = Play("--remote", "join", code, "--broker", club_b.url("table-2"), "--seed", "32",
                        "--journal", str(tmp_path / "b" / "journal.sqlite"), "--remote-timeout", "500")
            rc_host, out_host = host.finish(540)
            rc_join, out_join = join.finish(60)
        finally:
            for p in (host, join):
                if p is not None:
                    p.kill()
        stored = event.results()
        (match,) = event.director.matches(1)
        audit = event.director.audit_log()
    assert host is not None and join is not None
    assert rc_host == 0, "".join(host.lines)[-3000:]
    assert rc_join == 0, "".join(join.lines)[-3000:]
    assert "director: result accepted" in "".join(host.lines), "".join(host.lines)[-2000:]
    record = json.loads(out_host)
    assert json.loads(out_join) == record  # the same record at both tables
    result = replay_record(record)
    assert result.winner is not None and max(result.score) >= TARGET
    assert len(stored) == 1 and stored[0]["records"] == [record]  # ... and at the director
    assert [float(x) for x in stored[0]["score"]] == [float(x) for x in result.score]
    assert [match.score_a, match.score_b] == [float(x) for x in result.score]
    assert sum(a["action"] == "result-accepted" for a in audit) == 1


def test_director_goes_with_the_host_and_needs_its_table_key() -> None:
    from typer.testing import CliRunner

    from tablesense.cli import app
    from tablesense.tournament.broker_client import PASSWORD_ENV

    runner = CliRunner(env={PASSWORD_ENV: "pw"})
    base = ["play", "--table", "dominoes-4-remote", "--broker", "mqtt://table-2@127.0.0.1:1"]
    joined = runner.invoke(app, [*base, "--remote", "join", "ABCDEF", "--director", "mqtt://table-2@127.0.0.1:1"])
    assert joined.exit_code == 2 and "--director goes with --remote host" in joined.output, joined.output
    hosted = runner.invoke(app, [*base, "--remote", "host", "--director", "mqtt://table-1@127.0.0.1:1"])
    assert hosted.exit_code == 2 and "--director needs --table-no and --table-key" in hosted.output, hosted.output
    shown = runner.invoke(app, [*base, "--remote", "host", "--director", "mqtt://table-1:pw@127.0.0.1:1",
                                "--table-no", "1", "--table-key", "/nonexistent"])
    assert shown.exit_code == 2 and "the broker password is written in --director" in " ".join(shown.output.split())
