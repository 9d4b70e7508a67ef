"""Commands of the outputs+web room.

``tablesense display preview`` serves the display page and plays sample games
with the engines (no boards, no referee), so a kiosk screen or a phone can be
set up and checked on its own. (The seat GPIO wiring check is the diagnostics
room's: ``tablesense diag``.)
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import typer

from tablesense.games.registry import names as game_names

if TYPE_CHECKING:
    from tablesense.outputs.events import EventBus


#: The games a preview can play (the registry's), for the option's help.
GAME_NAMES = game_names()


def register(app: typer.Typer) -> None:
    """Add the ``display`` commands to the root ``tablesense`` app."""
    display = typer.Typer(
        help="The display page without a match (kiosk and phone set-up).", no_args_is_help=True
    )

    @display.command("preview")
    def preview(
        game: str = typer.Option("dominoes", help=" or ".join(GAME_NAMES) + "."),
        host: str = typer.Option("127.0.0.1", help="Address to serve on (0.0.0.0 for phones)."),
        port: int = typer.Option(8080, help="TCP port (0 = any free port)."),
        pace: float = typer.Option(1.0, help="Seconds between two moves."),
        seed: int = typer.Option(1, help="Seed of the sample games."),
        moves: int = typer.Option(0, help="Stop after this many moves (0 = until Ctrl-C)."),
        lang: str | None = typer.Option(
            None, "--lang", help="The page's language: en, pt-BR or ms (default: LANG)."
        ),
    ) -> None:
        """Serve the display page and play sample games on it (no table needed)."""
        from rich.console import Console

        from tablesense.outputs.events import EventBus
        from tablesense.web.server import WebServerError, serve_display

        console = Console(stderr=True)
        from tablesense.games.registry import GAMES

        if game not in GAMES:
            console.print(f"[red]unknown game {game!r}: use {' or '.join(GAMES)}[/red]")
            raise typer.Exit(2)
        from tablesense.i18n import UnknownLanguageError, resolve

        try:
            page_lang = resolve(lang)
        except UnknownLanguageError as exc:
            console.print(f"[red]{exc}[/red]")
            raise typer.Exit(2) from None
        bus = EventBus()
        try:
            server = serve_display(
                bus, host, port, title=f"tablesense preview ({game})", lang=page_lang
            )
        except WebServerError as exc:
            console.print(f"[red]{exc}[/red]")
            raise typer.Exit(1) from None
        typer.echo(server.url)
        stop = threading.Event()
        try:
            _play_samples(bus, game, seed, pace, moves, stop, page_lang)
        except KeyboardInterrupt:
            pass
        finally:
            server.stop()
            bus.close()

    app.add_typer(display, name="display")


def _play_samples(
    bus: EventBus, game: str, seed: int, pace: float, limit: int, stop: threading.Event, lang: str = "en"
) -> None:
    """Publish views of engine-played games until ``limit`` moves (0 = forever)."""
    import random

    from tablesense.games.registry import find_game
    from tablesense.web.preview import dominoes_view, kems_view

    rng = random.Random(seed)
    played = 0
    from tablesense.i18n import translate

    facts = find_game(game).page_facts()
    facts["title"] = translate(facts["title"], lang)  # in the page's language, as a referee's view has it

    def wait() -> bool:
        return stop.wait(pace)

    while not stop.is_set():
        if find_game(game).play_area == "line":  # the preview's sample dominoes, else its Kems
            from tablesense.games.dominoes import DominoMatch, move_to_json

            match = DominoMatch("pairs-pips")
            hand_no = 0
            while not match.is_over:
                hand_no += 1
                hand = match.new_hand(rng=rng)
                bus.publish("view", **dominoes_view(match, hand, facts=facts, hand_no=hand_no))
                while not hand.is_over:
                    move = rng.choice(hand.legal_moves())
                    hand.play(move)
                    played += 1
                    view = dominoes_view(match, hand, facts=facts, hand_no=hand_no, last_move=move_to_json(move))
                    bus.publish("view", **view)
                    if (limit and played >= limit) or wait():
                        return
                result = match.finish_hand()
                res = {"hand_no": hand_no, **result.to_json()}
                bus.publish("view", **dominoes_view(match, hand, facts=facts, hand_no=hand_no, result=res))
                if wait():
                    return
        else:
            from tablesense.games.kems import KemsMatch, event_to_json

            match = KemsMatch()
            rnd = match.new_hand(rng=rng)
            while rnd.is_misdeal:
                match.finish_hand()
                rnd = match.new_hand(rng=rng)
            for _ in range(40):
                seat = rng.randrange(rnd.seats)
                swap = rng.choice(rnd.legal_swaps(seat))
                rnd.play(swap)
                played += 1
                last = event_to_json(swap)
                bus.publish("view", **kems_view(match, rnd, facts=facts, hand_no=1, last_move=last))
                if (limit and played >= limit) or wait():
                    return
