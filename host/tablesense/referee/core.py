"""The referee: table snapshots and seat buttons in, accepted moves or
explained rejections out.

The referee is a pure object. It is fed

- :meth:`Referee.update` with every new :class:`~tablesense.table.state.TableState`
  (the snapshot is the truth; the link's events only make new snapshots),
- :meth:`Referee.press` / :meth:`Referee.referee_press` with seat and referee
  buttons, and
- :meth:`Referee.tick` with the time, so that waits can run out,

and it answers by calling two injected functions: ``store(entry)``, which must
make a journal entry durable before it returns (the referee calls it BEFORE it
changes the game state or tells anyone), and ``emit(kind, **data)`` for table
events (``move_accepted``, ``move_rejected``, ``view``...). Time is always
passed in, never read, so tests drive it.

How a move is recognised: the game's :class:`~tablesense.referee.rules.TableRules`
builds the layout the current game state wants, and the layout each legal move
would produce; a stable snapshot equal to one of those is that move. A snapshot
that fits nothing is explained (one plain instruction, the cells involved) once
it has lasted long enough for the situation (a piece merely lifted may be on
its way; a piece on a wrong cell is shown sooner). The game state never changes
on a bad move: the players are guided back until the table matches again.

The journal is event-sourced: the entries (``match``, ``hand``, ``move``,
``reorder``, ``undo``, ``void``, ``finish``) rebuild the same game state
(:meth:`Referee.replay`), which is how a crashed match resumes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tablesense.games.common import HandResult, IllegalPlayError, OptionError
from tablesense.referee.layout import Layout, Problem, Sensed
from tablesense.referee.rules import (
    DELAY_ERROR,
    DELAY_MISSING,
    DELAY_NOW,
    DELAY_PROBLEM,
    DominoRules,
    KemsRules,
    Rejection,
    TableMove,
    TableRules,
)
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import Piece, TagRegistry, UnknownTag

GAMES = ("dominoes", "kems")


class RefereeError(RuntimeError):
    """A referee that cannot go on (a journal that refuses a write, a match
    description that does not fit the table)."""


class Emit(Protocol):
    def __call__(self, kind: str, /, **data: Any) -> Any: ...


@dataclass(frozen=True)
class Timing:
    """Waits of the referee, in seconds (``scaled`` for the demo's pace).

    ``settle``: a snapshot that shows a legal move must stay unchanged this
    long before the move is accepted; ``slide``: the same when the piece could
    still slide on to the next cell of an arm; ``error``: a piece on a wrong
    cell is explained after this; ``missing``: a piece merely lifted (in a
    player's hand, maybe on its way) is asked back after this; ``problem``:
    unknown tags and read errors; ``double_window``: after a Kems call, how
    long the partner has to say double; ``confirm``: the referee button's
    question waits this long for a seat button; ``notice``: how long a
    rejected button press stays on the display.
    """

    settle: float = 0.3
    slide: float = 0.6
    error: float = 1.5
    missing: float = 8.0
    problem: float = 1.0
    double_window: float = 3.0
    contre_window: float = 6.0
    confirm: float = 10.0
    notice: float = 5.0
    between_hands: float = 0.0
    """Host-dealt games: how long the finished hand stays on the display
    before the next deal is asked for (the demo sets it so people can read
    the score)."""

    def scaled(self, factor: float) -> Timing:
        """Every wait multiplied by ``factor`` (0.1 = ten times faster)."""
        return Timing(**{k: v * factor for k, v in self.__dict__.items()})

    def delay(self, kind: str) -> float:
        return {
            DELAY_NOW: 0.0,
            DELAY_PROBLEM: self.problem,
            DELAY_ERROR: self.error,
            DELAY_MISSING: self.missing,
        }.get(kind, self.error)


@dataclass
class MatchSpec:
    """What is being played, by whom: the journal's first entry."""

    game: str
    variant: str
    options: dict[str, Any] = field(default_factory=dict)
    seat_names: list[str] = field(default_factory=list)
    seat_kinds: list[str] = field(default_factory=list)
    """``"human"`` or ``"bot"`` per seat."""
    seed: int | None = None
    table: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "variant": self.variant,
            "options": dict(self.options),
            "seat_names": list(self.seat_names),
            "seat_kinds": list(self.seat_kinds),
            "seed": self.seed,
            "table": self.table,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> MatchSpec:
        return cls(
            game=str(obj["game"]),
            variant=str(obj["variant"]),
            options=dict(obj.get("options") or {}),
            seat_names=list(obj.get("seat_names") or []),
            seat_kinds=list(obj.get("seat_kinds") or []),
            seed=obj.get("seed"),
            table=str(obj.get("table") or ""),
        )


# --------------------------------------------------------------------------- sensing


def sense(
    state: Mapping[str, Any], registry: TagRegistry, cells: Iterable[str] | None = None
) -> Sensed:
    """Translate a table snapshot through the tag registry.

    ``state`` maps cell ids to readings (:mod:`tablesense.table.state`); it may
    carry ``boards_online``. Unknown tags, a piece read on two cells, read
    errors and cells not scanned yet become :class:`Problem` values; offline
    boards pause the referee.
    """
    from tablesense.table.state import Empty, Offline, ReadError, Tag

    wanted = list(cells) if cells is not None else list(state)
    pieces: dict[str, str] = {}
    problems: list[Problem] = []
    seen: dict[str, list[str]] = {}
    for cell in sorted(wanted):
        reading = state.get(cell)
        if reading is None or isinstance(reading, Empty):
            continue
        if isinstance(reading, Tag):
            found = registry.piece(reading.uid)
            if isinstance(found, UnknownTag):
                problems.append(Problem("unknown_tag", (cell,), reading.uid.hex()))
                continue
            assert isinstance(found, Piece)
            if found.kind == "badge":
                problems.append(Problem("badge", (cell,), found.text))
                continue
            seen.setdefault(found.text, []).append(cell)
            pieces[cell] = found.text
        elif isinstance(reading, ReadError):
            from tablesense.table.state import ERROR_NAMES

            problems.append(
                Problem("read_error", (cell,), ERROR_NAMES.get(reading.code, str(reading.code)))
            )
        elif isinstance(reading, Offline):
            continue  # reported through boards_online
        else:  # Unscanned: the board has just come back; not judged yet
            problems.append(Problem("unscanned", (cell,), str(reading)))
    for piece, where in sorted(seen.items()):
        if len(where) > 1:
            problems.append(Problem("duplicate_tag", tuple(where), piece))
    online: Mapping[int, bool] = getattr(state, "boards_online", {}) or {}
    offline = tuple(sorted(b for b, up in online.items() if not up))
    return Sensed(pieces=pieces, problems=problems, boards_offline=offline)


# --------------------------------------------------------------------------- referee


def _default_names(n: int) -> list[str]:
    return [f"Seat {i + 1}" for i in range(n)]


class Referee:
    """Referees one match on one table; see the module docstring."""

    def __init__(
        self,
        spec: MatchSpec,
        geometry: TableGeometry,
        registry: TagRegistry,
        *,
        emit: Emit | None = None,
        store: Callable[[dict[str, Any]], object] | None = None,
        timing: Timing | None = None,
        deal: str = "engine",
    ) -> None:
        if spec.game not in GAMES:
            raise RefereeError(f"unknown game {spec.game!r}: use dominoes or kems")
        if spec.game not in geometry.games:
            raise RefereeError(
                f"table {geometry.name!r} is laid out for {', '.join(geometry.games)}, "
                f"not {spec.game}"
            )
        if deal not in ("engine", "table"):
            raise ValueError(
                "deal must be 'engine' (the host deals) or 'table' (read from the racks)"
            )
        n = len(geometry.seats)
        if not spec.seat_names:
            spec.seat_names = [s.name for s in geometry.seats] or _default_names(n)
        if len(spec.seat_names) != n:
            raise RefereeError(
                f"table {geometry.name!r} has {n} seats; {len(spec.seat_names)} players were named"
            )
        if not spec.seat_kinds:
            spec.seat_kinds = ["human"] * n
        self.spec = spec
        self.geometry = geometry
        self.registry = registry
        self.timing = timing or Timing()
        self.deal_mode = deal
        self._emit: Emit = emit or (lambda kind, **data: None)
        self._store = store or (lambda entry: None)
        self.match: Any = self._new_match()
        self.rules: TableRules = (
            DominoRules(geometry, spec.seat_names, self.match)
            if spec.game == "dominoes"
            else KemsRules(geometry, spec.seat_names, self.match)
        )
        self._set_deal_mode(deal)
        self.cells = list(geometry.cells)
        self.sensed: Sensed | None = None
        self.changed_at = 0.0
        self.now = 0.0
        self.phase = "idle"  # idle | dealing | play | between | over
        self.paused = False
        self.correction: Rejection | None = None
        self.notice: tuple[Rejection, float] | None = None
        self.message: dict[str, Any] | None = None
        self.last_move: dict[str, Any] | None = None
        self.last_result: dict[str, Any] | None = None
        self.hand_no = 0
        self.finish_at: float | None = None
        self.contre: tuple[int, float] | None = None
        self.announce: tuple[int, float] | None = None
        self.menu: tuple[str, float] | None = None
        self.entries: list[dict[str, Any]] = []
        self.accepted = 0
        self._hold: tuple[Any, ...] | None = None
        self.next_hand_at: float | None = None
        # recognition depends only on the snapshot and the game state: memoised
        self._memo: tuple[Any, list[TableMove], Rejection | None] | None = None
        self._sensed_no = 0
        self.laying_out = False
        """A host-dealt hand whose deal the table has not shown yet: pieces are
        being gathered and dealt, so nothing on the table is a mistake until it
        matches the deal or stays unchanged ``missing``, and a move is taken
        only once it has stood ``error``."""
        self.waiting_sync = False
        """The last table state was incomplete (a board resyncing): nothing is
        judged until a complete one arrives."""
        self.last_hand_no: int | None = None
        """The number of the last hand finished (not voided): ``last_line``."""

    # ------------------------------------------------------------------ setup
    def _new_match(self) -> Any:
        spec = self.spec
        n = len(self.geometry.seats)
        try:
            if spec.game == "dominoes":
                from tablesense.games.dominoes import DominoMatch, DominoOptions

                options = DominoOptions.from_dict(spec.variant, spec.options)
                return DominoMatch(spec.variant, options, seats=n)
            from tablesense.games.kems import KemsMatch

            if spec.variant not in ("classic", ""):
                raise OptionError(f"Kems has one variant, classic, not {spec.variant!r}")
            return KemsMatch(spec.options, seats=n)
        except (OptionError, ValueError) as exc:
            raise RefereeError(f"cannot set up {spec.game} {spec.variant}: {exc}") from None

    @property
    def hand(self) -> Any:
        return self.match.current

    def _set_deal_mode(self, deal: str) -> None:
        """``engine``: the host deals; ``table``: each deal is read from the
        racks, and the face-down boneyard/stock order is learnt as it shows."""
        self.deal_mode = deal
        if isinstance(self.rules, DominoRules):
            self.rules.free_draw = deal == "table"
        if isinstance(self.rules, KemsRules):
            self.rules.free_stock = deal == "table"

    def start(self, now: float = 0.0) -> None:
        """Begin a new match: journal it, announce it, deal the first hand."""
        self.now = now
        self._commit({"type": "match", "spec": self.spec.to_json(), "deal": self.deal_mode})
        self._emit("match_started", **self._match_info())
        self._next_hand(now)
        self._view()

    def replay(self, entries: Sequence[dict[str, Any]], now: float = 0.0) -> None:
        """Rebuild the match from journal entries (the first is ``match``);
        nothing is emitted but a ``view`` and a message saying so."""
        self.now = now
        for entry in entries:
            if entry.get("type") == "match":
                self.entries.append(entry)
                self._set_deal_mode(str(entry.get("deal") or self.deal_mode))
                continue
            self._apply(entry)
            self.entries.append(entry)
        if self.match.is_over:
            self.phase = "over"
        elif self.hand is None:
            if self.deal_mode == "engine":
                self._next_hand(now)
            else:
                self.phase = "dealing"
        else:
            self.phase = "play"
            if self._hand_over_pending():
                self.finish_at = now
        self._say(
            f"resumed from the journal: {self._hand_word()} {self.hand_no}, {self.accepted} moves so far; "
            f"the table is being checked against it",
            "info",
        )
        self._view()

    def _match_info(self) -> dict[str, Any]:
        return {
            "game": self.spec.game,
            "variant": self.spec.variant,
            "seats": self.spec.seat_names,
            "kinds": self.spec.seat_kinds,
            "target": self._target(),
            "table": self.geometry.name,
        }

    def _hand_word(self) -> str:
        """What the game calls one deal: a dominoes hand, a Kems round."""
        return "round" if self.spec.game == "kems" else "hand"

    def _target(self) -> Any:
        return getattr(self.match, "target", None)

    def _deal_rng(self) -> random.Random:
        return random.Random(f"tablesense-deal:{self.spec.seed}:{len(self._finished())}")

    def _finished(self) -> list[Any]:
        return list(getattr(self.match, "hands", None) or getattr(self.match, "rounds", []))

    def _next_hand(self, now: float) -> None:
        if self.match.is_over:
            self.phase = "over"
            return
        if self.deal_mode == "table":
            self.phase = "dealing"
            self._say("shuffle and deal: lay each player's pieces on their rack", "info")
            return
        rng = self._deal_rng()
        if self.spec.game == "dominoes":
            hand = self.match.new_hand(rng=rng)
            entry = self._hand_entry(hand)
            # journal first, keep the state only once it is durable
            self.match.current = None
            self._commit(entry)
        else:
            rnd = self.match.new_round(rng=rng)
            entry = self._hand_entry(rnd)
            self.match.current = None
            self._commit(entry)
        self._after_new_hand(now)

    def _hand_entry(self, hand: Any) -> dict[str, Any]:
        if self.spec.game == "dominoes":
            return {
                "type": "hand",
                "deal": [[str(t) for t in h] for h in hand.deal],
                "boneyard": [str(t) for t in hand.dealt_boneyard],
            }
        return {
            "type": "hand",
            "deal": [[str(c) for c in h] for h in hand.deal],
            "board": [str(c) for c in hand.initial_board],
            "stock": [str(c) for c in hand.initial_stock],
        }

    def _after_new_hand(self, now: float) -> None:
        self.phase = "play"
        self.correction = None
        # the host dealt: the players (or the demo's hands) now gather the last
        # hand's pieces and lay out the new deal, which passes through tables
        # that look like swaps and stray tiles
        self.laying_out = self.deal_mode == "engine"
        # its waits count from the deal, not from when the old table last moved
        self.changed_at = max(self.changed_at, now)
        self._emit(
            "hand_started",
            hand_no=self.hand_no,
            deal=self.entries[-1].get("deal"),
            to_play=self._to_play(),
        )
        rnd = self.hand
        if self.spec.game == "kems" and rnd is not None and rnd.is_misdeal:
            self._say(f"misdeal: {rnd.misdeal_reason()}; the cards are dealt again", "warning")
            self._finish(now)

    # ------------------------------------------------------------------ journal
    def _commit(self, entry: dict[str, Any]) -> None:
        """Make ``entry`` durable, then apply it. Nothing changes when the
        journal refuses the write."""
        try:
            self._store(entry)
        except Exception as exc:
            raise RefereeError(
                f"the journal refused an entry ({exc}); nothing was changed"
            ) from exc
        self._apply(entry)
        self.entries.append(entry)

    def _apply(self, entry: dict[str, Any]) -> None:
        kind = entry["type"]
        if kind == "match":
            return
        if kind == "hand":
            self._apply_hand(entry)
        elif kind == "move":
            self.hand.play(self._move_from_json(entry["move"]))
            self.accepted += 1
            self.last_move = dict(entry["move"])
        elif kind == "reorder":
            self._apply_reorder(entry)
        elif kind == "undo":
            self.hand.undo()
            self.accepted = max(0, self.accepted - 1)
            self.last_move = None
        elif kind == "void":
            self.match.void_hand(entry.get("reason", "void"))
            self._after_finish(None)
        elif kind == "finish":
            if self.spec.game == "dominoes":
                result = self.match.finish_hand()
            else:
                result = self.match.finish_round()
            self._after_finish(result)
        else:
            raise RefereeError(f"unknown journal entry type {kind!r}")

    def _apply_hand(self, entry: dict[str, Any]) -> None:
        self.hand_no += 1
        if self.spec.game == "dominoes":
            from tablesense.games.dominoes import Tile

            deal = [[Tile.parse(t) for t in h] for h in entry["deal"]]
            bone = [Tile.parse(t) for t in entry.get("boneyard") or []]
            # table-dealt: the boneyard is face down, a draw may take any tile
            # and the engine records the order as drawn
            self.match.new_hand(deal=deal, boneyard=bone, free_draw=self.deal_mode == "table")
        else:
            from tablesense.games.kems import Card

            self.match.new_round(
                deal=[[Card.parse(c) for c in h] for h in entry["deal"]],
                board=[Card.parse(c) for c in entry["board"]],
                stock=[Card.parse(c) for c in entry["stock"]],
            )

    def _apply_reorder(self, entry: dict[str, Any]) -> None:
        hand = self.hand
        if "boneyard" in entry:
            from tablesense.games.dominoes import Tile

            # Journals written before the engine's free draw: the order is now
            # learnt by the draw that follows (the hand of a table-dealt match
            # takes any boneyard tile), so the entry only has to agree.
            tiles = sorted(Tile.parse(t) for t in entry["boneyard"])
            if tiles != sorted(hand.boneyard):
                raise RefereeError("a boneyard reorder must keep the same tiles")
        if "stock" in entry:
            from tablesense.games.kems import Card

            hand.stock[:] = [Card.parse(c) for c in entry["stock"]]
            hand.initial_stock = tuple(Card.parse(c) for c in entry["initial"])

    def _after_finish(self, result: HandResult | None) -> None:
        self.finish_at = None
        self.correction = None
        if result is not None:
            self.last_hand_no = self.hand_no
            self.last_result = {"hand_no": self.hand_no, **result.to_json()}
        else:
            self.last_result = {
                "hand_no": self.hand_no,
                "outcome": "void",
                "winner": None,
                "points": [],
            }

    def _move_from_json(self, obj: dict[str, Any]) -> Any:
        if self.spec.game == "dominoes":
            from tablesense.games.dominoes import move_from_json

            return move_from_json(obj)
        from tablesense.games.kems import event_from_json

        return event_from_json(obj)

    def _move_to_json(self, move: Any) -> dict[str, Any]:
        if self.spec.game == "dominoes":
            from tablesense.games.dominoes import move_to_json

            return move_to_json(move)
        from tablesense.games.kems import event_to_json

        return event_to_json(move)

    # ------------------------------------------------------------------ inputs
    def update(self, state: Mapping[str, Any], now: float) -> None:
        """A new table snapshot arrived.

        Only a complete state (:attr:`TableState.complete`) is judged: while a
        board resyncs after a lost frame, or has not read every cell since it
        restarted, its cells may be stale for a few tenths of a second, and a
        move or a mistake read from them would be a false one. Such a state
        is set aside and the referee waits (timers still run); an offline
        board still pauses play as before.
        """
        online: Mapping[int, bool] = getattr(state, "boards_online", {}) or {}
        if getattr(state, "complete", True) is False and all(online.values()):
            self.waiting_sync = True
            self.tick(now)
            return
        self.feed(sense(state, self.registry, self.cells), now)

    def feed(self, sensed: Sensed, now: float) -> None:
        """A new snapshot already in the referee's terms (tests, the demo)."""
        if self.waiting_sync or self.sensed is None or sensed.key() != self.sensed.key():
            # after a resync the table counts as just changed: waits start again
            self.waiting_sync = False
            self.sensed = sensed
            self.changed_at = now
            self._sensed_no += 1
        self.tick(now)

    def tick(self, now: float) -> None:
        """Let waits run out (call a few times a second)."""
        self.now = now
        if self.notice is not None and now >= self.notice[1]:
            self.notice = None
            if self.correction is None:
                self._emit("correction_cleared", reason="notice expired")
                self._view()
        if self.menu is not None and now >= self.menu[1]:
            self.menu = None
            self._say(None)
        if self.contre is not None and now >= self.contre[1]:
            self.contre = None
            self._say("contre cancelled: no target seat was pressed", "info")
        if self.announce is not None and now >= self.announce[1]:
            self.announce = None
            self._say(None)
        if self.finish_at is not None and now >= self.finish_at and self.phase == "play":
            self._finish(now)
        if self.phase == "between" and self.next_hand_at is not None and now >= self.next_hand_at:
            self.next_hand_at = None
            self._next_hand(now)
            self._view()
        self._evaluate(now)

    # ------------------------------------------------------------------ judging
    def _evaluate(self, now: float) -> None:
        s = self.sensed
        if s is None or self.waiting_sync or self.phase in ("idle", "over"):
            return
        if s.boards_offline:
            if not self.paused:
                self.paused = True
                offline = sorted(s.boards_offline)
                which = (
                    f"board {offline[0]} is"
                    if len(offline) == 1
                    else f"boards {', '.join(str(b) for b in offline)} are"
                )
                self._say(
                    f"{which} offline: play is paused; check the USB cable. "
                    f"Play resumes by itself when the board is back.",
                    "error",
                )
            return
        if self.paused:
            self.paused = False
            self._say("all boards are back: play resumes", "info")
        if self.phase == "dealing":
            self._try_table_deal(now)
            return
        if self.hand is None:
            return
        if self.finish_at is not None:
            return  # a Kems call waits for a double; the round is over
        stable = now - self.changed_at
        layout = self.rules.layout()
        if layout.matches(s):
            self.laying_out = False
            self._clear()
            return
        if self.announce is not None and self._try_announce(s, layout, stable):
            return
        if self._hold is not None and s.key() != self._hold:
            self._hold = None
        memo_key = (self._sensed_no, len(self.entries), self._hold is None, self.laying_out)
        if self._memo is not None and self._memo[0] == memo_key:
            moves, rejection = self._memo[1], self._memo[2]
        else:
            moves = self.rules.recognise(s) if self._hold is None else []
            rejection = None if moves else self.rules.explain(s, layout)
            self._memo = (memo_key, moves, rejection)
        if moves:
            wait = max(
                self.timing.slide if m.settle == "slide" else self.timing.settle for m in moves
            )
            if self.laying_out:
                # the deal's first move may come before the deal ever showed
                # (the opener lays 6-6 straight on the centre): taken once the
                # table has stopped moving, not half-way through the dealing
                wait = max(wait, self.timing.error)
            if stable >= wait:
                for m in moves:
                    if not self._accept(m, now):
                        break
            return
        if rejection is None:
            self._clear()
            return
        delay = self.timing.delay(rejection.delay)
        if self.laying_out:
            # a deal being laid out is only guided once it has stopped moving
            delay = max(delay, self.timing.missing)
        if stable >= delay:
            self._reject(rejection)
        elif self.correction is not None and self.correction.instruction != rejection.instruction:
            # the table changed: the old instruction may be wrong now; wait quietly
            pass

    def _accept(self, tm: TableMove, now: float) -> bool:
        move = tm.move
        hand = self.hand
        if tm.note.startswith("free-stock:"):
            self._commit(self._stock_reorder(tm.note.split(":", 1)[1].split(",")))
        try:
            hand.check(move)
        except IllegalPlayError as exc:
            self._reject(Rejection("illegal", str(exc), (), DELAY_NOW))
            return False
        entry = {"type": "move", "move": self._move_to_json(move)}
        self._commit(entry)
        was_correcting = self.correction is not None
        self.correction = None
        self.notice = None
        self.laying_out = False
        self._emit(
            "move_accepted",
            hand_no=self.hand_no,
            move=entry["move"],
            text=self._move_text(move),
            seat=getattr(move, "seat", None),
            index=self.accepted,
            cells=self._cells_of_move(move),
        )
        if was_correcting:
            self._emit("correction_cleared", reason="move accepted")
        self._say(None)
        self._after_move(now)
        self._view()
        return True

    def _cells_of_move(self, move: Any) -> list[str]:
        """Where the moved pieces lie now (the last-move LEDs)."""
        s = self.sensed
        if s is None:
            return []
        names = [
            str(getattr(move, k))
            for k in ("tile", "give", "take")
            if getattr(move, k, None) is not None
        ]
        if type(move).__name__ == "Refresh":
            return list(self.geometry.kems_slots)
        if type(move).__name__ == "Announce":
            return []
        return [c for c, p in sorted(s.pieces.items()) if p in names]

    def _stock_reorder(self, new: list[str]) -> dict[str, Any]:
        rnd = self.hand
        refreshes = sum(1 for e in rnd.events if type(e).__name__ == "Refresh")
        initial = [str(c) for c in rnd.initial_stock]
        seen = 4 * refreshes
        unrevealed = initial[seen:]
        stock = [str(c) for c in rnd.stock]
        if stock[: len(unrevealed)] != unrevealed:
            return {"type": "reorder", "stock": stock, "initial": initial}
        rest = [c for c in unrevealed if c not in new]
        order = [c for c in new if c in unrevealed] + rest
        return {
            "type": "reorder",
            "stock": order + stock[len(unrevealed) :],
            "initial": initial[:seen] + order,
        }

    def _after_move(self, now: float) -> None:
        hand = self.hand
        if self.spec.game == "dominoes":
            if hand.is_over:
                self._finish(now)
            return
        if hand.is_over:
            if hand.awaiting_double:
                self.finish_at = now + self.timing.double_window
                self._say("Kems! the partner may still call double", "info")
            else:
                self._finish(now)

    def _hand_over_pending(self) -> bool:
        hand = self.hand
        return hand is not None and hand.is_over

    def _finish(self, now: float) -> None:
        self.finish_at = None
        self._commit({"type": "finish"})
        result = self.last_result or {}
        self._emit(
            "hand_ended",
            hand_no=self.hand_no,
            result=result,
            score=[_num(p) for p in self.match.score],
            record=self.match.to_record(),
            counts=self._rack_counts(),
        )
        self._say(_result_text(result, self.team_names(), self._hand_word()), "info")
        # the finished hand's whole line (the winning tile too) reaches the
        # display before the next hand replaces it
        self._view()
        if self.match.is_over:
            self.phase = "over"
            self._emit(
                "match_ended",
                winner=self.match.winner,
                score=[_num(p) for p in self.match.score],
                record=self.match.to_record(),
            )
            self._say(f"match over: {self.team_names()[self.match.winner]} win", "info")
        elif self.deal_mode == "engine" and self.timing.between_hands > 0:
            self.phase = "between"
            self.next_hand_at = now + self.timing.between_hands
        else:
            self._next_hand(now)
        self._view()

    def _try_table_deal(self, now: float) -> None:
        """Table-dealt games: start the hand once the racks hold a deal."""
        s = self.sensed
        if s is None or s.problems or now - self.changed_at < self.timing.error:
            return
        racks = [[s.pieces[c] for c in seat.rack if c in s.pieces] for seat in self.geometry.seats]
        try:
            if self.spec.game == "dominoes":
                assert self.geometry.line is not None
                if any(c in s.pieces for c in self.geometry.line.cells) or not all(racks):
                    return
                bone = [s.pieces[c] for c in self.geometry.boneyard if c in s.pieces]
                entry = {"type": "hand", "deal": racks, "boneyard": bone}
                self._probe_hand(entry)
            else:
                slots = [s.pieces.get(c) for c in self.geometry.kems_slots]
                if any(len(r) != 4 for r in racks) or None in slots:
                    return
                from tablesense.games.kems import deck

                used = {p for r in racks for p in r} | {p for p in slots if p}
                stock = [str(c) for c in deck(self.match.options.deck) if str(c) not in used]
                random.Random(f"stock:{self.hand_no}").shuffle(stock)
                entry = {"type": "hand", "deal": racks, "board": slots, "stock": stock}
                self._probe_hand(entry)
        except (ValueError, IllegalPlayError) as exc:
            self._say(f"waiting for the deal: {exc}", "info")
            return
        self._commit(entry)
        self._after_new_hand(now)
        self._view()

    def _probe_hand(self, entry: dict[str, Any]) -> None:
        """Raise ValueError when the engine refuses this deal (state unchanged)."""
        current, hand_no = self.match.current, self.hand_no
        try:
            self._apply_hand(entry)
        finally:
            self.match.current = current
            self.hand_no = hand_no

    def _try_announce(self, s: Sensed, layout: Layout, stable: float) -> bool:
        assert self.announce is not None
        seat = self.announce[0]
        diff = layout.diff(s)
        lifted = [
            d for d in diff if d.at is None and d.want is not None and d.want.group is not None
        ]
        if len(diff) != 1 or len(lifted) != 1 or lifted[0].want is None:
            return False
        want = lifted[0].want
        assert want.group is not None
        if want.group.key != f"rack:{seat}" or stable < self.timing.settle:
            return False
        from tablesense.games.dominoes import Announce, Tile

        move = Announce(seat, Tile.parse(lifted[0].piece))
        self.announce = None
        if not self.hand.is_legal(move):
            try:
                self.hand.check(move)
            except IllegalPlayError as exc:
                self._reject(Rejection("illegal_announce", str(exc), (), DELAY_NOW, seat=seat))
            return True
        self._accept(TableMove(move, layout), self.now)
        self._say(
            f"{self.rules.seat_label(seat)} announces {move.tile}: put it back on the rack", "info"
        )
        return True

    # ------------------------------------------------------------------ buttons
    def press(self, seat: int, button: str = "main", now: float | None = None) -> None:
        """A seat button: ``main`` (dominoes: pass; Kems: Kems / double / the
        target of a contre) or ``call`` (dominoes: announce a double; Kems:
        contre, then the target seat's button)."""
        if now is not None:
            self.now = now
        now = self.now
        if not 0 <= seat < len(self.spec.seat_names):
            return
        if self.menu is not None:
            self._confirm_menu(seat, now)
            return
        if self.phase != "play" or self.hand is None:
            self._notice(
                Rejection(
                    "no_hand",
                    f"no {self._hand_word()} is being played right now",
                    (),
                    DELAY_NOW,
                    seat=seat,
                )
            )
            return
        # a move the table already shows counts before the button
        self._evaluate_now(now)
        if self.spec.game == "dominoes":
            self._press_dominoes(seat, button, now)
        else:
            self._press_kems(seat, button, now)

    def _evaluate_now(self, now: float) -> None:
        s = self.sensed
        if s is None or self.waiting_sync or self.finish_at is not None:
            return
        moves = self.rules.recognise(s)
        for m in moves:
            if not self._accept(m, now):
                break

    def _press_dominoes(self, seat: int, button: str, now: float) -> None:
        from tablesense.games.dominoes import Pass

        hand = self.hand
        if hand.is_over:
            return
        if button == "call":
            self.announce = (seat, now + self.timing.confirm)
            self._say(
                f"{self.rules.seat_label(seat)} announces a double: lift it from your rack "
                f"for a moment, then put it back",
                "info",
            )
            return
        if seat != hand.to_play:
            self._notice(
                Rejection(
                    "out_of_turn",
                    f"it is {self.rules.seat_label(hand.to_play)}'s turn, not "
                    f"{self.rules.seat_label(seat)}'s",
                    (),
                    DELAY_NOW,
                    seat=seat,
                )
            )
            return
        if self.correction is not None:
            self._notice(
                Rejection(
                    "correction_pending",
                    f"first: {self.correction.instruction}",
                    self.correction.cells,
                    DELAY_NOW,
                    seat=seat,
                )
            )
            return
        move = Pass(seat)
        try:
            hand.check(move)
        except IllegalPlayError as exc:
            kind = "pass_with_playable"
            cells: list[str] = []
            s = self.sensed
            for m in hand.legal_moves(seat):
                if type(m).__name__ == "Play" and s is not None:
                    cell = next((c for c, p in s.pieces.items() if p == str(m.tile)), None)
                    target = (
                        self.rules.target_cell(self.rules.end_of(m))
                        if isinstance(self.rules, DominoRules)
                        else None
                    )
                    cells = [c for c in (cell, target) if c]
                    break
                if type(m).__name__ == "Draw":
                    kind = "must_draw"
                    cells = list(self.geometry.boneyard[:1])
                    break
            self._notice(Rejection(kind, str(exc), tuple(cells), DELAY_NOW, seat=seat))
            return
        self._accept(TableMove(move, self.rules.layout()), now)

    def _press_kems(self, seat: int, button: str, now: float) -> None:
        from tablesense.games.kems import Call

        rnd = self.hand
        if self.contre is not None and seat != self.contre[0]:
            caller = self.contre[0]
            self.contre = None
            self._call(Call(caller, "contre", seat), now)
            return
        if button == "call":
            if rnd.is_over:
                return
            self.contre = (seat, now + self.timing.contre_window)
            self._say(
                f"{self.rules.seat_label(seat)} calls contre: press the button of the seat you name",
                "info",
            )
            return
        last = rnd.events[-1] if rnd.events else None
        if (
            rnd.awaiting_double
            and last is not None
            and getattr(last, "seat", None) == rnd.partner_of(seat)
        ):
            self._call(Call(seat, "double"), now)
            return
        self._call(Call(seat, "kems"), now)

    def _call(self, call: Any, now: float) -> None:
        rnd = self.hand
        try:
            rnd.check(call)
        except IllegalPlayError as exc:
            self._notice(Rejection("illegal_call", str(exc), (), DELAY_NOW, seat=call.seat))
            return
        self._emit("call", seat=call.seat, call=call.kind, target=call.target)
        self._accept(TableMove(call, self.rules.layout()), now)

    def referee_press(self, now: float | None = None) -> None:
        """The referee button: first press offers to undo the last move, the
        second to void the hand (where the variant allows), the third cancels.
        A seat button confirms."""
        if now is not None:
            self.now = now
        options = ["undo"]
        if hasattr(self.match, "void_hand"):
            options.append("void")
        current = self.menu[0] if self.menu else None
        nxt = (
            options[0]
            if current is None
            else (
                options[options.index(current) + 1]
                if options.index(current) + 1 < len(options)
                else None
            )
        )
        if nxt is None:
            self.menu = None
            self._say("referee: cancelled", "info")
            return
        self.menu = (nxt, self.now + self.timing.confirm)
        if nxt == "undo":
            what = self.last_move_text() or "nothing to undo"
            self._say(
                f"referee: undo the last move ({what})? press any seat button to confirm", "warning"
            )
        else:
            self._say(
                f"referee: void this {self._hand_word()} (it is dealt again)? "
                "press any seat button to confirm",
                "warning",
            )

    def finished_hands(self) -> list[Any]:
        """Hands (rounds) finished so far, voided ones not included."""
        return self._finished()

    def record(self, limit: int | None = None) -> dict[str, Any]:
        """The match's game record (finished hands; the first ``limit``)."""
        rec = self.match.to_record()
        if limit is not None:
            rec["hands"] = rec["hands"][:limit]
        return rec

    def accepted_in_hand(self) -> int:
        """Moves (or Kems events) accepted in the current hand so far."""
        hand = self.hand
        if hand is None:
            return 0
        moves = getattr(hand, "moves", None)
        return len(moves if moves is not None else hand.events)

    def last_move_text(self) -> str | None:
        hand = self.hand
        if hand is None:
            return None
        moves = getattr(hand, "moves", None)
        if moves is None:
            moves = getattr(hand, "events", [])
        return self._move_text(moves[-1]) if moves else None

    def _confirm_menu(self, seat: int, now: float) -> None:
        assert self.menu is not None
        action = self.menu[0]
        self.menu = None
        hand = self.hand
        if hand is None or self.phase != "play":
            self._say("nothing to change: no hand is being played", "info")
            return
        if action == "undo":
            moves = getattr(hand, "moves", None)
            if moves is None:
                moves = hand.events
            if not moves:
                self._say(f"nothing to undo in this {self._hand_word()}", "info")
                return
            text = self._move_text(moves[-1])
            self.finish_at = None
            self._commit({"type": "undo", "by": seat})
            # the table still shows the undone move: do not take it again
            self._hold = self.sensed.key() if self.sensed is not None else None
            self._emit("message", text=f"undone: {text}", level="warning")
            self._say(f"undone: {text}; put the pieces back as the lights show", "warning")
        else:
            try:
                self._commit(
                    {
                        "type": "void",
                        "reason": f"voided by the referee (confirmed by seat {seat + 1})",
                    }
                )
            except RefereeError as exc:
                self._say(f"cannot void this {self._hand_word()}: {exc.__cause__ or exc}", "error")
                return
            self._emit(
                "hand_ended",
                hand_no=self.hand_no,
                result=self.last_result,
                score=[_num(p) for p in self.match.score],
                record=self.match.to_record(),
            )
            self._next_hand(now)
        self._view()

    # ------------------------------------------------------------------ output
    def _reject(self, rejection: Rejection) -> None:
        if self.correction is not None and self.correction.instruction == rejection.instruction:
            return
        self.correction = rejection
        self._emit("move_rejected", **rejection.to_json(), hand_no=self.hand_no)
        self._say(rejection.instruction, "error")

    def _notice(self, rejection: Rejection) -> None:
        """A rejected button press: shown for a while, the table is not involved."""
        self.notice = (rejection, self.now + self.timing.notice)
        self._emit("move_rejected", **rejection.to_json(), hand_no=self.hand_no)
        self._say(rejection.instruction, "error")

    def _clear(self) -> None:
        if self.correction is not None:
            self.correction = None
            self._emit("correction_cleared", reason="the table matches again")
            self._say(None)

    def _say(self, text: str | None, level: str = "info") -> None:
        new = None if text is None else {"text": text, "level": level}
        if new == self.message:
            return
        self.message = new
        if text is not None:
            self._emit("message", text=text, level=level)
        self._view()

    def _to_play(self) -> int | None:
        hand = self.hand
        if hand is None or self.spec.game != "dominoes" or hand.is_over:
            return None
        return hand.to_play

    def _move_text(self, move: Any) -> str:
        name = type(move).__name__
        seat = getattr(move, "seat", None)
        who = self.rules.seat_label(seat) if isinstance(seat, int) else "the table"
        if name == "Play":
            end = f" on the {move.end} end" if move.end else ""
            return f"{who} plays {move.tile}{end}"
        if name == "Pass":
            return f"{who} passes"
        if name == "Draw":
            return f"{who} draws"
        if name == "Announce":
            return f"{who} announces {move.tile}"
        if name == "Swap":
            return f"{who} gives {move.give}, takes {move.take}"
        if name == "Refresh":
            return "new board cards"
        if name == "Call":
            target = f" on {self.rules.seat_label(move.target)}" if move.target is not None else ""
            return f"{who} calls {move.kind}{target}"
        return str(move)

    def _rack_counts(self) -> list[int] | None:
        """Dominoes: the pips left on each rack of the hand just finished (the
        count the score comes from); None for Kems."""
        done = self._finished()
        if self.spec.game != "dominoes" or not done:
            return None
        hand = done[-1]
        return [hand.pips_in_hand(s) for s in range(hand.seats)]

    def team_of_seat(self, seat: int) -> int:
        n = len(self.spec.seat_names)
        if self.spec.game == "dominoes":
            return self.match.team_of(seat)
        return seat % (n // 2)

    def team_names(self) -> list[str]:
        """``"South & North"`` per team (a seat's name when it plays alone)."""
        n = len(self.spec.seat_names)
        teams: dict[int, list[str]] = {}
        for seat in range(n):
            teams.setdefault(self.team_of_seat(seat), []).append(self.spec.seat_names[seat])
        return [" & ".join(teams[t]) for t in sorted(teams)]

    def view(self) -> dict[str, Any]:
        """The whole public display state (CONTRACTS section 6)."""
        spec = self.spec
        hand = self.hand if self.hand is not None else self._last_finished()
        n = len(spec.seat_names)
        seats = []
        to_play = self._to_play()
        for i in range(n):
            team = self.team_of_seat(i)
            count = len(hand.hands[i]) if hand is not None else None
            seats.append(
                {
                    "index": i,
                    "name": spec.seat_names[i],
                    "team": team,
                    "count": count,
                    "is_turn": to_play == i,
                    "kind": spec.seat_kinds[i] if i < len(spec.seat_kinds) else "human",
                }
            )
        out: dict[str, Any] = {
            "game": spec.game,
            "variant": spec.variant,
            "table": self.geometry.name,
            "seats": seats,
            "scores": [_num(p) for p in self.match.score],
            "target": self._target(),
            "hand_no": self.hand_no,
            "to_play": to_play,
            "message": self.message,
            "boards": [
                {"id": b.id, "online": not (self.sensed and b.id in self.sensed.boards_offline)}
                for b in self.geometry.boards
            ],
            "last_move": self.last_move,
            "result": self.last_result,
            "phase": self.phase,
            "paused": self.paused,
            "correction": self.correction.to_json() if self.correction else None,
            "match_over": self.match.is_over,
            "winner": self.match.winner,
            "moves": self.accepted,
        }
        if spec.game == "dominoes":
            out["line"] = self._line_view()
            out["last_line"] = self._last_line_view()
            if hand is not None and hand.line:
                out["ends"] = {"left": hand.left_end, "right": hand.right_end}
            if hand is not None and self.geometry.boneyard:
                out["stock"] = len(hand.boneyard)
        else:
            out["board"] = [str(c) for c in hand.board] if hand is not None else []
            if hand is not None:
                out["stock"] = len(hand.stock)
        return out

    def _last_finished(self) -> Any:
        if self.phase not in ("between", "over"):
            return None
        done = self._finished()
        return done[-1] if done else None

    def _last_line_view(self) -> dict[str, Any] | None:
        """The final line of the last finished hand (``match.hands[-1]``),
        winning tile included, in the ``line`` format + ``hand_no`` and
        ``ends``: the display shows it while the next hand's line is empty."""
        done = self._finished()
        if not done or not done[-1].line:
            return None
        hand = done[-1]
        return {
            **self._line_of(hand),
            "hand_no": self.last_hand_no,
            "ends": {"left": hand.left_end, "right": hand.right_end},
        }

    def _line_view(self) -> dict[str, Any]:
        return self._line_of(self.hand if self.hand is not None else self._last_finished())

    @staticmethod
    def _line_of(hand: Any) -> dict[str, Any]:
        if hand is None or not hand.line:
            return {"center": None, "left": [], "right": []}
        first = hand.line[0]
        tile = first.tile
        center = {"tile": str(tile), "seat": first.seat}
        arms: dict[str, list[dict[str, Any]]] = {}
        for end in ("left", "right"):
            arms[end] = [
                {"tile": str(lp.tile), "outer": lp.outer, "seat": lp.seat} for lp in hand.arm(end)
            ]
        return {"center": center, **arms}

    def _view(self) -> None:
        self._emit("view", **self.view())


def _num(p: float) -> int | float:
    return int(p) if float(p).is_integer() else float(p)


def _result_text(result: Mapping[str, Any], teams: Sequence[str], word: str = "hand") -> str:
    if not result:
        return f"{word} over"
    winner = result.get("winner")
    how = result.get("label") or result.get("outcome") or ""
    pts = result.get("points") or []
    who = "nobody scores" if winner is None else f"{teams[winner]} win"
    scored = ", ".join(f"{teams[i]} {_num(p):+}" for i, p in enumerate(pts) if i < len(teams))
    return f"{word} {result.get('hand_no')}: {who} ({how}); {scored}"
