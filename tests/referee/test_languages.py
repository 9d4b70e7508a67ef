"""The table speaks its language (issue 18): the demo's banners, rejections,
moves and results come out translated, and the voice says them."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tablesense.games.common import say
from tablesense.games.registry import find_game
from tablesense.i18n import translate
from tablesense.outputs.events import EventBus
from tablesense.outputs.speech import Announcer, RecordingVoice
from tablesense.referee.demo import DemoConfig, run_demo
from tablesense.referee.words import engine_sentence, redact_sentence


def _texts(lang: str, announcer: Any = None, game: str = "dominoes") -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = []

    def on_bus(bus: EventBus) -> None:
        bus.add_listener(lambda ev: events.append((ev.kind, ev.data)))

    cfg = DemoConfig(game=game, hands=1, seed=3, web=False, link="direct", timeout=60, lang=lang,
                     announcer=announcer)
    run_demo(cfg, on_bus=on_bus)
    return events


def _said(events: list[tuple[str, dict[str, Any]]]) -> list[str]:
    out: list[str] = []
    for kind, data in events:
        for key in ("text", "instruction"):
            if isinstance(data.get(key), str):
                out.append(data[key])
        if kind == "view":
            out += [str(s["name"]) for s in data.get("seats", [])]
    return out


@pytest.mark.parametrize("game", ["dominoes", "kems"])
def test_pseudo_locale_demo_leaves_no_text_untranslated(game: str) -> None:
    """Every text the demo publishes went through the catalogs: in the
    pseudo-locale each is bracketed (⟦…⟧) from its first character."""
    said = _said(_texts("qps", game=game))
    assert said
    bare = [t for t in said if not t.startswith("⟦")]
    assert not bare, bare[:5]


@pytest.mark.parametrize(
    ("lang", "words"),
    [("pt-BR", ("Norte", "Leste", "Sul", "Oeste", "joga", "rodada")),
     ("ms", ("Utara", "Timur", "Selatan", "Barat", "bermain", "pusingan"))],
)
def test_demo_speaks_the_table_language_on_screen_and_aloud(lang: str, words: tuple[str, ...]) -> None:
    voice = RecordingVoice()
    announcer = Announcer(voice, lang=lang, volume=50)
    said = " ".join(_said(_texts(lang, announcer)))
    assert announcer.drain(timeout=10)
    announcer.close()
    for word in words:
        assert word in said, (word, said[:300])
    assert not re.search(r"\b(plays|turn|hand \d)\b", said), said[:300]
    spoken = " ".join(t for t, _, _ in voice.spoken)
    assert voice.spoken and all(lg == lang for _, lg, _ in voice.spoken)
    assert words[-1] in spoken  # the hand's result was said aloud


@pytest.mark.parametrize(
    ("lang", "expected"),
    [("en", "it is East's turn, not South's: put the tile back on South's rack"),
     ("pt-BR", "é a vez de Leste, não de Sul: ponha a pedra de volta em suporte de Sul"),
     ("ms", "giliran Timur, bukan Selatan: letak batu itu semula di rak Selatan")],
)
def test_a_rejection_replayed_in_each_language(lang: str, expected: str) -> None:
    """The out-of-turn rejection, its hidden tile unnamed, in each language."""
    back = say("put {piece} back on {where}", piece="5-6", where=say("{seat}'s rack", seat=say("South")))
    text = say("it is {turn}'s turn, not {seat}'s: {back}", turn=say("East"), seat=say("South"), back=back)
    public = redact_sentence(text, set(), find_game("dominoes"))
    assert translate(public, lang) == expected


def test_engine_seats_are_named_not_numbered() -> None:
    names = [say("North"), say("East"), say("South"), say("West")]
    msg = say("it is seat {to_play}'s turn, not seat {seat}'s", to_play=1, seat=0)
    named = engine_sentence(msg, names.__getitem__, lambda t: say("team {n}", n=t + 1))
    assert named == "it is East's turn, not North's"
    assert translate(named, "pt-BR") == "é a vez de Leste, não de Norte"
    assert translate(named, "ms") == "giliran Timur, bukan Utara"


class _Held:
    """A voice that holds every sentence until released (a slow speaker)."""

    def __init__(self) -> None:
        import threading

        self.spoken: list[str] = []
        self.gate = threading.Event()
        self.speaking = threading.Event()

    def speak(self, text: str, lang: str, volume: int) -> None:
        self.speaking.set()
        self.gate.wait(5)
        self.spoken.append(text)


def test_voice_says_whose_turn_after_a_pause_and_drops_a_corrected_instruction() -> None:
    from tablesense.referee.speaking import TableVoice

    bus = EventBus()
    voice = _Held()
    announcer = Announcer(voice, lang="pt-BR", volume=50)
    TableVoice(bus, announcer, turn_pause=0.05)
    bus.publish("message", text="primeiro", level="info")  # being spoken (held)
    assert voice.speaking.wait(5)
    bus.publish("message", text="ponha a pedra de volta", level="error")  # queued
    bus.publish("correction_cleared", reason="the table matches again")  # corrected: dropped
    voice.gate.set()
    assert announcer.drain(timeout=5)
    seats = [{"index": 0, "name": "Sul"}, {"index": 1, "name": "Leste"}]
    bus.publish("view", hand_no=1, moves=3, to_play=1, seats=seats, correction=None)
    import time

    time.sleep(0.3)
    assert announcer.drain(timeout=5)
    announcer.close()
    assert voice.spoken == ["primeiro", "Leste, sua vez"]


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", "it is {turn}'s turn, not {seat}'s: put {tile} back on {seat}'s rack"),
        ("pt-BR", "é a vez de {turn}, não de {seat}: ponha {tile} de volta em suporte de {seat}"),
        ("ms", "giliran {turn}, bukan {seat}: letak {tile} semula di rak {seat}"),
    ],
)
def test_a_referee_rejection_replayed_in_each_language(lang: str, expected: str) -> None:
    """The same out-of-turn play on a real referee, in each language (the
    tile lies face up on the line, so everyone may read its name)."""
    from tablekit import Hands, kinds, make_referee, perform

    ref, events, _ = make_referee("dominoes", "pairs-pips", "dominoes-4", 1, lang=lang)
    h = Hands(ref)
    h.settle()
    perform(h, ref.hand.legal_moves()[-1])
    other = (ref.hand.to_play + 2) % 4
    tile = str(ref.hand.hands[other][0])
    h.lift(tile)
    rules: Any = ref.rules
    h.drop(tile, rules.line.left[0])
    h.settle()
    rej = kinds(events, "move_rejected")[-1]
    assert rej["reason"] == "out_of_turn"
    english = ["South", "East", "North", "West"]
    names = {
        "en": english,
        "pt-BR": ["Sul", "Leste", "Norte", "Oeste"],
        "ms": ["Selatan", "Timur", "Utara", "Barat"],
    }[lang]
    name = {s.index: names[english.index(s.name)] for s in ref.geometry.seats}
    want = expected.format(turn=name[ref.hand.to_play], seat=name[other], tile=tile)
    assert rej["instruction"] == want
    banner = [d["text"] for k, d in events if k == "message"][-1]
    assert banner == want
