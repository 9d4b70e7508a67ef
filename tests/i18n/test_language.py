"""Choosing the language, and translating sentences built from parts."""

from __future__ import annotations

import pytest

from tablesense.games.common import say
from tablesense.i18n import (
    PSEUDO,
    Translator,
    UnknownLanguageError,
    normalize,
    resolve,
    translate,
)


def test_option_beats_the_locale() -> None:
    assert resolve("ms", {"LANG": "pt_BR.UTF-8"}) == "ms"
    assert resolve(None, {"LANG": "pt_BR.UTF-8"}) == "pt-BR"
    assert resolve(None, {"LC_ALL": "ms_MY.UTF-8", "LANG": "pt_BR.UTF-8"}) == "ms"
    assert resolve(None, {}) == "en"


def test_a_locale_we_lack_falls_back_to_english_but_an_option_is_refused() -> None:
    assert resolve(None, {"LANG": "de_DE.UTF-8"}) == "en"
    with pytest.raises(UnknownLanguageError, match="choose one of en, pt-BR, ms"):
        resolve("de")


@pytest.mark.parametrize("tag", ["pt-BR", "pt_BR", "pt-br", "pt", "pt_BR.UTF-8"])
def test_spellings_of_brazilian_portuguese(tag: str) -> None:
    assert normalize(tag) == "pt-BR"


def test_a_sentence_is_its_english_text() -> None:
    s = say("put {piece} back on {rack}", piece="5-6", rack="South's rack")
    assert s == "put 5-6 back on South's rack"
    assert translate(s, "en") == "put 5-6 back on South's rack"


def test_pseudo_translation_reaches_nested_sentences_and_keeps_values() -> None:
    inner = say("{seat}'s rack", seat="South")
    outer = say("put {piece} back on {rack}", piece="5-6", rack=inner)
    text = translate(outer, PSEUDO)
    assert text.startswith("⟦") and text.count("⟦") == 2
    assert "5-6" in text and "South" in text


def test_an_unmarked_string_passes_through() -> None:
    assert Translator("ms")("no such message here") == "no such message here"


def test_a_decimal_reads_as_the_language_writes_it() -> None:
    # the coach's review: "1.5" would read as fifteen hundred in Portuguese
    s = say("seat {seat} chose to {played}; to {better} was worth about {loss} points more",
            seat="South", played="play 5-6", better="play 2-2", loss=1.5)
    assert str(s).endswith("about 1.5 points more")
    assert "1,5 pontos" in translate(s, "pt-BR")
    assert "1.5 mata" in translate(s, "ms")
    assert translate(say("{n} of {m}", n=3, m=2.0), "pt-BR") == "3 of 2"  # whole numbers stay whole
