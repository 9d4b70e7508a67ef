"""A board that always answers a HELLO later than the first wait still confirms.

Under a busy host an emulated board (rp2040js) answers every HELLO in more
than the deploy's 1 s first wait; a fixed wait threw each late answer away
(its sequence number was an earlier HELLO's) and the deploy reported "did not
confirm" and rolled back a board that was fine. The wait now doubles on each
silence, so the board is heard."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

import pytest

from tablesense.flash import deploy as dp
from tablesense.flash.client import BoardError, Identity

PAYLOAD = dp.Payload(fw_version="9.9.9", compiled=(), source=())
IDENT = Identity(board=1, protocol=1, uid=b"\x01" * 8, fw_version="9.9.9", cells=8, leds=8, caps=0,
                 config_hash=b"\0\0\0\0")


class SlowBoard:
    """Answers a HELLO only when the caller waits at least ``answers_after`` seconds (no real sleeping)."""

    waits: list[float] = []
    answers_after = 1.5
    files_after = 0.0  # FILES: the board hashes every file first

    def __init__(self, port: str) -> None:
        self.port = port
        self.stats = type("Stats", (), {"rtt_ms": [90.0]})()  # HELLO's round trip (an emulated board's)

    def __enter__(self) -> SlowBoard:
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        return None

    def hello(self, timeout: float, retries: int = 0) -> Identity:
        SlowBoard.waits.append(timeout)
        if timeout < self.answers_after:
            raise BoardError("no answer to HELLO")
        return IDENT

    def files(self, timeout: float | None = None) -> dict[str, bytes]:
        if (1.0 if timeout is None else timeout) < self.files_after:
            raise BoardError("no answer to FILES_REQ")
        return {}


def test_a_board_answering_later_than_the_first_wait_is_heard(tmp_path: Path) -> None:
    port = tmp_path / "ttyACM0"
    port.write_text("")
    SlowBoard.waits = []
    ident = dp.confirm(str(port), PAYLOAD, timeout=20, client_factory=SlowBoard)  # type: ignore[arg-type]
    assert ident == IDENT
    assert SlowBoard.waits[0] == dp.HELLO_TIMEOUT and SlowBoard.waits[-1] >= SlowBoard.answers_after
    assert SlowBoard.waits == sorted(SlowBoard.waits), "each silence waits longer, never shorter"


def test_a_silent_board_still_fails_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port = tmp_path / "ttyACM0"
    port.write_text("")
    SlowBoard.waits = []
    monkeypatch.setattr(SlowBoard, "answers_after", 1e9)
    monkeypatch.setattr(dp.time, "sleep", lambda s: None)
    with pytest.raises(dp.DeployError, match="did not confirm the new firmware: no answer to HELLO"):
        dp.confirm(str(port), PAYLOAD, timeout=0.3, client_factory=SlowBoard)  # type: ignore[arg-type]


def test_a_board_hashing_its_files_slower_than_the_first_wait_is_heard(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """HELLO answered at once, FILES (a hash of every file) in 3 s: the FILES
    wait grows with the HELLO wait; a FILES wait fixed at the client's 1 s
    never heard it, and a busy CI host reported a good deploy as failed."""
    port = tmp_path / "ttyACM0"
    port.write_text("")
    SlowBoard.waits = []
    monkeypatch.setattr(SlowBoard, "answers_after", 0.0)
    monkeypatch.setattr(SlowBoard, "files_after", 3.0)
    monkeypatch.setattr(dp.time, "sleep", lambda s: None)
    assert dp.confirm(str(port), PAYLOAD, timeout=20, client_factory=SlowBoard) == IDENT  # type: ignore[arg-type]
    assert SlowBoard.waits[-1] >= 3.0


def test_an_unchanged_board_hashing_for_a_second_is_found_up_to_date(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A redeploy of what the board runs: HELLO at once, FILES after 1.2 s
    (an emulated board hashing its ~60 KB of files): found up to date over
    the protocol. With FILES waited for as long as HELLO (1 s) it was
    missed twice and the deploy took the raw REPL (~12 s on rp2040js)."""
    port = tmp_path / "ttyACM0"
    port.write_text("")
    monkeypatch.setattr(SlowBoard, "answers_after", 0.0)
    monkeypatch.setattr(SlowBoard, "files_after", 1.2)

    def no_repl(port: str) -> object:
        raise AssertionError("the raw REPL was taken for an unchanged board")

    result = dp.deploy(str(port), PAYLOAD, client_factory=SlowBoard, session_factory=no_repl)  # type: ignore[arg-type]
    assert result.action == "up-to-date"
