"""Storage tests written to kill mutants of tournament/db.py
(benchmarks/mutation.py, docs/mutation-testing.md): URLs, the SQLite settings of every
connection, the column defaults, transactions and the migrations."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from tablesense.tournament import db as dbm


def test_normalize_url(tmp_path: Path) -> None:
    assert dbm.normalize_url(str(tmp_path / "club.db")) == f"sqlite:///{(tmp_path / 'club.db').resolve()}"
    assert dbm.normalize_url("club.db") == f"sqlite:///{Path('club.db').resolve()}"
    assert dbm.normalize_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert dbm.normalize_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert dbm.normalize_url("postgresql+psycopg://u@h/db") == "postgresql+psycopg://u@h/db"
    assert dbm.normalize_url("sqlite:///x.db") == "sqlite:///x.db"
    assert dbm.normalize_url("sqlite://") == "sqlite://"


def test_every_sqlite_connection_is_durable_and_checks_keys(tmp_path: Path) -> None:
    d = dbm.Database(str(tmp_path / "club.db"))
    try:
        assert d.url.startswith("sqlite:///")
        with d.engine.connect() as c:
            assert c.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            assert c.execute(text("PRAGMA foreign_keys")).scalar() == 1
            assert c.execute(text("PRAGMA synchronous")).scalar() == 2
            assert c.execute(text("PRAGMA busy_timeout")).scalar() == 30000
        assert d.engine.pool.size() == 10  # type: ignore[attr-defined]
        assert d.engine.pool._max_overflow == 20  # type: ignore[attr-defined]
        assert d.engine.pool._timeout == 30  # type: ignore[attr-defined]
        # the pool's connections may be used from another thread (page servers)
        errors: list[BaseException] = []

        def other() -> None:
            try:
                with d.session() as s:
                    s.execute(text("SELECT 1"))
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        with d.session() as s:
            s.execute(text("SELECT 1"))
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert errors == []
    finally:
        d.close()


def test_column_defaults(tmp_path: Path) -> None:
    d = dbm.Database(str(tmp_path / "club.db"))
    try:
        before = time.time()
        with d.session() as s:
            ev = dbm.Event(name="E", game="dominoes", variant="pairs-pips", format="swiss")
            s.add(ev)
            s.flush()
            en = dbm.Entrant(event_id=ev.id, name="Ana")
            tb = dbm.Table(event_id=ev.id, number=1, public_key="k")
            rd = dbm.Round(event_id=ev.id, number=1, stage="swiss")
            s.add_all([en, tb, rd])
            s.flush()
            m = dbm.Match(event_id=ev.id, round_id=rd.id, round_no=1, number=1, entrant_a=en.id)
            au = dbm.AuditEntry(event_id=ev.id, ts=1.0, actor="a", action="x", prev_hash="0",
                                hash="1")
            s.add_all([m, au])
        with d.session() as s:
            ev2 = s.get(dbm.Event, ev.id)
            assert ev2 is not None
            assert (ev2.options, ev2.status) == ({}, "registration")
            assert before <= ev2.created_at <= time.time()
            en2 = s.get(dbm.Entrant, en.id)
            assert en2 is not None
            assert (en2.members, en2.badges, en2.seed, en2.status, en2.bye_rounds) == (
                [], [], 0, "registered", [])
            tb2 = s.get(dbm.Table, tb.id)
            assert tb2 is not None and (tb2.online, tb2.last_seen) == (False, 0.0)
            rd2 = s.get(dbm.Round, rd.id)
            assert rd2 is not None and rd2.status == "paired"
            m2 = s.get(dbm.Match, m.id)
            assert m2 is not None
            assert (m2.kind, m2.best_of, m2.status, m2.games, m2.confirmed, m2.entrants,
                    m2.scores, m2.entrant_b, m2.table_no) == (
                "match", 1, "pending", [], False, None, None, None, None)
            au2 = s.get(dbm.AuditEntry, au.id)
            assert au2 is not None and (au2.reason, au2.detail) == ("", {})
    finally:
        d.close()


def test_a_session_commits_or_rolls_back(tmp_path: Path) -> None:
    d = dbm.Database(str(tmp_path / "club.db"))
    try:
        with pytest.raises(RuntimeError), d.session() as s:
            s.add(dbm.Event(name="lost", game="kems", variant="classic", format="swiss"))
            s.flush()
            raise RuntimeError("boom")
        with d.session() as s:
            s.add(dbm.Event(name="kept", game="kems", variant="classic", format="swiss"))
        with d.session() as s:
            assert [e.name for e in s.query(dbm.Event).all()] == ["kept"]
        # a foreign key that points nowhere is refused (foreign_keys=ON)
        with pytest.raises(Exception, match="FOREIGN KEY"), d.session() as s:
            s.add(dbm.Entrant(event_id=999, name="ghost"))
    finally:
        d.close()


def test_migrations_build_and_remove_the_schema(tmp_path: Path) -> None:
    bare = dbm.Database(str(tmp_path / "bare.db"), migrate=False)
    try:
        assert "ts_events" not in inspect(bare.engine).get_table_names()
    finally:
        bare.close()
    d = dbm.Database(str(tmp_path / "club.db"))
    try:
        names = set(inspect(d.engine).get_table_names())
        assert {"ts_events", "ts_entrants", "ts_tables", "ts_rounds", "ts_matches",
                "ts_results", "ts_audit"} <= names
        dbm.downgrade(d.engine, "base")
        assert "ts_events" not in inspect(d.engine).get_table_names()
        dbm.upgrade(d.engine)
        assert "ts_matches" in inspect(d.engine).get_table_names()
        cols = {c["name"] for c in inspect(d.engine).get_columns("ts_matches")}
        assert {"entrants", "scores"} <= cols  # migration 0003
    finally:
        d.close()


def _model_drift(engine: object) -> list[object]:
    """What Alembic's autogenerate sees between db.py's models and the
    migrated schema (types with their lengths, nullability, indexes), left
    out: tables that db.py does not model (other rooms' migrations)."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    ours = set(dbm.Base.metadata.tables)

    def relevant(d: object) -> bool:
        if isinstance(d, list):
            return any(relevant(x) for x in d)
        kind = d[0]  # type: ignore[index]
        if kind == "remove_table":
            return d[1].name in ours  # type: ignore[index]
        if kind == "remove_index":
            return d[1].table.name in ours  # type: ignore[index]
        return True

    with engine.connect() as conn:  # type: ignore[attr-defined]
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        return [d for d in compare_metadata(ctx, dbm.Base.metadata) if relevant(d)]


def test_the_models_are_the_migrated_schema(tmp_path: Path) -> None:
    """The schema comes only from the migrations; the models must say the same
    (a column the models think nullable, or a hash column of another length,
    would be a model that lies about the table)."""
    d = dbm.Database(str(tmp_path / "club.db"))
    try:
        assert _model_drift(d.engine) == []
    finally:
        d.close()
