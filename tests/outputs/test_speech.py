"""Spoken announcements: queued in order, dropped when stale, silent when told,
and real speech from espeak-ng that lasts about as long as its sentence."""

from __future__ import annotations

import shutil
import threading
import wave
from datetime import datetime, time
from pathlib import Path

import pytest

from tablesense.outputs.speech import (
    VOICES,
    Announcer,
    EspeakVoice,
    QuietHours,
    RecordingVoice,
)
from testsupport import need


class SlowVoice(RecordingVoice):
    """Blocks on the first sentence until released, like a speaker talking."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.started = threading.Event()

    def speak(self, text: str, lang: str, volume: int) -> None:
        if not self.started.is_set():
            self.started.set()
            self.release.wait(5)
        super().speak(text, lang, volume)


def test_sentences_are_spoken_in_order_in_the_table_language() -> None:
    voice = RecordingVoice()
    with Announcer(voice, lang="pt-BR", volume=50) as a:
        assert a.say("vez do Leste")
        assert a.say("Norte bateu")
        assert a.drain()
    assert voice.spoken == [("vez do Leste", "pt-BR", 50), ("Norte bateu", "pt-BR", 50)]


def test_say_never_blocks_and_a_corrected_message_is_not_spoken() -> None:
    voice = SlowVoice()
    with Announcer(voice) as a:
        a.say("first")               # being spoken (blocked)
        assert voice.started.wait(5)
        a.say("put 5-6 back on South's rack")
        a.mute_pending()             # the player corrected it meanwhile
        a.say("it is East's turn")
        voice.release.set()
        assert a.drain()
    assert [s[0] for s in voice.spoken] == ["first", "it is East's turn"]


def test_a_backlog_keeps_only_fresh_words() -> None:
    voice = SlowVoice()
    with Announcer(voice, max_pending=2) as a:
        a.say("speaking")
        assert voice.started.wait(5)
        for i in range(5):
            a.say(f"stale {i}")
        voice.release.set()
        assert a.drain()
    assert len(voice.spoken) <= 3 and voice.spoken[0][0] == "speaking"


def test_quiet_hours_and_volume_zero_keep_the_table_silent() -> None:
    voice = RecordingVoice()
    night = QuietHours.parse("22:00-08:00")
    assert night.contains(time(23, 30)) and night.contains(time(7, 59))
    assert not night.contains(time(12, 0))
    with Announcer(voice, quiet=night, clock=lambda: datetime(2026, 12, 1, 23, 0)) as a:
        assert not a.say("it is East's turn")
    with Announcer(voice, volume=0) as a:
        assert not a.say("it is East's turn")
    assert voice.spoken == []
    with pytest.raises(ValueError, match="HH:MM-HH:MM"):
        QuietHours.parse("late")
    with pytest.raises(ValueError, match="0 .silent. to 100"):
        Announcer(voice, volume=150)


def _wav_seconds_and_peak(path: Path) -> tuple[float, int]:
    with wave.open(str(path)) as w:
        frames = w.readframes(w.getnframes())
        seconds = w.getnframes() / w.getframerate()
        width = w.getsampwidth()
    samples = [int.from_bytes(frames[i:i + width], "little", signed=True)
               for i in range(0, len(frames), width)]
    return seconds, max(abs(s) for s in samples)


@pytest.mark.parametrize(("lang", "text"), [
    ("en", "It is East's turn."),
    ("pt-BR", "É a vez do Leste."),
    ("ms", "Giliran Timur."),
])
def test_espeak_renders_each_language_to_real_sound(tmp_path: Path, lang: str, text: str) -> None:
    need(shutil.which("espeak-ng") is not None, "espeak-ng is not installed (apt-get install espeak-ng)")
    short = EspeakVoice().render(text, lang, tmp_path / "short.wav")
    long = EspeakVoice().render(" ".join([text] * 4), lang, tmp_path / "long.wav")
    s_short, peak = _wav_seconds_and_peak(short)
    s_long, _ = _wav_seconds_and_peak(long)
    assert peak > 1000, "the file is silent"
    # about as long as its sentence: ~0.2-0.6 s a word at 160 words a minute
    words = len(text.split())
    assert 0.15 * words < s_short < 1.2 * words + 0.5
    assert 3 * s_short < s_long < 5 * s_short
    assert VOICES[lang]
