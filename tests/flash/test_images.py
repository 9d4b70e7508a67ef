"""The shipped binaries are the ones PROVENANCE.md names, and an installed
package carries them."""

from __future__ import annotations

import pytest

from tablesense.flash import images
from tablesense.flash.uf2 import FAMILY_RP2040, load
from tablesense.sim import rp2040


def test_micropython_uf2_hash() -> None:
    assert images.sha256_of(images.MICROPYTHON_UF2) == images.MICROPYTHON_UF2_SHA256


def test_bootrom_hash() -> None:
    assert images.sha256_of(rp2040.BOOTROM) == rp2040.BOOTROM_SHA256
    assert rp2040.BOOTROM.stat().st_size == 16384


def test_provenance_lists_both_hashes() -> None:
    text = (images.HERE / "PROVENANCE.md").read_text()
    assert images.MICROPYTHON_UF2_SHA256 in text
    assert rp2040.BOOTROM_SHA256 in text


def test_check_refuses_a_damaged_file(tmp_path) -> None:
    bad = tmp_path / "x.uf2"
    bad.write_bytes(images.MICROPYTHON_UF2.read_bytes()[:-1] + b"\x00")
    with pytest.raises(ValueError, match="damaged"):
        images.check(bad, images.MICROPYTHON_UF2_SHA256)


def test_bundled_uf2_is_an_rp2040_image_at_flash_start() -> None:
    img = load(images.MICROPYTHON_UF2, "rp2040")
    assert img.family == FAMILY_RP2040
    assert img.start == 0x10000000


def test_package_data_covers_the_binaries() -> None:
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    data = tomllib.loads((root / "pyproject.toml").read_text())
    globs = data["tool"]["setuptools"]["package-data"]["tablesense"]
    assert "**/*.uf2" in globs and "**/*.bin" in globs and "**/*.md" in globs


def test_flash_defaults_to_the_bundled_image_for_a_bootsel_board(monkeypatch) -> None:
    from rich.console import Console

    from tablesense.flash import cli, picoboot

    err = Console(file=open("/dev/null", "w"))  # noqa: SIM115
    monkeypatch.setattr(picoboot, "find_devices", lambda: [(object(), "rp2040")])
    assert cli._micropython_image(None, False, False, err) == images.MICROPYTHON_UF2
    # a port named and nothing asked: deploy only
    assert cli._micropython_image(None, False, True, err) is None
    # the user's own file wins; "bundled" names ours
    own = images.HERE / "own.uf2"
    assert cli._micropython_image(own, False, False, err) == own
    assert cli._micropython_image(cli.Path("bundled"), False, True, err) == images.MICROPYTHON_UF2
    monkeypatch.setattr(picoboot, "find_devices", lambda: [])
    from tablesense.flash import mass_storage

    monkeypatch.setattr(mass_storage, "mounted_volumes", lambda: [])
    assert cli._micropython_image(None, False, False, err) is None
