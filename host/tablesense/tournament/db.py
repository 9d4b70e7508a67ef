"""Storage of events: SQLAlchemy 2 models and the migrated database handle.

SQLite by default (one file, nothing to install), PostgreSQL by URL for a
club server. The schema is created and upgraded only through the Alembic
migrations in ``tournament/migrations`` (never ``create_all``), so a club's
database follows the code from release to release.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

from . import DEFAULT_DB as DEFAULT_DB  # the event database when --db is not given

MIGRATIONS = Path(__file__).resolve().parent / "migrations"

#: The newest migration (``tests/tournament/test_director.py`` holds it to
#: Alembic's head): a database already there is opened without importing
#: Alembic, which costs a command line call a fifth of a second.
HEAD_REVISION = "0004_club_players"


class Base(DeclarativeBase):
    pass


class Event(Base):
    __tablename__ = "ts_events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    game: Mapped[str] = mapped_column(String(20))
    variant: Mapped[str] = mapped_column(String(40))
    format: Mapped[str] = mapped_column(String(20))
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    status: Mapped[str] = mapped_column(String(20), default="registration")
    created_at: Mapped[float] = mapped_column(Float, default=time.time)


class Entrant(Base):
    __tablename__ = "ts_entrants"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("ts_events.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    members: Mapped[list[str]] = mapped_column(JSON, default=list)
    badges: Mapped[list[str]] = mapped_column(JSON, default=list)
    seed: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(20), default="registered")
    bye_rounds: Mapped[list[int]] = mapped_column(JSON, default=list)
    __table_args__ = (UniqueConstraint("event_id", "name", name="uq_ts_entrant_name"),)


class Table(Base):
    __tablename__ = "ts_tables"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("ts_events.id"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    public_key: Mapped[str] = mapped_column(Text)
    online: Mapped[bool] = mapped_column(Boolean, default=False)
    last_seen: Mapped[float] = mapped_column(Float, default=0.0)
    __table_args__ = (UniqueConstraint("event_id", "number", name="uq_ts_table_number"),)


class Round(Base):
    __tablename__ = "ts_rounds"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("ts_events.id"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    stage: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(String(20), default="paired")
    __table_args__ = (UniqueConstraint("event_id", "number", name="uq_ts_round_number"),)


class Match(Base):
    __tablename__ = "ts_matches"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("ts_events.id"), index=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("ts_rounds.id"), index=True)
    round_no: Mapped[int] = mapped_column(Integer)
    number: Mapped[int] = mapped_column(Integer)
    table_no: Mapped[int | None] = mapped_column(Integer, nullable=True)
    entrant_a: Mapped[int] = mapped_column(ForeignKey("ts_entrants.id"))
    entrant_b: Mapped[int | None] = mapped_column(ForeignKey("ts_entrants.id"), nullable=True)
    kind: Mapped[str] = mapped_column(String(20), default="match")
    group_no: Mapped[int | None] = mapped_column(Integer, nullable=True)
    best_of: Mapped[int] = mapped_column(Integer, default=1)
    status: Mapped[str] = mapped_column(String(20), default="pending")
    score_a: Mapped[float | None] = mapped_column(Float, nullable=True)
    score_b: Mapped[float | None] = mapped_column(Float, nullable=True)
    winner_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    games: Mapped[list[list[float]]] = mapped_column(JSON, default=list)
    result_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    confirmed: Mapped[bool] = mapped_column(Boolean, default=False)
    entrants: Mapped[list[int] | None] = mapped_column(JSON, nullable=True)
    """All entrants of a table of more than two (seat order; migration 0003), else NULL."""
    scores: Mapped[list[float] | None] = mapped_column(JSON, nullable=True)
    """Their match scores in the same order (NULL for two-entrant matches)."""


class Result(Base):
    """A table's signed result as received and acknowledged (never updated)."""

    __tablename__ = "ts_results"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("ts_events.id"), index=True)
    round_no: Mapped[int] = mapped_column(Integer)
    table_no: Mapped[int] = mapped_column(Integer)
    revision: Mapped[int] = mapped_column(Integer)
    match_id: Mapped[int] = mapped_column(ForeignKey("ts_matches.id"), index=True)
    digest: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    received_at: Mapped[float] = mapped_column(Float, default=time.time)
    __table_args__ = (
        UniqueConstraint("event_id", "round_no", "table_no", "revision", name="uq_ts_result_key"),
    )


class AuditEntry(Base):
    """Append-only audit log; each entry chains the hash of the one before."""

    __tablename__ = "ts_audit"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("ts_events.id"), index=True)
    ts: Mapped[float] = mapped_column(Float)
    actor: Mapped[str] = mapped_column(String(80))
    action: Mapped[str] = mapped_column(String(40))
    match_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    detail: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))


class Database:
    """An engine plus a session factory, migrated to the latest schema on open."""

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        self.url = normalize_url(url)
        kwargs: dict[str, Any] = {"future": True}
        if self.url.startswith("sqlite"):
            kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
            kwargs.update(pool_size=10, max_overflow=20, pool_timeout=30)
        else:
            # Pages are served from a thread pool: room for bursts of readers.
            kwargs.update(pool_pre_ping=True, pool_size=10, max_overflow=20, pool_timeout=10)
        self.engine: Engine = create_engine(self.url, **kwargs)
        if self.url.startswith("sqlite"):
            event.listen(self.engine, "connect", _sqlite_pragmas)
        if migrate:
            upgrade(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction: committed on success, rolled back on any error."""
        s = self._sessions()
        try:
            yield s
            s.commit()
        except BaseException:
            s.rollback()
            raise
        finally:
            s.close()

    def close(self) -> None:
        self.engine.dispose()


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    # FULL: a commit is on disk (WAL fsynced) before it returns, so nothing the
    # bridge acknowledges to a table can be lost in a power cut.
    cur.execute("PRAGMA synchronous=FULL")
    cur.close()


def normalize_url(url: str) -> str:
    """Accept a bare file path as SQLite, and ``postgresql://`` as psycopg 3."""
    if "://" not in url:
        return f"sqlite:///{Path(url).resolve()}"
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Run the Alembic migrations up to ``revision`` on this engine (nothing
    to do, and Alembic not even imported, when the database is at the head)."""
    if revision == "head" and current_revision(engine) == HEAD_REVISION:
        return
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def current_revision(engine: Engine) -> str | None:
    """The migration a database is at (Alembic's own table), None when it has none yet."""
    from sqlalchemy import inspect, text

    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def downgrade(engine: Engine, revision: str) -> None:
    """Run the Alembic migrations down to ``revision`` (maintenance and tests)."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, revision)


# --- reading a match row (two-sided and k-way alike) ---------------------------


def match_entrants(m: Match) -> list[int]:
    """Every entrant of a match in seat order (one for a bye)."""
    if m.entrants:
        return [int(e) for e in m.entrants]
    return [m.entrant_a] if m.entrant_b is None else [m.entrant_a, m.entrant_b]


def match_scores(m: Match) -> list[float] | None:
    """The match scores in the order of :func:`match_entrants`, or None before a result."""
    if m.scores:
        return [float(x) for x in m.scores]
    if m.score_a is None:
        return None
    return [float(m.score_a)] if m.entrant_b is None else [float(m.score_a), float(m.score_b or 0.0)]
