"""Tag enrolment: teach the registry which tag is which tile, card or badge.

The person holds the pieces; the table asks for each in turn (console and the
enrolment cell's LED), reads the tag on that cell until ``confirm_reads``
consecutive reads agree, and refuses with a clear message a tag that is
already enrolled (as what), a random-UID tag (its UID changes on every read,
so it can never identify a piece) or a read that does not settle. The
registry file is saved after every piece, so an interruption loses nothing.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tablesense.flash.client import BoardClient, BoardError
from tablesense.sentence import Sentence, message_of, say
from tablesense.table.tags import Piece, TagRegistry, TagRegistryError

BLUE, GREEN, RED, OFF = (0, 0, 96), (0, 96, 0), (96, 0, 0), (0, 0, 0)


class EnrollError(RuntimeError):
    """Enrolment cannot go on (the board stopped answering, a timeout)."""


@dataclass
class EnrollStep:
    piece: str
    uid: bytes | None
    outcome: str  # "enrolled" | "refused" | "skipped"
    message: str


def set_members(kind: str, registry: TagRegistry, names: list[str] | None = None) -> list[str]:
    """The pieces still to enrol, in the order they are asked for."""
    if kind == "badges":
        if not names:
            raise ValueError(say("--set badges needs --names 'Alice,Bob,...'"))
        return [f"badge:{n.strip()}" for n in names if n.strip() and f"badge:{n.strip()}" not in registry]
    if kind not in ("tiles", "cards32", "cards52"):
        raise ValueError(say("unknown set {set}: use tiles, cards32, cards52 or badges", set=repr(kind)))
    return list(registry.missing(kind))  # type: ignore[arg-type]


def foreign_reason(uid: bytes) -> Sentence | None:
    """Why a tag cannot be one of our pieces, or None."""
    if len(uid) == 4 and uid[0] == 0x08:
        return say("it has a random UID (it changes on every read); use NTAG or MIFARE tags with fixed UIDs")
    if len(uid) not in (4, 7, 10):
        return say("its UID has {n} bytes; ISO 14443 A tags have 4, 7 or 10", n=len(uid))
    return None


class Enroller:
    """Runs the enrolment loop on one board's cell."""

    def __init__(
        self,
        client: BoardClient,
        registry: TagRegistry,
        registry_path: Path | None,
        channel: int,
        led: int | None,
        *,
        confirm_reads: int = 4,
        interval: float = 0.05,
        timeout: float = 60.0,
        say: Callable[[str], None] = print,  # given Sentences: the caller prints them in its language
    ) -> None:
        self.client = client
        self.registry = registry
        self.path = registry_path
        self.channel = channel
        self.led = led
        self.confirm_reads = confirm_reads
        self.interval = interval
        self.timeout = timeout
        self.say = say
        self._n_leds = 0

    def _light(self, color: tuple[int, int, int]) -> None:
        if self.led is None or self.led >= self._n_leds:
            return
        frame = [OFF] * self._n_leds
        frame[self.led] = color
        with contextlib.suppress(BoardError):
            self.client.leds(frame)

    def _cell(self) -> object:
        return self.client.snapshot()[self.channel]

    def _wait_settled_tag(self) -> bytes:
        """Wait until `confirm_reads` consecutive reads see the same UID."""
        deadline = time.monotonic() + self.timeout
        last: object = None
        same = 0
        while time.monotonic() < deadline:
            state = self._cell()
            if isinstance(state, bytes):
                same = same + 1 if state == last else 1
                last = state
                if same >= self.confirm_reads:
                    return state
            else:
                same = 0
                last = None
            time.sleep(self.interval)
        raise EnrollError(say("no tag settled on the enrolment cell within {seconds} s", seconds=f"{self.timeout:.0f}"))

    def _wait_empty(self) -> None:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self._cell() is None:
                return
            time.sleep(self.interval)
        raise EnrollError(say("the tag was not taken off the enrolment cell"))

    def run(self, pieces: list[str]) -> list[EnrollStep]:
        try:
            ident = self.client.hello(timeout=0.6, retries=2)
        except BoardError as exc:
            raise EnrollError(message_of(exc)) from None
        self._n_leds = ident.leds if ident.caps & 1 else 0
        steps: list[EnrollStep] = []
        queue = list(pieces)
        try:
            while queue:
                piece = Piece.parse(queue[0])
                if self._cell() is not None:
                    self.say(say("Take the tag off the enrolment cell first."))
                    self._wait_empty()
                self._light(BLUE)
                self.say(say("Place {piece} on the enrolment cell ({left} to go).", piece=str(piece), left=len(queue)))
                uid = self._wait_settled_tag()
                reason = foreign_reason(uid)
                known = self.registry.piece(uid)
                if reason is None and isinstance(known, Piece):
                    reason = say("this tag is already enrolled as {piece}", piece=str(known))
                if reason is not None:
                    self._light(RED)
                    msg = say("Refused tag {uid}: {reason}. Take it off and place {piece}.", uid=uid.hex(),
                              reason=reason, piece=str(piece))
                    self.say(msg)
                    steps.append(EnrollStep(str(piece), uid, "refused", msg))
                    self._wait_empty()
                    continue
                try:
                    self.registry.add(uid, piece)
                except TagRegistryError as exc:
                    self._light(RED)
                    steps.append(EnrollStep(str(piece), uid, "refused", str(exc)))
                    self.say(say("Refused: {error}", error=message_of(exc)))
                    self._wait_empty()
                    continue
                if self.path is not None:
                    self.registry.save(self.path)
                self._light(GREEN)
                self.say(say("{piece} = {uid} enrolled. Take it off.", piece=str(piece), uid=uid.hex()))
                steps.append(EnrollStep(str(piece), uid, "enrolled", "ok"))
                queue.pop(0)
                self._wait_empty()
        except BoardError as exc:
            raise EnrollError(say("the board stopped answering: {error}", error=message_of(exc))) from None
        finally:
            self._light(OFF)
        return steps
