"""More than one venue: a venue's broker bridged to the director's broker.

Tables at a far venue connect to their own Mosquitto (its users, its ACL,
generated as for the director's broker). That broker carries a *bridge*: a
connection to the director's broker under one account per venue
(``venue-NAME``), forwarding the tables' topics out
(``tablesense/tables/#``) and the director's topics in
(``tablesense/director/#``), both at QoS 1 with a persistent session, so
what the tables send while the link is down waits in the venue's broker and
crosses when it is back.

Nothing about results changes: each table still re-sends every outbox
message until the director's acknowledgement (which crosses the bridge the
other way) names it, and the director stores a result once per (event,
round, table, revision), so a result sent before, during and after a cut
arrives exactly once however many copies the bridge delivers.

The director's broker lets a venue account publish any table's topics (the
venue's own ACL confines each table to its own); every result is signed by
its table's key, so a venue cannot pass off one table's result as another's.
"""

from __future__ import annotations

import re
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from .mosquitto import BrokerFiles, password_hash, write_broker_config
from .protocol import TOPIC_ROOT

VENUE_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,30}$")


class VenueError(ValueError):
    """A venue name or director broker folder that cannot be used (the text says why)."""


@dataclass(frozen=True)
class VenueFiles:
    """The venue broker's files, and the account its bridge uses at the director's broker."""

    broker: BrokerFiles
    user: str
    password: str


def venue_user(venue: str) -> str:
    if not VENUE_NAME.match(venue):
        raise VenueError(f"a venue name is lower-case letters, digits and dashes (up to 31), not {venue!r}")
    return f"venue-{venue}"


def add_venue_user(director_dir: Path, venue: str, password: str | None = None) -> tuple[str, str]:
    """Give the venue's bridge an account at the director's broker (passwd, acl, credentials).

    Run again for the same venue, it replaces that account's password. The
    director's broker reads the new account on its next start (or ``kill -HUP``).
    """
    user = venue_user(venue)
    block = f"user {user}\ntopic write {TOPIC_ROOT}/tables/#\ntopic read {TOPIC_ROOT}/director/#\n"
    pw = add_broker_user(director_dir, user, password,
                         f"# the bridge of venue {venue!r}: its tables' messages out, the director's in\n" + block)
    return user, pw


def add_broker_user(director_dir: Path, user: str, password: str | None, acl_block: str) -> str:
    """Write ``user``'s account at the director's broker (passwd, credentials) and
    append ``acl_block`` to its acl once; returns the password (given or new).
    The one way a bridge (a venue's, a relay's) gets an account."""
    director_dir = director_dir.resolve()
    passwd, acl, creds = director_dir / "passwd", director_dir / "acl", director_dir / "credentials"
    for f in (passwd, acl, creds):
        if not f.is_file():
            raise VenueError(f"{f} is missing: generate the director's broker first (tournament mosquitto-config --out {director_dir})")
    pw = password or secrets.token_urlsafe(12)
    _replace_line(passwd, f"{user}:", f"{user}:{password_hash(pw)}")
    _replace_line(creds, f"{user} ", f"{user} {pw}")
    text = acl.read_text()
    if f"user {user}\n" not in text:
        acl.write_text(text.rstrip("\n") + "\n\n" + acl_block)
    return pw


def _replace_line(path: Path, prefix: str, line: str) -> None:
    mode = path.stat().st_mode & 0o777
    kept = [x for x in path.read_text().splitlines() if not x.startswith(prefix)]
    path.write_text("\n".join([*kept, line]) + "\n")
    path.chmod(mode)


def bridge_lines(venue: str, host: str, port: int, user: str, password: str, cafile: Path | None = None) -> list[str]:
    """The ``connection`` section of the venue broker's config."""
    lines = [
        "",
        f"# bridge to the director's broker (tablesense venue {venue!r})",
        f"connection tablesense-{user}",
        f"address {host}:{port}",
        f"remote_clientid tablesense-{user}",
        f"remote_username {user}",
        f"remote_password {password}",
        "bridge_protocol_version mqttv311",
        "cleansession false",
        # the director's broker is a Mosquitto too: a bridge that says so gets retained messages
        # (the tables' assignments) with their retain flag, so a table that starts after the
        # director announced the round still finds its assignment at the venue's broker
        "try_private true",
        "notifications false",
        "restart_timeout 1 5",
        "keepalive_interval 10",
        f"topic {TOPIC_ROOT}/tables/# out 1",
        f"topic {TOPIC_ROOT}/director/# in 1",
    ]
    if cafile is not None:
        lines += [f"bridge_cafile {cafile}", "bridge_insecure false"]
    return lines


def write_venue_config(
    out: Path,
    *,
    venue: str,
    tables: int,
    director_dir: Path,
    director_host: str,
    director_port: int,
    port: int = 1883,
    bind: str = "127.0.0.1",
    run_as: str | None = None,
    tls: bool = False,
) -> VenueFiles:
    """Write the venue broker's config (its tables' users and ACL, and the bridge) into ``out``,
    and add the bridge's account to the director's broker in ``director_dir``."""
    user, pw = add_venue_user(director_dir, venue)
    files = write_broker_config(out, tables=tables, port=port, bind=bind, run_as=run_as, tls=tls)
    cafile = None
    director_ca = director_dir.resolve() / "ca.crt"
    if director_ca.is_file():  # the director's broker speaks TLS: the bridge checks its certificate
        cafile = files.conf.parent / "director-ca.crt"
        shutil.copyfile(director_ca, cafile)
    with files.conf.open("a") as f:
        f.write("\n".join(bridge_lines(venue, director_host, director_port, user, pw, cafile)) + "\n")
    files.conf.chmod(0o600)  # it now holds the bridge's password (the broker reads it before dropping root)
    return VenueFiles(files, user, pw)
