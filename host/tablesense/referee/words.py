"""The referee's words in the table's language.

The referee builds every text a player reads as a
:class:`~tablesense.games.common.Sentence` (English that remembers its
template and parameters) and translates it only when it is published
(:func:`localize`, called on every event of the referee's ``emit``), so the
rules and the tests keep reading English while the display, the console and
the voice read the table's language (``MatchSpec.lang``).

Three things happen to a Sentence on its way out, in this order:

- seats and teams: an engine numbers seats from 0 (``"seat {seat}"``,
  ``seat=2``); :func:`engine_sentence` rewrites the template to name the seat
  (``"{seat}"``, ``seat=South``); the rewritten templates are marked below so
  the catalogs hold them;
- redaction (:func:`redact_sentence`): a piece a seat hides becomes "the tile"
  / "the card" in the parameters, so the translation says it too;
- translation (:func:`localize`), parameters that are Sentences included.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from tablesense.games.common import Sentence, say
from tablesense.games.common import engine_sentence as engine_sentence
from tablesense.games.game import Game
from tablesense.i18n import N_, translate
from tablesense.referee.public import redact

#: Seat names of a four-seat table as players say them; the catalogs hold
#: them (pt-BR Norte/Leste/Sul/Oeste, ms Utara/Timur/Selatan/Barat).
SEAT_WORDS = frozenset({N_("North"), N_("East"), N_("South"), N_("West")})
_SEAT_N = re.compile(r"^Seat (\d+)$")

#: The engine templates with seats and teams named, as :func:`engine_sentence`
#: rewrites them (tests/i18n checks this list covers every engine template).
ENGINE_NAMED = (
    N_("it is {to_play}'s turn, not {seat}'s"),
    N_("{seat} does not hold {give}: a seat lays a card from its own hand"),
    N_("{seat} does not hold {tile}, so it cannot announce it"),
    N_("{seat} does not hold {t}"),
    N_("{seat} has already announced {announced_m}"),
    N_("{seat} holds {t}, which fits {fits_text}: it may not {verb_m}"),
    N_("{seat} may announce a double only before the opening play"),
    N_("{seat} may not call contre on itself"),
    N_("{seat} may not take back {give}, the card it just laid down"),
    N_("{seat} may only call double right after its partner's kems ({partner_of})"),
    N_("{seat} must open the hand: it may not {verb_m}"),
    N_("{seat} was dealt a locomotiva"),
    N_("{seat} was dealt seven doubles"),
    N_("{seat} was dealt {count} {rank}"),
    N_("{seat} went out"),
    N_("{seat} went out, so it opens"),
    N_("{t} is {seat}'s partner: a contre names an opponent"),
    N_("{team} wins"),
    N_("the boneyard is empty: {seat} passes"),
    N_("the match is over: {winner} reached {target}"),
    N_("the match was already over ({winner} won): no hand may follow"),
    N_("the opening passes to {seat} in rotation"),
    N_("{variant} has no boneyard: {seat} passes"),
    N_("{who} opens this hand ({reason}), not {seat}"),
    N_("{seat} must draw from the boneyard ({left_in_bone} tiles left) before passing"),
    N_("{take} is not on the board ({board}); it comes from partner {partner}'s hand (no direct swap between partners)"),
    N_("the match was over after round {i} ({winner} reached {target} points): no round may follow"),
    N_(
        "{t} on the {end} would block the game while {seat} can play {tile} on the {end2}: "
        "with a choice the game must stay open"
    ),
)


def seat_word(name: str) -> str:
    """A seat's name as the table says it: the compass words and "Seat N"
    translated, a player's own name as typed."""
    if isinstance(name, Sentence):
        return name
    if name in SEAT_WORDS:
        return say(name)
    m = _SEAT_N.match(name)
    if m:
        return say("Seat {n}", n=int(m.group(1)))
    return name


def in_a_row(items: Sequence[str]) -> str:
    """``a, b, c``: names or phrases one after another, each still translated
    on its own (a plain ``", ".join`` of Sentences would be English only)."""
    if not items:
        return ""
    out = items[0]
    for item in items[1:]:
        out = say("{first}, {then}", first=out, then=item)
    return out


def redact_sentence(text: str, public: Collection[str] | None, game: Game) -> str:
    """:func:`~tablesense.referee.public.redact` for a Sentence: hidden pieces
    in its parameters become "the tile" / "the card" (translated later)."""
    if not isinstance(text, Sentence):
        return game.pretty(redact(text, public, game))
    params: dict[str, Any] = {}
    for key, value in text.params.items():
        if isinstance(value, Sentence):
            params[key] = redact_sentence(value, public, game)
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            params[key] = value
            continue
        plain = str(value)
        hidden = redact(plain, public, game)
        if hidden != plain and hidden.strip() == str(game.the_piece):
            params[key] = game.the_piece
        else:
            params[key] = game.pretty(hidden)
    return Sentence(text.template, params)


def pretty_sentence(text: str, game: Game) -> str:
    """Pieces written as people write them (cards ``10♥``), in a Sentence's parameters too."""
    if not isinstance(text, Sentence):
        return game.pretty(text)
    params = {
        k: pretty_sentence(v, game) if isinstance(v, str) else v for k, v in text.params.items()
    }
    return Sentence(text.template, params)


def localize(value: Any, lang: str) -> Any:
    """``value`` (an event's data) with every Sentence in it translated into
    ``lang``; English stays as it is (the Sentences already read English)."""
    if lang == "en":
        return value
    if isinstance(value, Sentence):
        return translate(value, lang)
    if isinstance(value, Mapping):
        return {k: localize(v, lang) for k, v in value.items()}
    if isinstance(value, list):
        return [localize(v, lang) for v in value]
    if isinstance(value, tuple):
        return tuple(localize(v, lang) for v in value)
    return value
