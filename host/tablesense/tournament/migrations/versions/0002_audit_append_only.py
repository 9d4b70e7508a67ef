"""The audit log refuses UPDATE and DELETE at the database level.

The code only ever appends; these triggers make a slip (or a hand-typed SQL
statement) fail loudly instead of silently rewriting history. Someone who
drops the triggers can still edit rows, which the hash chain then exposes.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

MESSAGE = "the audit log is append-only"


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION ts_audit_append_only() RETURNS trigger AS $$ "
            f"BEGIN RAISE EXCEPTION '{MESSAGE}'; END; $$ LANGUAGE plpgsql"
        )
        op.execute(
            "CREATE TRIGGER ts_audit_no_change BEFORE UPDATE OR DELETE ON ts_audit "
            "FOR EACH ROW EXECUTE FUNCTION ts_audit_append_only()"
        )
    else:
        for what in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER ts_audit_no_{what.lower()} BEFORE {what} ON ts_audit "
                f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS ts_audit_no_change ON ts_audit")
        op.execute("DROP FUNCTION IF EXISTS ts_audit_append_only()")
    else:
        for what in ("update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS ts_audit_no_{what}")
