"""Spoken announcements through espeak-ng: queued, never in the referee's way.

A table may speak what its display shows (whose turn it is after a pause,
each rejection's instruction, hand and match results) in the table's
language. Speaking takes seconds, the referee must answer in milliseconds,
so :class:`Announcer` only queues: a worker thread hands each sentence to a
:class:`Voice` backend. Newer words make older ones obsolete: a rejection that
was corrected before it was spoken is dropped (``mute_pending``), and the
queue keeps only the latest few sentences.

Backends, as gpiozero does with pin factories: :class:`EspeakVoice` runs
``espeak-ng`` (a Debian package on the Pi, with Portuguese and Malay voices),
:class:`RecordingVoice` remembers what it was asked to say (tests, and a
table without a speaker).
"""

from __future__ import annotations

import contextlib
import queue
import shutil
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, time
from pathlib import Path
from typing import Protocol

#: espeak-ng voice of each table language.
VOICES: dict[str, str] = {"en": "en", "pt-BR": "pt-br", "ms": "ms"}


class SpeechUnavailableError(RuntimeError):
    """espeak-ng is not installed (``sudo apt-get install espeak-ng``)."""


class Voice(Protocol):
    """What an announcer needs from a speech backend."""

    def speak(self, text: str, lang: str, volume: int) -> None: ...


@dataclass
class RecordingVoice:
    """Remembers every sentence instead of speaking it."""

    spoken: list[tuple[str, str, int]] = field(default_factory=list)

    def speak(self, text: str, lang: str, volume: int) -> None:
        self.spoken.append((text, lang, volume))


class EspeakVoice:
    """espeak-ng on the default sound device (or into WAV files)."""

    def __init__(self, executable: str | None = None, speed_wpm: int = 160) -> None:
        found = executable or shutil.which("espeak-ng")
        if not found:
            raise SpeechUnavailableError(
                "espeak-ng is not installed: sudo apt-get install espeak-ng "
                "(or run without --speech)"
            )
        self.executable = found
        self.speed_wpm = speed_wpm

    def _args(self, text: str, lang: str, volume: int) -> list[str]:
        amplitude = max(0, min(200, round(volume * 2)))  # espeak's -a is 0..200
        return [self.executable, "-v", VOICES.get(lang, "en"), "-s", str(self.speed_wpm),
                "-a", str(amplitude), "--", text]

    def speak(self, text: str, lang: str, volume: int) -> None:
        subprocess.run(self._args(text, lang, volume), check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)

    def render(self, text: str, lang: str, path: Path, volume: int = 100) -> Path:
        """Write the sentence to a WAV file instead of the speaker."""
        args = self._args(text, lang, volume)
        args[1:1] = ["-w", str(path)]
        subprocess.run(args, check=True, capture_output=True, timeout=60)
        return path


@dataclass(frozen=True)
class QuietHours:
    """A daily span (may cross midnight) in which the table stays silent."""

    start: time
    end: time

    @classmethod
    def parse(cls, text: str) -> QuietHours:
        """``"22:00-08:00"`` -> QuietHours; ValueError with the expected form."""
        try:
            a, b = text.split("-")
            return cls(time.fromisoformat(a.strip()), time.fromisoformat(b.strip()))
        except ValueError:
            raise ValueError(f"quiet hours {text!r}: write them as HH:MM-HH:MM, "
                             "for example 22:00-08:00") from None

    def contains(self, moment: time) -> bool:
        if self.start <= self.end:
            return self.start <= moment < self.end
        return moment >= self.start or moment < self.end


class Announcer:
    """Speaks sentences in order on a worker thread; ``say`` never blocks.

    ``volume`` is 0..100 (0: silent). ``quiet`` silences the table during
    its hours (the clock is injected for tests). ``close()`` is idempotent;
    the announcer is a context manager.
    """

    def __init__(self, voice: Voice, lang: str = "en", volume: int = 80,
                 quiet: QuietHours | None = None, max_pending: int = 4,
                 clock: Callable[[], datetime] = datetime.now) -> None:
        if not 0 <= volume <= 100:
            raise ValueError(f"volume {volume}: choose 0 (silent) to 100")
        self.voice = voice
        self.lang = lang
        self.volume = volume
        self.quiet = quiet
        self.clock = clock
        self._queue: queue.Queue[tuple[int, str] | threading.Event | None] = queue.Queue()
        self._max_pending = max_pending
        self._generation = 0
        self._pending = 0
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="announcer", daemon=True)
        self._thread.start()

    def say(self, text: str) -> bool:
        """Queue ``text``; False when it was not queued (silent, quiet hours, closed)."""
        if self._closed or self.volume == 0 or not text.strip():
            return False
        if self.quiet is not None and self.quiet.contains(self.clock().time()):
            return False
        with self._lock:
            if self._pending >= self._max_pending:
                self._generation += 1  # too far behind: what waits is stale
                self._pending = 0
            self._pending += 1
            self._queue.put((self._generation, text))
        return True

    def mute_pending(self) -> None:
        """Drop what is queued and not yet spoken (the message was corrected)."""
        with self._lock:
            self._generation += 1
            self._pending = 0

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            generation, text = item
            with self._lock:
                if generation != self._generation:
                    continue
                self._pending = max(0, self._pending - 1)
            # a broken speaker never stops the game
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                self.voice.speak(text, self.lang, self.volume)

    def drain(self, timeout: float = 30.0) -> bool:
        """Wait until everything queued so far was spoken or dropped."""
        if self._closed:
            return True
        marker = threading.Event()
        self._queue.put(marker)
        return marker.wait(timeout)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._thread.join(5)

    def __enter__(self) -> Announcer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
