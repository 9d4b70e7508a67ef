"""``tablesense demo``: a whole match on the virtual table, played by computer
seats whose virtual hands move the virtual tags.

The pieces of the demo are the product's own: the virtual table (real
firmware on emulated readers behind pseudo-terminals), the link, the
referee, the journal and the display page. Only the players are computers:
the :class:`Session` publishes each computer seat's ``suggestion`` and the
:class:`VirtualHands` carry it out on the table, the way a person at a real
table follows the lights (lift the tile, lay it on the lit cell; press the
seat button to pass or call). In Kems every seat that wants a swap lifts its
card at the same time; the swaps then land one after the other.

With ``--no-web --hands N --seed S`` the match's game record is printed as
JSON: the hands wait for each move to be accepted before the next, and every
decision comes from the seed, so the same seed gives the same record with or
without link faults.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tablesense.games.common import message_of, say
from tablesense.games.registry import find_game
from tablesense.outputs.events import EventBus, TableEvent
from tablesense.referee.hands import VirtualHands
from tablesense.table.tags import TagRegistry


@dataclass
class DemoConfig:
    game: str = "dominoes"
    variant: str | None = None
    hands: int | None = None
    seed: int = 1
    speed: float = 1.0
    web: bool = True
    port: int = 0
    host: str = "127.0.0.1"
    link_faults: float = 0.0
    link: str = "virtual"
    seats: int | None = None
    journal: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    player: str | None = None
    """Computer player (None: greedy for dominoes, tracking for Kems)."""
    think_ms: float | None = None
    """The ``search`` player's time budget per decision (None: its default)."""
    table: str | None = None
    world_file: str | None = None
    timeout: float | None = None
    trace: bool = False
    fast: bool | None = None
    """No pacing (None: when there is no page and a number of hands)."""
    boards: str = "virtual"
    """With ``link="virtual"``: "virtual" (the firmware on CPython) or "rp2040"
    (emulated RP2040 boards running MicroPython; the firmware is deployed first)."""
    sit: tuple[int, ...] = ()
    """Seats people take on the table-top page (referee/sit.py); the computer plays the rest."""
    open_hands: bool = False
    """With ``sit``: the table-top page may show every piece (teaching mode)."""
    coach: bool | None = None
    """The coach (issue 19: a seat's suggestion on request, a review after
    each hand); None: on when people sit down (``sit``), off otherwise."""
    lang: str = "en"
    """The table's language (``--lang``): what the page, the console and the voice say."""
    announcer: Any = None
    """An :class:`~tablesense.outputs.speech.Announcer` (``--speech``), or None."""
    stay: bool = False
    """With the page: after the match, keep it up (showing the result) until
    ``stop`` is set (Ctrl-C), not only for a few seconds."""
    """Print each accepted move as a JSON line on stdout as it is accepted
    (after the journal has it): the crash test's witness."""


def demo_variant(cfg: DemoConfig) -> str:
    if cfg.variant:
        return cfg.variant
    return find_game(cfg.game).default_variant


def demo_table(cfg: DemoConfig, variant: str) -> str:
    if cfg.table:
        return cfg.table
    game = find_game(cfg.game)
    seats = cfg.seats or (game.default_seats(variant) if variant in game.variants else game.default_seats(game.default_variant))
    # the demo is played on the shipped layout of each seat count the game knows
    if not any(seats in game.seat_counts(v) for v in game.variants):
        raise ValueError(say("no demo table for {game} with {n} seats", game=cfg.game, n=seats))
    return game.layout_name(seats)


def prepare_demo(
    cfg: DemoConfig, *, lang: str | None, speech: bool = False, volume: int = 80,
    quiet_hours: str | None = None, sit: str | None = None,
) -> None:
    """Check ``demo``'s options before anything starts, in the order a person
    reads them (a :class:`~tablesense.referee.options.CommandRefused`: exit 2,
    or 3 without espeak-ng for ``--speech``), and fill in what they name: the
    table's language and voice, and the seats people take (``--sit``)."""
    from tablesense.referee.options import CommandRefused, announcer, table_lang

    try:
        the_game = find_game(cfg.game)
    except ValueError as exc:
        raise CommandRefused(message_of(exc)) from None
    if cfg.variant is not None and cfg.variant not in the_game.variants:
        raise CommandRefused(say("unknown {game} variant {variant!r}: use {variants}", game=cfg.game,
                                 variant=cfg.variant, variants=", ".join(the_game.variants)))
    cfg.lang = table_lang(lang)
    cfg.announcer = announcer(cfg.lang, speech, volume, quiet_hours)
    if cfg.link not in ("virtual", "direct"):
        raise CommandRefused(say("--link is virtual or direct"))
    if cfg.boards not in ("virtual", "rp2040"):
        raise CommandRefused(say("--boards is virtual or rp2040"))
    # the options that name things (--variant above, --seats, --player) are
    # usage errors, exit 2, before anything starts
    try:
        table = demo_table(cfg, demo_variant(cfg))
        the_game.player(cfg.player, cfg.think_ms)
    except ValueError as exc:
        raise CommandRefused(message_of(exc)) from None
    if sit is not None:
        from tablesense.i18n import Translator
        from tablesense.referee.sit import parse_seats
        from tablesense.referee.words import seat_word
        from tablesense.table.geometry import TableGeometry

        _ = Translator(cfg.lang)
        try:
            layout = TableGeometry.load(table)
            names = [seat.name for seat in layout.seats]
            cfg.sit = parse_seats(sit, names, [_(seat_word(name)) for name in names])
        except (ValueError, FileNotFoundError) as exc:
            raise CommandRefused(message_of(exc)) from None
        if not cfg.web or cfg.link != "virtual":
            raise CommandRefused(say("--sit needs the page and the virtual boards (no --no-web, no --link direct)"))
    elif cfg.open_hands:
        raise CommandRefused(say("--open-hands goes with --sit"))


@dataclass
class DemoResult:
    record: dict[str, Any]
    hands_played: int
    url: str | None
    match_over: bool
    errors: list[str]


def run_demo(
    cfg: DemoConfig,
    *,
    on_ready: Callable[[str | None], None] | None = None,
    stop: threading.Event | None = None,
    log: Any = None,
    on_world: Callable[[Any], None] | None = None,
    on_tabletop: Callable[[Any], None] | None = None,
    on_bus: Callable[[EventBus], None] | None = None,
    on_session: Callable[[Any], None] | None = None,
) -> DemoResult:
    """Play the demo match; returns the record (of the hands played).

    ``on_ready(url)`` is called once the page is served and the match has
    started; ``on_world(world)`` gets the virtual table (tests unplug boards);
    with ``cfg.sit``, ``on_tabletop(sitting)`` gets the :class:`~tablesense.referee.sit.SitDown`
    (its ``top`` and its ``url`` of the table-top page) before ``on_ready``;
    ``on_bus(bus)`` gets the event bus before anything is published (tests
    check every event); ``on_session(session)`` gets the session before the
    match starts (tests press its buttons).
    """
    from tablesense.journal.store import Journal
    from tablesense.referee.core import MatchSpec, Referee, Timing
    from tablesense.referee.session import Session
    from tablesense.table.geometry import TableGeometry

    stop = stop or threading.Event()
    variant = demo_variant(cfg)
    geometry = TableGeometry.load(demo_table(cfg, variant))
    registry = TagRegistry.virtual(cfg.seed)
    n = len(geometry.seats)
    spec = MatchSpec(
        game=cfg.game,
        variant=variant,
        options=dict(cfg.options),
        seat_names=[s.name for s in geometry.seats],
        seat_kinds=["human" if i in cfg.sit else "bot" for i in range(n)],
        seed=cfg.seed,
        table=geometry.name,
        lang=cfg.lang,
    )
    if cfg.sit and (cfg.link != "virtual" or not cfg.web):
        raise ValueError(say("--sit needs the virtual boards and the web page"))
    bus = EventBus(history_size=2000)
    if on_bus is not None:
        on_bus(bus)
    if cfg.announcer is not None:
        from tablesense.referee.speaking import TableVoice

        TableVoice(bus, cfg.announcer, turn_pause=6.0 / max(cfg.speed, 0.05))
    if log is not None:
        from tablesense.referee.console import log_events

        log_events(bus, log, cfg.lang)
    if cfg.trace:
        import json
        import sys

        def trace(ev: TableEvent) -> None:
            if ev.kind == "move_accepted":
                line = {
                    "trace": (ev.data.get("private") or {}).get("move") or ev.data["move"],
                    "hand_no": ev.data["hand_no"],
                    "index": ev.data["index"],
                }
                with contextlib.suppress(OSError):  # a closed pipe must not stop the match
                    sys.stdout.write(json.dumps(line) + "\n")
                    sys.stdout.flush()

        bus.add_listener(trace)
    fast = cfg.fast if cfg.fast is not None else (cfg.hands is not None and not cfg.web)
    pace = 0.0 if fast else 0.6 / max(cfg.speed, 0.01)
    # the referee's waits never drop below what the link needs to see a piece
    # arrive and leave (none when direct): faster hands would otherwise be
    # judged half-way through a move (a card read on two cells, a false swap)
    floor = 0.2 if cfg.link == "direct" else 0.5
    if cfg.boards == "rp2040":
        floor = 3.0  # an emulated board sweeps ~0.1-0.4x as fast as a real one
    if fast:
        # nobody watches: settle just long enough for the link
        timing = Timing().scaled(floor)
    else:
        timing = Timing(between_hands=6.0).scaled(max(1.0 / max(cfg.speed, 0.01), floor))
    journal = Journal(cfg.journal) if cfg.journal else None
    resumed_entries: list[dict[str, Any]] | None = None
    if journal is not None:
        row = journal.running()
        if (
            row is not None
            and row.spec.get("game") == spec.game
            and row.spec.get("seed") == spec.seed
        ):
            journal.resume(row.id)
            resumed_entries = journal.entries()
            # a resumed match keeps the language it was started in
            spec.lang = str(row.spec.get("lang") or spec.lang)
        else:
            journal.begin(spec.to_json())
    referee = Referee(
        spec,
        geometry,
        registry,
        emit=bus.publish,
        store=journal.append if journal is not None else None,
        timing=timing,
        deal="engine",
    )
    referee.boards_kind = "built-in"
    coach = cfg.coach if cfg.coach is not None else bool(cfg.sit)
    referee.set_coach(coach)
    bots = {i: referee.game.player(cfg.player, cfg.think_ms) for i in range(n) if i not in cfg.sit}

    vtable: Any = None
    link: Any = None
    if cfg.link == "direct":
        from tablesense.referee.direct import DirectTable

        world = DirectTable(geometry, path=cfg.world_file)
        source = world
    else:
        from tablesense.link.manager import TableLink
        from tablesense.sim.faults import FaultPlan
        from tablesense.sim.virtual_table import VirtualTable

        faults = (
            FaultPlan.from_rate(cfg.link_faults, seed=cfg.seed) if cfg.link_faults > 0 else None
        )
        options = None
        if cfg.boards == "rp2040":
            from tablesense.sim.rp2040.demo import deployed_rp2040_table

            vtable, options = deployed_rp2040_table(geometry, cfg.seed, faults)
            paths = vtable.device_paths()
        else:
            vtable = VirtualTable(geometry, seed=cfg.seed, faults=faults)
            paths = vtable.start()
        ports = list(vtable.stable_paths().values()) or list(paths.values())
        link = TableLink(geometry, ports=ports, options=options)
        link.start()
        world = vtable
        source = link
    session = Session(referee, source, bus, bots=bots, seed=cfg.seed, paint_leds=False)
    leds = attach_leds(geometry, source, bus)
    initial: dict[str, str] = {}
    if cfg.link == "direct":
        for cell, uid in world.contents().items():
            piece = registry.piece(uid)
            initial[cell] = str(piece)
    sitting: Any = None
    hands_class: Any = VirtualHands
    hands_extra: dict[str, Any] = {}
    if cfg.sit:
        from tablesense.referee.sit import SitDown, SyncedHands

        sitting = SitDown(
            geometry,
            registry,
            world,
            bus,
            session,
            game=cfg.game,
            seats=tuple(cfg.sit),
            open_hands=cfg.open_hands,
            seed=cfg.seed,
            coach=coach,
        )
        world = sitting.top  # the computer's hands move pieces on the same table top
        hands_class, hands_extra = SyncedHands, {"top": sitting.top}
    hands = hands_class(
        bus,
        world,
        registry,
        session.press,
        lambda: referee.state.accepted,
        pace=pace,
        initial=initial,
        timeout=60.0,
        **hands_extra,
    )
    if cfg.sit and not referee.game.has_turns:
        # without turns the computer seats act whenever they like: at a person's pace
        from tablesense.referee.sit import KEMS_THINK_S

        hands.think = KEMS_THINK_S / max(cfg.speed, 0.01)  # a person's pace, not the demo's
    server: Any = None
    url: str | None = None
    try:
        online_wait = 120.0 if cfg.boards == "rp2040" else 20.0
        if link is not None and not link.wait_online(online_wait):
            raise RuntimeError(f"the virtual boards did not come online in {online_wait:.0f} s")
        if cfg.web:
            url, server = serve_display(
                bus, cfg.host, cfg.port, routers=sitting.routers() if sitting else (), lang=cfg.lang
            )
        if sitting is not None and url is not None:
            sitting.url = url.rstrip("/") + "/tabletop"
            if on_tabletop is not None:
                on_tabletop(sitting)
        hands.start()
        if resumed_entries:
            referee.replay(resumed_entries, time.monotonic())
        else:
            referee.start(time.monotonic())
        if on_session is not None:
            on_session(session)
        session.attach()
        if on_ready is not None:
            on_ready(url)
        if on_world is not None:
            on_world(world)
        deadline = None if cfg.timeout is None else time.monotonic() + cfg.timeout

        def done(s: Session) -> bool:
            if referee.match.is_over:
                return True
            if cfg.hands is not None and len(referee.finished_hands()) >= cfg.hands:
                return True
            return deadline is not None and time.monotonic() > deadline

        session.run(stop, until=done)
        if referee.match.is_over and cfg.web and not stop.is_set():
            if cfg.stay:
                if log is not None:
                    log.print("match over: the display page stays up until Ctrl-C")
                stop.wait()
            else:
                stop.wait(5.0 / max(cfg.speed, 0.01))
        record = referee.record(limit=cfg.hands)
        if journal is not None and referee.match.is_over:
            journal.close_match("finished")
        return DemoResult(record, len(record["hands"]), url, referee.match.is_over, hands.errors)
    finally:
        hands.stop()
        session.detach()
        if sitting is not None:
            sitting.close()
        if leds is not None:
            with contextlib.suppress(Exception):
                leds.close(blank=False)
        if server is not None:
            with contextlib.suppress(Exception):
                server.stop()
        if link is not None:
            link.stop()
        if vtable is not None:
            vtable.stop()
        if journal is not None:
            journal.close()


def attach_leds(geometry: Any, source: Any, bus: EventBus) -> Any:
    """Drive the cell LEDs from the bus (the outputs room's CellLeds), or
    None when that room is not installed."""
    try:
        from tablesense.outputs.cell_leds import CellLeds
    except ImportError:
        return None
    leds = CellLeds(geometry, source.set_leds)
    leds.attach(bus)
    return leds


class DisplayPortBusyError(RuntimeError):
    """The display page's port is held by another program (often a demo or
    ``play`` still running); the command names its option for another."""

    def __init__(self, port: int) -> None:
        super().__init__(say("port {port} is in use by another program", port=port))
        self.port = port


def port_busy(exc: BaseException, option: str, host: str) -> Any:
    """What to do when the display page's port is taken (None for any other
    failure): the same command again with a port that is free now, and how to
    see which program holds the busy one."""
    if not isinstance(exc, DisplayPortBusyError):
        return None
    from tablesense.referee.options import again_with
    from tablesense.web.server import free_port_near

    return say(
        "port {port} is in use by another program (a demo or play still running?): stop it, or choose "
        "another port: {command}\n  ('ss -ltnp' lists the programs that hold ports)",
        port=exc.port,
        command=again_with(option, str(free_port_near(exc.port, host))),
    )


def serve_display(
    bus: EventBus, host: str, port: int, routers: Any = (), lang: str = "en"
) -> tuple[str | None, Any]:
    """Serve the display page for ``bus`` (the outputs+web room's app), with
    other pages' ``routers`` (the table-top page of ``demo --sit``)."""
    try:
        from tablesense.web.app import create_app
        from tablesense.web.server import serve_in_thread
    except ImportError:  # the web room is optional for headless tables
        return None, None
    from tablesense.web.server import PortInUseError

    app = create_app(bus, title="tablesense demo", routers=routers, lang=lang)
    try:
        server = serve_in_thread(app, host=host, port=port)
    except PortInUseError:  # never served elsewhere without a word: the command says what to do
        raise DisplayPortBusyError(port) from None
    url = getattr(server, "url", None)
    if url is None:
        real_port = getattr(server, "port", port)
        url = f"http://{host}:{real_port}/"
    return str(url), server


__all__ = ["DemoConfig", "DemoResult", "DisplayPortBusyError", "VirtualHands", "run_demo", "serve_display"]
