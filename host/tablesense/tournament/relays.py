"""Spectators through relay brokers: a fan-out tree of Mosquitto bridges.

A final watched by thousands is not served by the director's process. The
tables' public progress (``tablesense/tables/+/live``, see :mod:`.live`) is
all a spectator may read; a *relay broker* bridges exactly those topics in
from the director's broker (or from another relay: a tree) and hands them to
browsers over its WebSocket listener (MQTT over WebSocket), read-only and
anonymous. More spectators: more relays, each a generated config, no code.

Each relay has an account at the director's broker (``relay-NAME``) that may
only *read* the live topics; at the relay, anonymous clients may only read
them too, on either listener (a spectator cannot publish, and cannot read a
result, an ack or an assignment: none of those ever reaches a relay).
``max_connections`` caps each listener. A relay further down the tree
bridges from a relay's plain MQTT listener anonymously.

An event may give its spectators a token instead (``token``, the same for
every relay of the tree): then neither listener admits anonymous clients;
a spectator logs in as ``spectator`` with the token as its password and may
still only read the live topics, and a relay bridging from a relay logs in
the same way. A wrong token is refused at the connection and reads nothing.

Mosquitto 2.0.11 (Debian 12) exits with "Unable to start any listening
sockets" when a WebSocket listener is its only one; a relay always has the
plain MQTT listener beside it, which is also what the next relay bridges to.
"""

from __future__ import annotations

import re
import secrets
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from .live import LIVE_TOPIC_FILTER
from .mosquitto import broker_account, give_to_broker_account, password_hash
from .venues import VenueError, add_broker_user

RELAY_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,30}$")
#: Spectators one relay listener admits by default (a 2-core relay carries this comfortably).
DEFAULT_MAX_SPECTATORS = 5000


#: The account a spectator logs in with at a relay of an event with a token.
SPECTATOR_USER = "spectator"
#: A token: URL-safe letters, digits, ``-`` and ``_`` (what :func:`secrets.token_urlsafe` makes).
TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,128}$")
MAX_TOKEN_FILE_BYTES = 1024


def spectator_token(path: Path) -> str:
    """The event's spectator token kept in ``path``; a new one is made and
    written there (mode 0600) when ``path`` does not exist, so the first relay
    of a tree makes it and the others read it."""
    if not path.exists():
        token = secrets.token_urlsafe(18)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(token + "\n")
        path.chmod(0o600)
        return token
    st = path.stat()
    if not stat.S_ISREG(st.st_mode):
        raise VenueError(f"{path} is not a regular file: a spectator token is a short text file")
    if st.st_size > MAX_TOKEN_FILE_BYTES:
        raise VenueError(f"{path} has {st.st_size} bytes: a spectator token file has at most {MAX_TOKEN_FILE_BYTES}")
    token = path.read_text(errors="replace").strip()
    if not TOKEN.match(token):
        raise VenueError(f"{path} does not hold a spectator token (16 to 128 letters, digits, '-' and '_')")
    return token


@dataclass(frozen=True)
class RelayFiles:
    conf: Path
    acl: Path
    user: str | None
    """The relay's account at the director's broker (None: it bridges from another relay)."""
    password: str | None
    passwd: Path | None = None
    """The spectators' password file (None: anonymous spectators)."""


def relay_user(name: str) -> str:
    if not RELAY_NAME.match(name):
        raise VenueError(f"a relay name is lower-case letters, digits and dashes (up to 31), not {name!r}")
    return f"relay-{name}"


def add_relay_user(director_dir: Path, name: str, password: str | None = None) -> tuple[str, str]:
    """Give the relay's bridge a read-only account for the live topics at the director's broker.

    Run again for the same relay, it replaces that account's password; the
    director's broker reads it on its next start (or ``kill -HUP``)."""
    user = relay_user(name)
    pw = add_broker_user(director_dir, user, password, f"# relay {name!r}: the tables' public progress, read only\n"
                         f"user {user}\ntopic read {LIVE_TOPIC_FILTER}\n")
    return user, pw


def write_relay_config(
    out: Path,
    *,
    name: str,
    upstream_host: str,
    upstream_port: int,
    director_dir: Path | None = None,
    port: int = 1884,
    ws_port: int = 9001,
    bind: str = "0.0.0.0",
    max_spectators: int = DEFAULT_MAX_SPECTATORS,
    run_as: str | None = None,
    token: str | None = None,
) -> RelayFiles:
    """Write a relay broker's ``mosquitto.conf`` and ``acl`` into ``out``.

    With ``director_dir`` the relay bridges from the director's broker (and
    gets its account there); without, from another relay's MQTT listener at
    ``upstream_host:upstream_port`` (anonymous, read-only; with ``token``, as
    ``spectator`` with the token). ``token``: the event's spectator token
    (:func:`spectator_token`): spectators log in with it instead of anonymously."""
    relay_user(name)  # a name the broker's files can carry
    if token is not None and not TOKEN.match(token):
        raise VenueError("a spectator token is 16 to 128 letters, digits, '-' and '_'")
    if not 0 < max_spectators <= 1_000_000:
        raise VenueError(f"max spectators is 1 to 1000000, not {max_spectators}")
    if port == ws_port:
        raise VenueError(f"the MQTT port and the WebSocket port must differ (both {port})")
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    user = pw = None
    cafile = None
    if director_dir is not None:
        user, pw = add_relay_user(director_dir, name)
        director_ca = director_dir.resolve() / "ca.crt"
        if director_ca.is_file():  # the director's broker speaks TLS: the bridge checks its certificate
            cafile = out / "director-ca.crt"
            shutil.copyfile(director_ca, cafile)
    acl = out / "acl"
    passwd = None
    if token is None:
        acl.write_text(f"# generated by tablesense: anonymous clients read the tables' public progress, nothing else\n"
                       f"topic read {LIVE_TOPIC_FILTER}\n")
        listener = ["allow_anonymous true", f"acl_file {acl}", f"max_connections {max_spectators}"]
    else:
        acl.write_text(f"# generated by tablesense: spectators (with the event's token) read the tables' public "
                       f"progress, nothing else\nuser {SPECTATOR_USER}\ntopic read {LIVE_TOPIC_FILTER}\n")
        passwd = out / "passwd"
        passwd.write_text(f"{SPECTATOR_USER}:{password_hash(token)}\n")
        passwd.chmod(0o600)
        listener = ["allow_anonymous false", f"password_file {passwd}", f"acl_file {acl}",
                    f"max_connections {max_spectators}"]
    lines = [
        f"# generated by tablesense (tournament relay-config): relay {name!r}",
        "per_listener_settings true",
        "persistence false",
        "max_queued_messages 100",
        "max_packet_size 70000",
        "",
        "# plain MQTT: the next relay of the tree bridges from here",
        f"listener {port} {bind}",
        *listener,
        "",
        "# browsers: MQTT over WebSocket",
        f"listener {ws_port} {bind}",
        "protocol websockets",
        *listener,
        "",
        f"connection tablesense-relay-{name}",
        f"address {upstream_host}:{upstream_port}",
        f"remote_clientid tablesense-relay-{name}",
        "bridge_protocol_version mqttv311",
        "cleansession true",
        "try_private false",
        "notifications false",
        "restart_timeout 1 5",
        "keepalive_interval 10",
        f"topic {LIVE_TOPIC_FILTER} in 0",
    ]
    if user is not None and pw is not None:
        lines += [f"remote_username {user}", f"remote_password {pw}"]
    elif token is not None:  # from a relay of the same event: it wants the token too
        lines += [f"remote_username {SPECTATOR_USER}", f"remote_password {token}"]
    if cafile is not None:
        lines += [f"bridge_cafile {cafile}", "bridge_insecure false"]
    account = broker_account(out, run_as)
    if run_as:
        lines.insert(1, f"user {run_as}")
    elif account == "root":
        lines[1:1] = ["user root"]
    conf = out / "mosquitto.conf"
    conf.write_text("\n".join(lines) + "\n")
    conf.chmod(0o600)  # it may hold the bridge's password
    if account not in (None, "root"):
        give_to_broker_account(account, [out, acl, conf, *([cafile] if cafile else []), *([passwd] if passwd else [])])
    return RelayFiles(conf, acl, user, pw, passwd)
