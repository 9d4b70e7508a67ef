"""Signing tests written to kill mutants of tournament/security.py
(benchmarks/mutation.py, docs/mutation-testing.md): the exact bytes that are signed,
every refusal of ``verify`` with its message, and the key file."""

from __future__ import annotations

import base64
import hashlib
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tablesense.tournament.security import SignatureError, TableKey, canonical, digest, verify


def test_canonical_form_is_sorted_compact_utf8() -> None:
    obj = {"b": 1, "a": "é", "c": [1, {"z": None, "y": True}]}
    assert canonical(obj) == '{"a":"é","b":1,"c":[1,{"y":true,"z":null}]}'.encode()
    assert digest(obj) == hashlib.sha256(canonical(obj)).hexdigest()
    assert digest({"a": 1}) == hashlib.sha256(b'{"a":1}').hexdigest()
    assert len(digest({})) == 64


def test_seeded_keys_are_deterministic_and_distinct() -> None:
    a = TableKey.from_seed(b"table-1")
    assert a.public == TableKey.from_seed(b"table-1").public
    assert a.public != TableKey.from_seed(b"table-2").public
    raw = base64.b64decode(a.public, validate=True)
    assert len(raw) == 32
    assert TableKey.generate().public != TableKey.generate().public


def test_sign_and_verify() -> None:
    key = TableKey.from_seed(b"t")
    body = {"match": "m1", "scores": [3, 1]}
    msg = key.sign(body)
    assert body == {"match": "m1", "scores": [3, 1]}  # the caller's body is not changed
    assert set(msg) == {"match", "scores", "sig"}
    assert len(base64.b64decode(msg["sig"], validate=True)) == 64
    assert verify(key.public, msg) == body
    # signing a signed message signs the body, not the old signature
    assert key.sign(msg) == msg
    assert key.sign({**body, "sig": "junk"}) == msg


def test_verify_refuses_with_a_reason() -> None:
    key = TableKey.from_seed(b"t")
    msg = key.sign({"match": "m1"})
    with pytest.raises(SignatureError, match="^message is not signed$"):
        verify(key.public, {"match": "m1"})
    with pytest.raises(SignatureError, match="^message is not signed$"):
        verify(key.public, {"match": "m1", "sig": 5})
    with pytest.raises(SignatureError, match="^malformed signature or key"):
        verify(key.public, {**msg, "sig": "not base64!"})
    with pytest.raises(SignatureError, match="^malformed signature or key"):
        verify(base64.b64encode(b"short").decode(), msg)
    with pytest.raises(SignatureError, match="^signature does not verify with this table's key$"):
        verify(key.public, {**msg, "match": "m2"})
    with pytest.raises(SignatureError, match="does not verify"):
        verify(TableKey.from_seed(b"other").public, msg)
    with pytest.raises(SignatureError, match="does not verify"):
        verify(key.public, {**msg, "extra": 1})


def test_key_file_round_trip_is_private(tmp_path: Path) -> None:
    key = TableKey.from_seed(b"t")
    path = tmp_path / "table.key"
    key.save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    loaded = TableKey.load(path)
    assert loaded.public == key.public
    msg = loaded.sign({"x": 1})
    assert verify(key.public, msg) == {"x": 1}


def test_a_key_file_of_another_kind_is_refused(tmp_path: Path) -> None:
    other = ec.generate_private_key(ec.SECP256R1())
    path = tmp_path / "ec.key"
    path.write_bytes(other.private_bytes(serialization.Encoding.PEM,
                                         serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()))
    with pytest.raises(SignatureError, match="does not hold an Ed25519 private key"):
        TableKey.load(path)


def test_messages_parsed_from_the_wire_sign_and_verify() -> None:
    """Keys read from JSON are new string objects, not the literal 'sig':
    the signature field is found by equality, never by identity."""
    import json

    key = TableKey.from_seed(b"t")
    msg = key.sign({"match": "m1"})
    wire = json.loads(json.dumps(msg))
    assert key.sign(wire) == msg
    assert verify(key.public, wire) == {"match": "m1"}
