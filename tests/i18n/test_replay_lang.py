"""`tablesense rules replay --lang`: the record's verdict in the reader's language.

The JSON keys stay as the record format defines them; the ``error`` text and
the summary are translated; a pseudo-locale run over every example record
shows that no checker message escapes the catalogs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablesense.cli import app

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def _replay(name: str, *args: str) -> tuple[int, dict, str]:
    result = CliRunner().invoke(app, ["rules", "replay", str(EXAMPLES / name), *args])
    out = json.loads(result.stdout.splitlines()[0])
    return result.exit_code, out, result.stderr


@pytest.mark.parametrize(("lang", "words", "summary"), [
    ("pt-BR", ("o lugar 0 tem 2-4", "na ponta esquerda", "não pode passar"), "mão 1, jogada 5: Lugar 1 tem 2-4"),
    ("ms", ("tempat 0 memegang 2-4", "hujung kiri", "tidak boleh lalu"), "pusingan 1, langkah 5: Tempat 1 memegang 2-4"),
    ("en", ("seat 0 holds 2-4", "the left end", "it may not pass"), "hand 1, move 5: Seat 1 holds 2-4"),
])
def test_an_illegal_dominoes_record_is_explained_in_the_chosen_language(lang, words, summary) -> None:
    code, out, err = _replay("pairs-pips-illegal.json", "--lang", lang)
    assert code == 1
    assert set(out) == {"ok", "hand", "move", "error"}   # the spec's keys, untranslated
    for w in words:
        assert w in out["error"]    # the record's own numbers, as the format's examples
    # the summary a person reads counts hands, moves and seats from 1
    assert summary in " ".join(err.split())


@pytest.mark.parametrize(("lang", "summary"), [
    ("pt-BR", "vem da mão do parceiro, Lugar 4 (parceiros"),
    ("ms", "ia dari tangan rakan sepasukan, Tempat 4 (tiada"),
])
def test_a_kems_partner_is_counted_from_one_in_the_summary(lang, summary) -> None:
    code, out, err = _replay("kems-illegal.json", "--lang", lang)
    assert code == 1
    assert summary in " ".join(err.split())


def test_a_kems_rejection_in_malay_uses_the_rule_texts_words() -> None:
    code, out, _ = _replay("kems-illegal.json", "--lang", "ms")
    assert code == 1 and "tiada di papan" in out["error"] and "rakan sepasukan" in out["error"]


def test_the_locale_chooses_when_no_option_is_given(monkeypatch) -> None:
    monkeypatch.setenv("LANG", "pt_BR.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LANGUAGE", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    _, out, _ = _replay("pairs-pips-illegal.json")
    assert "não pode passar" in out["error"]


def test_a_language_without_a_catalog_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["rules", "replay", str(EXAMPLES / "kems-match.json"),
                                      "--lang", "de"])
    assert result.exit_code == 2
    assert "choose one of en, pt-BR, ms" in result.stderr


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.json")))
def test_pseudo_locale_every_message_of_every_example_comes_from_the_catalog(name: str) -> None:
    code, out, err = _replay(name, "--lang", "qps")
    if code == 0:
        assert "⟦" in err
        return
    text = out["error"]
    assert text.startswith("⟦") and text.endswith("⟧"), f"untranslated: {text!r}"
