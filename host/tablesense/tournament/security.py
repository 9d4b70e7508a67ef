"""Signing of table messages (Ed25519) and the canonical form that is signed.

Why Ed25519 and not an HMAC per table: with HMAC the director would have to
hold every table's secret, so a copy of the director's database (or of an
export) would be enough to forge results. With Ed25519 each table keeps its
private key (next to its journal) and the director, the exports and any
auditor hold only public keys: anyone can verify the archive, nobody but the
table can sign for it. Signing and verifying take tens of microseconds, far
below the cost of replaying the records.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey


class SignatureError(ValueError):
    """A message's signature is missing, malformed or does not verify."""


def canonical(obj: Any) -> bytes:
    """The exact bytes that are signed: sorted keys, no spaces, UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest(obj: Any) -> str:
    """SHA-256 hex of the canonical form (identity of a payload)."""
    return hashlib.sha256(canonical(obj)).hexdigest()


class TableKey:
    """A table's private key: signs what the table publishes."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key

    @classmethod
    def generate(cls) -> TableKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_seed(cls, seed: bytes) -> TableKey:
        """Deterministic key from 32 bytes (simulations and tests only)."""
        return cls(Ed25519PrivateKey.from_private_bytes(hashlib.sha256(seed).digest()))

    @classmethod
    def load(cls, path: Path) -> TableKey:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise SignatureError(f"{path} does not hold an Ed25519 private key")
        return cls(key)

    def save(self, path: Path) -> None:
        pem = self._key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        path.write_bytes(pem)
        path.chmod(0o600)

    @property
    def public(self) -> str:
        """The public key as base64 of its 32 raw bytes (what the director stores)."""
        raw = self._key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        return base64.b64encode(raw).decode()

    def sign(self, body: dict[str, Any]) -> dict[str, Any]:
        """A copy of ``body`` with ``sig`` (base64 Ed25519 over its canonical form)."""
        unsigned = {k: v for k, v in body.items() if k != "sig"}
        sig = self._key.sign(canonical(unsigned))
        return {**unsigned, "sig": base64.b64encode(sig).decode()}


def verify(public_key_b64: str, message: dict[str, Any], signed: bytes | None = None) -> dict[str, Any]:
    """Check ``message['sig']`` against the table's public key; return the body without it.
    ``signed``: the body's canonical bytes when the caller has them already."""
    sig_b64 = message.get("sig")
    if not isinstance(sig_b64, str):
        raise SignatureError("message is not signed")
    try:
        sig = base64.b64decode(sig_b64, validate=True)
        pub = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key_b64))
    except ValueError as exc:
        raise SignatureError(f"malformed signature or key: {exc}") from exc
    body = {k: v for k, v in message.items() if k != "sig"}
    try:
        pub.verify(sig, canonical(body) if signed is None else signed)
    except InvalidSignature as exc:
        raise SignatureError("signature does not verify with this table's key") from exc
    return body


#: PBKDF2-SHA256 rounds of a badge digest: a tap at the table costs a few
#: milliseconds, while guessing a 4-byte UID from its digest costs 2^32 of them.
BADGE_ITERATIONS = 20_000
_badge_cache: dict[tuple[str, str], str] = {}


def badge_digest(uid: str, salt: str) -> str:
    """What a table learns of a badge: a salted, slow digest of its UID (hex,
    lower case), never the UID, which would let anyone who reads the
    assignment clone the badge. Cached: the director digests every badge of a
    round, a table every tap."""
    key = (str(uid).strip().lower(), salt)
    hit = _badge_cache.get(key)
    if hit is None:
        hit = hashlib.pbkdf2_hmac("sha256", key[0].encode(), salt.encode(), BADGE_ITERATIONS).hex()
        if len(_badge_cache) > 100_000:  # a long-running director across many events
            _badge_cache.clear()
        _badge_cache[key] = hit
    return hit


def badges_tapped(taps: Iterable[str], sides: Sequence[Iterable[str]], salt: str) -> dict[str, int]:
    """The taps (UIDs read on the table) that belong to a side of the match, by
    the sides' badge digests: UID -> side index (0-based)."""
    owner = {d: i for i, side in enumerate(sides) for d in side}
    out: dict[str, int] = {}
    for uid in taps:
        side = owner.get(badge_digest(uid, salt))
        if side is not None:
            out[str(uid).strip().lower()] = side
    return out
