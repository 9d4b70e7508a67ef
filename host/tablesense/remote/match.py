"""The two sides of a remote match, without the wire.

:class:`HostSide` wraps the :class:`~tablesense.remote.authority.Authority`:
it takes the tables' messages (claims, ``dealt``, ``placed``, ``alive``) and
answers with the messages to send each table (frames through the view
filter, rejections). :class:`TableSide` is one physical table: it applies
its frames to its :class:`~tablesense.remote.view.TableView`, judges its
sensors with a :class:`~tablesense.remote.judge.TableJudge`, lights its
cells, lets its computer seats and its virtual hands act, and says what to
send the authority. Both are plain objects driven by a loop
(:mod:`tablesense.remote.wire` carries their messages over the broker), so
the tests drive them directly too.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from tablesense.games.common import message_of
from tablesense.games.registry import find_game
from tablesense.remote.authority import Authority, Fact, RemoteRejected
from tablesense.remote.board_judge import BoardJudge
from tablesense.remote.judge import RGB, TableJudge, Verdict
from tablesense.remote.view import TableView, frame_for
from tablesense.table.geometry import CellId, TableGeometry

#: A message between a table and the authority (a JSON object with ``type``).
Message = dict[str, Any]
#: A claim with no answer (no frame, no rejection) for this long is sent again.
RESEND_AFTER_S = 2.0


class HostSide:
    """The authority's side: see the module docstring."""

    def __init__(self, authority: Authority) -> None:
        self.authority = authority
        self.dealt: dict[str, int] = dict.fromkeys(authority.seating.tables, 0)
        self.acked: dict[str, int] = dict.fromkeys(authority.seating.tables, -1)
        """Per table: the last frame it said it applied (``alive``)."""
        self._behind: dict[str, int] = {}
        """Per table: the frame it was stuck after at its last ``alive``."""

    def start(self) -> list[tuple[str, Message]]:
        return self._publish(self.authority.start())

    def _publish(self, facts: list[Fact]) -> list[tuple[str, Message]]:
        out: list[tuple[str, Message]] = []
        for fact in facts:
            for table, seats in self.authority.seating.tables.items():
                out.append((table, {"type": "frame", "frame": frame_for(fact, seats)}))
        return out + self._legal()

    def _legal(self) -> list[tuple[str, Message]]:
        """Each table's legal moves now (its own seats' only): sent after every change."""
        ready = all(d >= self.authority.hand_no for d in self.dealt.values())
        return [
            (t, {"type": "legal", "after": len(self.authority.facts) - 1,
                 "moves": self.authority.legal_for(t) if ready else []})
            for t in self.authority.seating.tables
        ]

    def handle(self, table: str, msg: Mapping[str, Any]) -> list[tuple[str, Message]]:
        """One message from ``table``; the messages to send in answer."""
        kind = msg.get("type")
        if kind == "claim":
            try:
                facts = self.authority.submit(table, dict(msg.get("move") or {}))
            except RemoteRejected as exc:
                return [(table, {"type": "reject", "move": msg.get("move"), "reason": str(message_of(exc))})]
            return self._publish(facts)
        if kind == "dealt":
            self.dealt[table] = max(self.dealt.get(table, 0), int(msg.get("hand", 0)))
            return self._legal()
        if kind == "alive":
            return self._alive(table, int(msg.get("last", -1)), msg.get("dealt"), msg.get("moves"))
        if kind == "placed":
            return []
        return [(table, {"type": "reject", "reason": f"unknown message type {kind!r}"})]

    def _alive(self, table: str, last: int, dealt: Any, moves: Any) -> list[tuple[str, Message]]:
        """A table says it is there and which frame it applied last. A table
        that was away gets the frames it missed (the facts filtered again: the
        same frames) and the match resumes; one still behind at the same frame
        one ``alive`` later lost frames on the way and gets them again."""
        self.acked[table] = last
        out: list[tuple[str, Message]] = []
        if isinstance(dealt, int) and dealt > self.dealt.get(table, 0):
            self.dealt[table] = dealt  # a ``dealt`` lost on the way
            out += self._legal()
        newest = len(self.authority.facts) - 1
        if table in self.authority.paused:
            out += self.frames_since(table, last)
            return out + self._publish([self.authority.resume(table)])
        if last < newest and self._behind.get(table) == last:
            out += self.frames_since(table, last) + self._legal()
        elif last == newest and not out:
            mine = [m for m in self._legal() if m[0] == table]
            if mine and mine[0][1]["moves"] and moves != len(mine[0][1]["moves"]):
                out += mine  # its legal moves were lost on the way
        self._behind[table] = last
        return out

    def frames_since(self, table: str, last: int) -> list[tuple[str, Message]]:
        """The frames of ``table`` after number ``last`` (all of them for -1: a table that starts again)."""
        seats = self.authority.seating.tables[table]
        return [(table, {"type": "frame", "frame": frame_for(f, seats)}) for f in self.authority.facts[last + 1:]]

    def rejoin(self, table: str) -> list[tuple[str, Message]]:
        """``table`` started again (its process was restarted): every frame from
        the first, and the match resumes if it was paused for it."""
        self.dealt[table] = 0
        out = self.frames_since(table, -1)
        if table in self.authority.paused:
            return out + self._publish([self.authority.resume(table)])
        return out + self._legal()

    def drop(self, table: str) -> list[tuple[str, Message]]:
        """``table``'s link is down: everyone pauses."""
        if table in self.authority.paused:
            return []
        return self._publish([self.authority.pause(table)])


#: The judge of a table by the game's play area: a line of tiles, or a board of slots.
JUDGES: dict[str, type[TableJudge]] = {"line": TableJudge, "board": BoardJudge}


def judge_for(game: str, geometry: TableGeometry, view: TableView, pieces: list[str]) -> TableJudge:
    """The judge of ``game``'s pieces on this table (the game says where its
    pieces are played: ``play_area``)."""
    return JUDGES[find_game(game).play_area](geometry, view, pieces)


class Hands(Protocol):
    """Who moves pieces on the table: people, or a virtual table's hands."""

    def move(self, from_cell: CellId, to_cell: CellId) -> None: ...


class TableSide:
    """One physical table of a remote match: see the module docstring."""

    def __init__(
        self,
        geometry: TableGeometry,
        seats: frozenset[int],
        pieces: list[str],
        *,
        bots: frozenset[int] = frozenset(),
        people: frozenset[int] = frozenset(),
        hands: Hands | None = None,
        set_leds: Callable[[dict[CellId, RGB]], Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
        game: str | None = None,
    ) -> None:
        self.view = TableView(seats)
        self.judge = judge_for(game if game is not None else geometry.games[0], geometry, self.view, pieces)
        self.geometry = geometry
        self.bots = bots
        self.people = people
        """Seats a person plays on the table-top page: the hands never move their
        pieces off the stock, and their pass button comes through :meth:`press`."""
        self._pressed: deque[int] = deque()
        self.hands = hands
        self.set_leds = set_leds
        self.clock = clock
        self._pending: tuple[dict[str, Any], float] | None = None
        """The claim sent and not answered yet (a frame or a rejection answers it), and when."""
        self.legal: list[dict[str, Any]] = []
        self._legal_after = -1
        self._claimed: int | None = None
        """The frame after which this table sent its claim (one claim per frame)."""
        self._acted: int | None = None
        """The frame after which a computer seat moved (one move per frame)."""
        self._lit: dict[CellId, RGB] | None = None
        self.frame_sent_at: float | None = None
        """When the authority sent the last frame (its clock; None in its own process)."""
        self.rejections: list[str] = []
        self.on_frame: Callable[[dict[str, Any]], None] | None = None
        """Called with each frame once applied (the joining table's journal)."""
        self.lights_log: list[tuple[int, dict[CellId, RGB]]] = []
        """(frame number, lights) each time the lights changed (for tests and the benchmark)."""
        self._changed_at = clock()
        """When the last frame arrived (a game without turns refreshes after a quiet while)."""

    def receive(self, msg: Mapping[str, Any]) -> None:
        kind = msg.get("type")
        if kind == "frame":
            frame = msg["frame"]
            if frame["no"] != self.view.last + 1:
                return  # had it (sent again after a resume), or one before it was lost: ``alive`` brings it again
            self.view.apply(frame)
            if self.on_frame is not None:
                self.on_frame(frame)
            self.frame_sent_at = msg.get("t")
            self._changed_at = self.clock()
            self._pending = None
            self.legal = []
        elif kind == "legal":
            if msg["after"] >= self.view.last:
                self.legal, self._legal_after = list(msg["moves"]), msg["after"]
        elif kind == "reject":
            self.rejections.append(str(msg.get("reason")))
            self._claimed = self._acted = None
            self._pending = None

    def step(self, sensed: Mapping[CellId, str]) -> list[Message]:
        """Judge the sensors, light the cells, let computer seats and hands act;
        the messages for the authority."""
        out: list[Message] = []
        legal = self.current_legal()
        verdict = self.judge.judge(sensed, legal)
        self._light(verdict)
        if self._pending is not None and self.clock() - self._pending[1] > RESEND_AFTER_S:
            out.append(self._claim(self._pending[0]))  # no answer: lost on the way, or the link was cut
        elif verdict.kind == "dealt":
            self.judge.dealt_hand = self.view.hand
            out.append({"type": "dealt", "hand": self.view.hand})
        elif verdict.kind == "placed":
            self.judge.placed_no = self.view.last
            out.append({"type": "placed", "no": self.view.last})
        elif verdict.kind == "claim" and verdict.move is not None and self._claimed != self.view.last:
            self._claimed = self.view.last
            out.append(self._claim(verdict.move))
        elif verdict.kind == "waiting" and self.hands is not None:
            self._tidy(verdict, sensed)
        elif verdict.kind == "steady" and self._acted != self.view.last and legal:
            out += self._bot_turn(legal, sensed)
        if not out and verdict.kind == "steady":
            out += self._button_turn(legal)
        else:
            self._pressed.clear()  # a press counts only while the table is steady
        return out

    def current_legal(self) -> list[dict[str, Any]]:
        """The legal moves of this table's seats now (none while paused or
        before the authority's list for the last frame arrived)."""
        return self.legal if self._legal_after >= self.view.last and not self.view.paused else []

    def press(self, seat: int) -> None:
        """A person's pass button (thread-safe: the page's server calls it)."""
        self._pressed.append(seat)

    def _button_turn(self, legal: list[dict[str, Any]]) -> list[Message]:
        """A pressed seat button: what the judge says it claims when it is one
        of the seat's legal moves (dominoes: a pass or a draw; Kems: a call),
        else it is ignored (the tile to lay is on the rack)."""
        while self._pressed:
            seat = self._pressed.popleft()
            move = self.judge.button_move(seat, legal)
            if move is not None and self._claimed != self.view.last:
                self._claimed = self.view.last
                return [self._claim(dict(move))]
        return []

    def _claim(self, move: dict[str, Any]) -> Message:
        self._pending = (move, self.clock())
        return {"type": "claim", "move": move}

    def alive(self) -> Message:
        """What the table says every second: the last frame it applied, the last hand laid out."""
        legal = self.legal if self._legal_after >= self.view.last else []
        return {"type": "alive", "last": self.view.last, "dealt": self.judge.dealt_hand, "moves": len(legal)}

    def _light(self, verdict: Verdict) -> None:
        if verdict.lights != self._lit:
            self._lit = dict(verdict.lights)
            self.lights_log.append((self.view.last, dict(verdict.lights)))
            if self.set_leds is not None:
                self.set_leds(self._full_frame(verdict.lights))

    def _full_frame(self, lights: Mapping[CellId, RGB]) -> dict[CellId, RGB]:
        return {c: lights.get(c, (0, 0, 0)) for c in self.geometry.cells if self.geometry.cells[c].led is not None}

    def _tidy(self, verdict: Verdict, sensed: Mapping[CellId, str]) -> None:
        """The virtual hands put one misplaced piece where it belongs: first
        what goes back to the stock (it frees racks and the line), then the
        rest."""
        assert self.hands is not None
        home = self.judge.home()
        where = {p: c for c, p in sensed.items()}
        taken = set(sensed)
        order = sorted(verdict.misplaced, key=lambda p: len(home[p]) != len(self.geometry.stock))
        # once the deal lies out, a person's tile off their rack is their own doing (laid astray)
        racks = {c for s in self.people for c in self.geometry.seats[s].rack} \
            if self.judge.dealt_hand >= self.view.hand else set()
        for piece in order:
            at = where.get(piece)
            free = [c for c in home[piece] if c not in taken]
            if at is None or not free:
                continue
            if at not in self.geometry.stock and set(home[piece]) <= racks:
                continue  # it goes back to their rack by their own hand (it lights)
            self.hands.move(at, free[0])
            return

    def _bot_turn(self, legal: list[dict[str, Any]], sensed: Mapping[CellId, str]) -> list[Message]:
        for seat in sorted(self.bots & self.view.seats):
            move = self.judge.bot_move(seat, legal)
            if move is None:
                continue
            routes = self.judge.routes(move, sensed)
            self._acted = self.view.last
            if routes and self.hands is not None:
                for route in routes:
                    self.hands.move(*route)  # the sensors will see it, and the judge claims it
                return []
            self._claimed = self.view.last
            return [self._claim(move)]  # a pass, a draw or a call: the seat's button
        idle = self.judge.idle_move(legal, self.clock() - self._changed_at) if self.bots & self.view.seats else None
        if idle is not None:  # nobody here wants anything (a Kems refresh)
            self._acted = self._claimed = self.view.last
            return [self._claim(idle)]
        return []
