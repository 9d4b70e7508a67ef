"""What ``play`` and ``demo`` share of their options, outside the command
module so that a test builds a table session without a command line.

A refusal is a :class:`CommandRefused`: the sentence a person reads and the
command's documented exit code (2 a bad option, 1 a table that cannot start,
3 a missing service); the command module prints it as ``error: ...`` and
exits with that code. The table's language and voice, the journal's default
place and the command line a message repeats (with one option changed) live
here too.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from tablesense.games.common import say
from tablesense.i18n.cli import _


class CommandRefused(Exception):
    """``play`` or ``demo`` cannot go on: ``message`` (a Sentence, translated
    where it is printed, or a plain string) and the exit ``code``."""

    def __init__(self, message: object, code: int = 2) -> None:
        super().__init__(str(message))
        self.message = message
        self.code = code


def default_journal() -> Path:
    """``$TABLESENSE_JOURNAL``, else ``journal.sqlite`` in the user's data folder."""
    env = os.environ.get("TABLESENSE_JOURNAL")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "tablesense" / "journal.sqlite"


def default_journal_is(path: Any) -> bool:
    try:
        return Path(path).resolve() == default_journal().resolve()
    except OSError:
        return False


def invocation() -> str:
    """How to run ``tablesense`` from here: its name when it is on the PATH,
    else the path it was started by (``.venv/bin/tablesense`` after
    ``bash scripts/demo.sh``), so a printed command can be typed as it is."""
    exe = sys.argv[0] if sys.argv and sys.argv[0] else "tablesense"
    if os.path.basename(exe) != "tablesense":
        return "tablesense"
    found = shutil.which("tablesense")
    if found and os.path.realpath(found) == os.path.realpath(exe):
        return "tablesense"
    rel = os.path.relpath(exe)
    return rel if not rel.startswith("..") else exe


def again_with(option: str, value: str) -> str:
    """This command line again with ``option`` set to ``value`` (a command a
    person can paste)."""
    args = list(sys.argv[1:])
    for i, arg in enumerate(args):
        if arg == option and i + 1 < len(args):
            args[i + 1] = value
            break
        if arg.startswith(option + "="):
            args[i] = f"{option}={value}"
            break
    else:
        args += [option, value]
    return " ".join([invocation(), *(shlex.quote(a) for a in args)])


def table_lang(option: str | None) -> str:
    """``--lang``, else the locale (LANG...), else English; refused (exit 2)
    for a language without a catalog."""
    from tablesense.i18n import UnknownLanguageError, resolve

    try:
        return resolve(option)
    except UnknownLanguageError as exc:
        raise CommandRefused(str(exc)) from None  # before any language is known: English


def announcer(lang: str, speech: bool, volume: int, quiet_hours: str | None) -> Any:
    """The table's voice for ``--speech`` (None without it). No espeak-ng:
    refused with exit 3 and how to install it; bad ``--quiet-hours``: exit 2."""
    from tablesense.outputs.speech import Announcer, EspeakVoice, QuietHours, SpeechUnavailableError

    # the outputs room words these in English (it imports no Sentence):
    # the command says them in its language
    try:
        quiet = QuietHours.parse(quiet_hours) if quiet_hours else None
    except ValueError:
        raise CommandRefused(say("quiet hours {text!r}: write them as HH:MM-HH:MM, for example 22:00-08:00",
                                 text=quiet_hours)) from None
    if not speech:
        return None
    try:
        voice = EspeakVoice()
    except SpeechUnavailableError:
        raise CommandRefused(
            say("espeak-ng is not installed: sudo apt-get install espeak-ng (or run without --speech)"), 3
        ) from None
    say_it_speaks(lang, volume, quiet_hours)
    return Announcer(voice, lang=lang, volume=volume, quiet=quiet)


def say_it_speaks(lang: str, volume: int, quiet_hours: str | None) -> None:
    """A sign that ``--speech`` is on, before the first word is said (a table
    whose speaker is off or muted would otherwise give none)."""
    from rich.console import Console
    from rich.markup import escape

    line = (
        say("the table speaks aloud in {lang} at volume {volume} (espeak-ng), except {hours}",
            lang=lang, volume=volume, hours=quiet_hours)
        if quiet_hours
        else say("the table speaks aloud in {lang} at volume {volume} (espeak-ng)", lang=lang, volume=volume)
    )
    Console(stderr=True, highlight=False).print(escape(_(line)))
