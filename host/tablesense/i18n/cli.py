"""The language of a command's messages: one ``--lang`` option for every command.

Every ``tablesense`` command that prints something a person reads takes
``--lang en|pt-BR|ms`` (default: the locale, ``LANG``); so does ``tablesense``
itself (``tablesense --lang ms tournament pair``), for every command below it.
The option is defined once here as
:data:`LANG_OPTION` so the option reads, resolves and fails the same way
everywhere: an unknown tag stops the command before it does anything, with
``error: no translation for 'de': choose one of en, pt-BR, ms`` and exit
status 2 (a usage error, as docs/troubleshooting.md names it).

The chosen language is *active* for the rest of that command: the room's
helpers print with :data:`_` (``_("{n} tag(s) imported", n=3)``) without a
translator handed down through every call, the way gettext itself keeps one
current language per program. A command runs once per process, so one
language per process is what a user means; tests that invoke several
commands in one process get the language put back when each command ends
(Click closes its context). Logs meant for developers never go through here:
they stay English.
"""

from __future__ import annotations

from typing import Any

import click
import typer
from typer.core import TyperArgument, TyperCommand, TyperOption

from tablesense.i18n import Translator, UnknownLanguageError, resolve

_active = "en"
#: Where an explicit ``--lang`` is remembered for the commands below it
#: (Click shares ``meta`` along a command line's contexts).
_META = "tablesense.lang"


def active() -> str:
    """The language of the running command's messages (``en`` outside a command)."""
    return _active


def activate(lang: str) -> str:
    """Make ``lang`` the language of what the command prints; returns the tag
    as normalized (``pt_BR.UTF-8`` -> ``pt-BR``). Raises for a language we lack."""
    global _active
    _active = resolve(lang)
    return _active


def _on_lang(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    """Resolve ``--lang`` (else the locale), make it active for this command,
    and put the previous language back when the command ends."""
    del param
    previous = _active
    chosen = ctx.meta.get(_META)
    if value is None and chosen is not None:  # `tablesense --lang ms COMMAND`: the root's choice holds
        return str(chosen)
    try:
        lang = resolve(value)
    except UnknownLanguageError as exc:
        from rich.console import Console
        from rich.markup import escape

        Console(stderr=True, highlight=False).print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from None
    activate(lang)
    if value is not None:
        ctx.meta[_META] = lang
    ctx.call_on_close(lambda: activate(previous))
    return lang


#: ``--lang`` of every command: the language of its messages (and, for
#: ``play`` and ``demo``, of the table). The parameter receives the resolved
#: tag (``pt-BR``), never None.
LANG_OPTION: Any = typer.Option(
    None,
    "--lang",
    metavar="LANG",
    callback=_on_lang,
    help="Language of the messages (and of the table for play/demo): en, pt-BR or ms "
    "(default: the locale, LANG).",
)


class _ActiveTranslator:
    """``_`` for command-line modules: a :class:`Translator` of whichever
    language the running command chose (looked up at each call, so a helper
    imported once follows every command)."""

    def __call__(self, message: object, /, **params: Any) -> str:
        return Translator(_active)(message, **params)

    def context(self, context: str, message: str) -> str:
        return Translator(_active).context(context, message)

    def plural(self, singular: str, plural: str, n: int, **params: Any) -> str:
        return Translator(_active).plural(singular, plural, n, **params)

    @property
    def lang(self) -> str:
        return _active


#: Translate into the running command's language: ``_("no boards found")``,
#: ``_(N_("{n} missing"), n=2)``, ``_.plural("{n} tag", "{n} tags", n)``.
_ = _ActiveTranslator()

__all__ = ["LANG_OPTION", "_", "activate", "active"]


class PlainHelpCommand(TyperCommand):
    """A command as a person reads its ``--help`` at 80 columns: Click's plain
    help (an option and its value's name, then its sentence, wrapped once),
    never Rich's six-column table that wraps a sentence every three words and
    puts ``<bool>`` after every flag. ``@app.command(cls=PlainHelpCommand)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["rich_markup_mode"] = None  # the plain help: see the class's docstring
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, TyperOption) and not param.is_flag and param.metavar is None and param.name:
                param.metavar = param.name.upper()  # --web-port WEB_PORT, never --web-port <int>
            if isinstance(param, TyperArgument):  # [CODE], never [CODE] <str>
                param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]
