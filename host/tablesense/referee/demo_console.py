"""``tablesense demo`` on the console: :class:`DemoConsole` runs
:func:`~tablesense.referee.demo.run_demo` for a checked
:class:`~tablesense.referee.demo.DemoConfig` and says what a person needs:
the display page's address and how to sit down (or, with ``--sit``, the
table-top page's keyed lines on stdout, which a script reads), then how many
hands were played; ``--no-web --hands N`` prints the game record as JSON
instead. What stops the demo is a :class:`~tablesense.referee.options.CommandRefused`
with exit 1.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

from tablesense.games.common import message_of
from tablesense.games.registry import find_game, names
from tablesense.i18n import N_, Translator
from tablesense.referee.demo import DemoConfig, DemoResult, port_busy, run_demo
from tablesense.referee.options import CommandRefused, invocation

__all__ = ["DemoConsole", "demo_failure"]


def demo_failure(exc: BaseException) -> object:
    """What stopped the demo: a sentence a person reads as it was raised (a
    bad --seats, --player or --variant, a journal that cannot be used);
    anything else with its type, as a developer needs it."""
    message = message_of(exc)
    return message if hasattr(message, "template") else f"{type(exc).__name__}: {exc}"


class DemoConsole:
    """The demo as the command runs it; see the module docstring."""

    def __init__(self, cfg: DemoConfig, console: Any) -> None:
        self.cfg = cfg
        self.console = console
        self.game = find_game(cfg.game)
        self._ = Translator(cfg.lang)
        self.quiet = not cfg.web and cfg.hands is not None
        """No page and a number of hands: only the record, as JSON on stdout."""

    def run(self, stop: threading.Event) -> DemoResult:
        """Play the demo until it ends or ``stop`` is set; print its outcome."""
        cfg = self.cfg
        if not self.quiet:
            self.console.print(self._(N_("demo: {game} {variant}, seed {seed}"), game=cfg.game,
                                      variant=cfg.variant or self.game.default_variant, seed=cfg.seed))
        try:
            result = run_demo(cfg, on_ready=self.ready, stop=stop, log=None if self.quiet else self.console,
                              on_tabletop=self.tabletop)
        except Exception as exc:  # noqa: BLE001 - a clear message, never a traceback
            raise CommandRefused(port_busy(exc, "--port", cfg.host) or demo_failure(exc), 1) from None
        if cfg.announcer is not None:
            cfg.announcer.drain(timeout=60.0)
            cfg.announcer.close()
        self.outcome(result)
        return result

    def ready(self, url: str | None) -> None:
        """The page is served and the match has started: its address, and how
        to sit down (or, seated, how to ask the coach)."""
        _ = self._
        if url:
            self.console.print(_(N_("display page: {url}  (Ctrl-C stops the demo)"), url=f"[bold]{url}[/]"))
            if not self.cfg.sit:
                game = self.cfg.game
                command = f"{invocation()} demo --sit 1" + ("" if game == names()[0] else f" --game {game}")
                self.console.print(
                    _(
                        N_("to play yourself: {command} (you take the first seat on a table-top page; the computer plays the others)"),
                        command=f"[bold]{command}[/]",
                    )
                )
            elif self.cfg.coach is not False:
                self.console.print(
                    self.game.per_deal(
                        hand=_(N_("the coach is on: on your turn press Suggest a move on your page, or hold "
                                  "your Pass button a second (only you see the answer); --no-coach turns it off")),
                        round=_(N_("the coach is on: press Suggest a move on your page, or hold your Kems! button "
                                   "a full second (a short press calls Kems; only you see the answer); "
                                   "--no-coach turns it off")),
                    )
                )
        elif self.cfg.web:
            self.console.print(f"[yellow]{_(N_('the display page is not available (web room missing)'))}[/]")

    def tabletop(self, sitting: Any) -> None:
        """The table-top page's lines on stdout, one each, flushed: a script
        (or a test) reads them (each carries its seat's key: the page refuses
        a seat without it)."""
        for line in sitting.lines():
            sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def outcome(self, result: DemoResult) -> None:
        """The record as JSON (quiet), or how many hands were played and
        whether the match is over."""
        if self.quiet:
            sys.stdout.write(json.dumps(result.record, separators=(",", ":")) + "\n")
            return
        _ = self._
        n = result.hands_played
        if result.match_over:
            line = self.game.per_deal(
                hand=_.plural("played {n} hand; the match is over", "played {n} hands; the match is over", n),
                round=_.plural("played {n} round; the match is over", "played {n} rounds; the match is over", n),
            )
        else:
            line = self.game.per_deal(
                hand=_.plural("played {n} hand; the match goes on", "played {n} hands; the match goes on", n),
                round=_.plural("played {n} round; the match goes on", "played {n} rounds; the match goes on", n),
            )
        self.console.print(line)
