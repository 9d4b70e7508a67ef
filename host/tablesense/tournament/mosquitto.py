"""Mosquitto configuration for an event: listener, password file, per-table ACL.

One broker user per table (``table-N``) and one for the director. The ACL lets
a table publish only under its own ``tablesense/tables/table-N/`` topics and
read only what the director addresses to it, so a table cannot impersonate
another even before signatures are checked. Passwords are stored in
Mosquitto 2's PBKDF2-SHA512 format (``$7$iterations$salt$hash``), written
here directly so no ``mosquitto_passwd`` binary is needed.

With ``tls`` (the default of ``tournament mosquitto-config``) a small
certificate authority is generated beside the config (``ca.crt``, and
``server.crt`` for the broker's names and addresses); the tables and the
director connect with ``mqtts://...?ca=ca.crt`` and verify the broker, so a
table's password never crosses the club's network in clear. The broker also
refuses packets over ``MAX_MESSAGE_BYTES`` (it disconnects the sender).

Client ids are bound to users (``use_username_as_clientid``): whatever id a
client asks for, the broker gives it its user name, so a table's password can
never take the director's connection or another table's (taking an id
disconnects its holder, and a table's last will would write false
offline/online rows). The broker's own queues are bounded too (messages and
bytes per client, in flight and queued), so a flooding table fills only its
own share and never the broker's memory.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .protocol import MAX_MESSAGE_BYTES, TOPIC_ROOT

DIRECTOR_USER = "director"
#: Messages and bytes the broker keeps for one slow or offline client (beyond
#: them it drops QoS 1 messages for that client; a table re-sends what was not
#: acknowledged) and may have in flight to it.
BROKER_MAX_QUEUED_MESSAGES = 1000
BROKER_MAX_QUEUED_BYTES = 64 * 1024 * 1024
BROKER_MAX_INFLIGHT_MESSAGES = 100
BROKER_MAX_INFLIGHT_BYTES = 8 * 1024 * 1024
PBKDF2_ITERATIONS = 101  # Mosquitto 2.0's default for $7$ hashes


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def table_user(number: int) -> str:
    return f"table-{number}"


def password_hash(password: str, *, salt: bytes | None = None, iterations: int = PBKDF2_ITERATIONS) -> str:
    """A Mosquitto password-file hash: ``$7$<iterations>$<b64 salt>$<b64 pbkdf2-sha512>``."""
    salt = salt if salt is not None else os.urandom(12)
    dk = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations, dklen=64)
    return f"$7${iterations}${base64.b64encode(salt).decode()}${base64.b64encode(dk).decode()}"


def check_password(password: str, stored: str) -> bool:
    """True when ``password`` matches a ``$7$`` hash (used by tests and ``doctor`` checks)."""
    parts = stored.split("$")
    if len(parts) != 5 or parts[1] != "7":
        return False
    iterations, salt, want = int(parts[2]), base64.b64decode(parts[3]), parts[4]
    return password_hash(password, salt=salt, iterations=iterations).split("$")[4] == want


@dataclass(frozen=True)
class BrokerFiles:
    conf: Path
    passwd: Path
    acl: Path
    credentials: dict[str, str]  # user -> clear password (for the director's and tables' configs)
    ca: Path | None = None  # the CA certificate the clients verify the broker with (TLS only)

    def url(self, user: str, host: str = "127.0.0.1", port: int = 1883) -> str:
        """The broker URL for ``user``: ``mqtts://...?ca=...`` when the broker runs TLS."""
        if self.ca is not None:
            return f"mqtts://{user}:{self.credentials[user]}@{host}:{port}?ca={self.ca}"
        return f"mqtt://{user}:{self.credentials[user]}@{host}:{port}"


def write_tls_files(directory: Path, names: list[str], *, days: int = 400) -> tuple[Path, Path, Path]:
    """A small CA and a server certificate signed by it for ``names`` (DNS names
    or IP addresses); returns (ca.crt, server.crt, server.key). EC P-256 keys:
    quick to make, small, and what every MQTT client supports. The CA's key
    is not kept: new certificates mean a new CA (``mosquitto-config`` again)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "tablesense event CA")])
    ca_cert = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                                     encipher_only=False, decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    alt: list[x509.GeneralName] = []
    for n in dict.fromkeys(names):
        try:
            alt.append(x509.IPAddress(ipaddress.ip_address(n)))
        except ValueError:
            alt.append(x509.DNSName(n))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    ca_path, cert_path, key_path = directory / "ca.crt", directory / "server.crt", directory / "server.key"
    ca_path.write_bytes(ca_cert.public_bytes(pem))
    cert_path.write_bytes(cert.public_bytes(pem))
    key_path.write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    key_path.chmod(0o600)
    return ca_path, cert_path, key_path


def broker_names(bind: str, extra: list[str] | None = None) -> list[str]:
    """The names a table may use to reach the broker: the extra ones first, then
    the bind address (unless it is a wildcard), this host's name and loopback."""
    names = list(extra or [])
    if bind not in ("0.0.0.0", "::", ""):
        names.append(bind)
    host = socket.gethostname()
    names += [host, f"{host}.local", "localhost", "127.0.0.1", "::1"]
    return list(dict.fromkeys(names))


def acl_text(extra_users: dict[str, list[str]] | None = None) -> str:
    """The ACL: the director reads every table and writes its own topics;
    ``extra_users`` have exactly the ``topic`` lines given (the simulation's
    wiretap); every other user is a table confined to its own topics."""
    lines = [
        "# generated by tablesense: one user per table, the director reads and addresses them",
        f"user {DIRECTOR_USER}",
        f"topic read {TOPIC_ROOT}/tables/#",
        f"topic readwrite {TOPIC_ROOT}/director/#",
        "",
    ]
    for user, topics in (extra_users or {}).items():
        lines += [f"user {user}", *topics, ""]
    return "\n".join(
        lines + [
            "# every other user is a table: its own topics only",
            f"pattern write {TOPIC_ROOT}/tables/%u/#",
            "# a table does not read its own outgoing topics: a stolen password must",
            "# not let anyone copy a table's results to replay them altered",
            f"pattern read {TOPIC_ROOT}/director/%u/#",
            "",
        ]
    )


def write_broker_config(
    directory: Path,
    *,
    tables: int,
    port: int = 1883,
    bind: str = "127.0.0.1",
    passwords: dict[str, str] | None = None,
    persistence: bool = True,
    run_as: str | None = None,
    tls: bool = False,
    names: list[str] | None = None,
    extra_users: dict[str, list[str]] | None = None,
) -> BrokerFiles:
    """Write ``mosquitto.conf``, ``passwd`` and ``acl`` for ``tables`` tables into ``directory``.

    Missing passwords are generated. Persistence is on so retained
    assignments and queued QoS 1 messages survive a broker restart.
    ``run_as`` writes a ``user`` line: a broker started as root otherwise
    switches to the ``mosquitto`` user, which cannot read files owned by
    another user with mode 0600 (tests run the broker as themselves).
    ``tls`` generates the CA and the broker's certificate (for ``names``
    besides the bind address, this host's name and loopback) and serves
    MQTT over TLS only. ``extra_users`` (user -> ACL ``topic`` lines) adds
    users that are neither the director nor a table.

    Paths in the config are absolute (the broker starts from any folder), and
    when this runs as root the broker's files go to the account it will
    switch to (``run_as``, else ``mosquitto``), so ``mosquitto -c`` started
    as root can read its password file and write its persistence.
    """
    directory = directory.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    creds = dict(passwords or {})
    users = [DIRECTOR_USER, *(extra_users or {})] + [table_user(n) for n in range(1, tables + 1)]
    for u in users:
        creds.setdefault(u, secrets.token_urlsafe(12))
    passwd = directory / "passwd"
    passwd.write_text("".join(f"{u}:{password_hash(creds[u])}\n" for u in users))
    passwd.chmod(0o600)
    acl = directory / "acl"
    acl.write_text(acl_text(extra_users))
    conf = directory / "mosquitto.conf"
    lines = [
        "# generated by tablesense (tournament mosquitto-config)",
        "per_listener_settings false",
        "allow_anonymous false",
        f"password_file {passwd}",
        f"acl_file {acl}",
        f"listener {port} {bind}",
        # A client's id is its user name, whatever it asks for: no one takes another's connection.
        "use_username_as_clientid true",
        f"max_queued_messages {BROKER_MAX_QUEUED_MESSAGES}",
        f"max_queued_bytes {BROKER_MAX_QUEUED_BYTES}",
        f"max_inflight_messages {BROKER_MAX_INFLIGHT_MESSAGES}",
        f"max_inflight_bytes {BROKER_MAX_INFLIGHT_BYTES}",
        # A packet is the payload plus topic and headers; bigger ones disconnect their sender.
        f"max_packet_size {MAX_MESSAGE_BYTES + 4096}",
    ]
    ca = None
    tls_files: list[Path] = []
    if tls:
        ca, cert, key = write_tls_files(directory, broker_names(bind, names))
        tls_files = [ca, cert, key]
        lines += [f"cafile {ca}", f"certfile {cert}", f"keyfile {key}", "tls_version tlsv1.2"]
    account = broker_account(directory, run_as)
    if run_as:
        lines.insert(1, f"user {run_as}")
    elif account == "root":
        lines[1:1] = ["# the mosquitto account cannot reach this folder (a parent folder is private): stay root",
                      "user root"]
    if persistence:
        lines += ["persistence true", f"persistence_location {directory}/", "autosave_interval 5"]
    conf.write_text("\n".join(lines) + "\n")
    creds_file = directory / "credentials"
    creds_file.write_text("".join(f"{u} {creds[u]}\n" for u in users))
    creds_file.chmod(0o600)
    director_pw = directory / "director.password"  # for the director's ?password_file= (never in ps)
    director_pw.write_text(creds[DIRECTOR_USER] + "\n")
    director_pw.chmod(0o600)
    for n in range(1, tables + 1):  # each table's own, to copy to that table (its ?password_file=)
        table_pw = directory / f"{table_user(n)}.password"
        table_pw.write_text(creds[table_user(n)] + "\n")
        table_pw.chmod(0o600)
    if account not in (None, "root"):
        give_to_broker_account(account, [directory, passwd, acl, conf, *tls_files])
    return BrokerFiles(conf=conf, passwd=passwd, acl=acl, credentials={u: creds[u] for u in users}, ca=ca)


def broker_account(directory: Path, run_as: str | None) -> str | None:
    """The account a broker started as root will read its files as (None: not root).

    Mosquitto started as root switches to ``user`` (default ``mosquitto``)
    before it opens the password file, so a 0600 file of root's is then
    unreadable ("Unable to open pwfile"), and so is any file under a private
    folder such as ``/root``. Returns ``run_as`` or ``mosquitto`` when that
    account can reach ``directory`` (its files are then handed to it), else
    ``root`` (the config then keeps the broker root), or None when not root
    or no such account exists.
    """
    import pwd

    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    name = run_as or "mosquitto"
    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        return None
    if name == "root":
        return name
    for parent in directory.parents:
        st = parent.stat()
        ok = st.st_mode & 0o001 or (st.st_uid == pw.pw_uid and st.st_mode & 0o100) or (
            st.st_gid == pw.pw_gid and st.st_mode & 0o010)
        if not ok:
            return "root" if run_as is None else name
    return name


def give_to_broker_account(account: str, paths: list[Path]) -> None:
    """Hand the broker's folder and files to its account (so it reads and persists them)."""
    import pwd

    pw = pwd.getpwnam(account)
    for p in paths:
        os.chown(p, pw.pw_uid, pw.pw_gid)


def read_credentials(directory: Path) -> dict[str, str]:
    """The ``credentials`` file written next to the config (user -> password)."""
    out: dict[str, str] = {}
    for line in (directory / "credentials").read_text().splitlines():
        if line.strip():
            u, p = line.split(" ", 1)
            out[u] = p
    return out


def mosquitto_binary() -> str | None:
    """The broker executable (Debian installs it in /usr/sbin, often not on a user's PATH)."""
    import shutil

    for cand in (shutil.which("mosquitto"), "/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"):
        if cand and Path(cand).exists():
            return cand
    return None


class Mosquitto:
    """A ``mosquitto -c CONF`` child process (tests, ``simulate --broker spawn``).

    ``restart()`` stops it with SIGTERM (it writes its persistence file) and
    starts it again on the same port.
    """

    def __init__(self, conf: Path, port: int, *, binary: str | None = None) -> None:
        self.conf = conf
        self.port = port
        self.binary = binary or mosquitto_binary() or "mosquitto"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 10.0) -> Mosquitto:
        log = open(self.conf.parent / "mosquitto.log", "ab")  # noqa: SIM115 - owned by the child
        self._proc = subprocess.Popen([self.binary, "-c", str(self.conf)], stdout=log, stderr=log)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self._proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited with {self._proc.returncode}; see {self.conf.parent}/mosquitto.log")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not listen on port {self.port} within {timeout} s")

    def stop(self) -> None:
        p = self._proc
        self._proc = None
        if p is None:
            return
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def restart(self, down_for: float = 0.0) -> None:
        self.stop()
        if down_for:
            time.sleep(down_for)
        self.start()

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def __enter__(self) -> Mosquitto:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
