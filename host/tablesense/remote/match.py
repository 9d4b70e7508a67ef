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

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from tablesense.games.common import message_of
from tablesense.remote.authority import Authority, Fact, RemoteRejected
from tablesense.remote.judge import RGB, TableJudge, Verdict
from tablesense.remote.view import TableView, frame_for
from tablesense.table.geometry import CellId, TableGeometry

#: A message between a table and the authority (a JSON object with ``type``).
Message = dict[str, Any]


class HostSide:
    """The authority's side: see the module docstring."""

    def __init__(self, authority: Authority) -> None:
        self.authority = authority
        self.dealt: dict[str, int] = dict.fromkeys(authority.seating.tables, 0)
        self.acked: dict[str, int] = dict.fromkeys(authority.seating.tables, -1)
        """Per table: the last frame it said it applied (``alive``)."""

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
            last = int(msg.get("last", -1))
            self.acked[table] = last
            out: list[tuple[str, Message]] = []
            if table in self.authority.paused:  # back: the frames it missed, the same ones
                seats = self.authority.seating.tables[table]
                out += [(table, {"type": "frame", "frame": frame_for(f, seats)}) for f in self.authority.facts[last + 1:]]
                out += self._publish([self.authority.resume(table)])
            return out
        if kind == "placed":
            return []
        return [(table, {"type": "reject", "reason": f"unknown message type {kind!r}"})]

    def drop(self, table: str) -> list[tuple[str, Message]]:
        """``table``'s link is down: everyone pauses."""
        if table in self.authority.paused:
            return []
        return self._publish([self.authority.pause(table)])


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
        hands: Hands | None = None,
        set_leds: Callable[[dict[CellId, RGB]], Any] | None = None,
    ) -> None:
        self.view = TableView(seats)
        self.judge = TableJudge(geometry, self.view, pieces)
        self.geometry = geometry
        self.bots = bots
        self.hands = hands
        self.set_leds = set_leds
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
        self.lights_log: list[tuple[int, dict[CellId, RGB]]] = []
        """(frame number, lights) each time the lights changed (for tests and the benchmark)."""

    def receive(self, msg: Mapping[str, Any]) -> None:
        kind = msg.get("type")
        if kind == "frame":
            frame = msg["frame"]
            if frame["no"] <= self.view.last:
                return  # a frame sent again after a resume: had it
            self.view.apply(frame)
            self.frame_sent_at = msg.get("t")
            self.legal = []
        elif kind == "legal":
            if msg["after"] >= self.view.last:
                self.legal, self._legal_after = list(msg["moves"]), msg["after"]
        elif kind == "reject":
            self.rejections.append(str(msg.get("reason")))
            self._claimed = self._acted = None

    def step(self, sensed: Mapping[CellId, str]) -> list[Message]:
        """Judge the sensors, light the cells, let computer seats and hands act;
        the messages for the authority."""
        out: list[Message] = []
        legal = self.legal if self._legal_after >= self.view.last else []
        verdict = self.judge.judge(sensed, legal)
        self._light(verdict)
        if verdict.kind == "dealt":
            self.judge.dealt_hand = self.view.hand
            out.append({"type": "dealt", "hand": self.view.hand})
        elif verdict.kind == "placed":
            self.judge.placed_no = self.view.last
            out.append({"type": "placed", "no": self.view.last})
        elif verdict.kind == "claim" and verdict.move is not None and self._claimed != self.view.last:
            self._claimed = self.view.last
            out.append({"type": "claim", "move": verdict.move})
        elif verdict.kind == "waiting" and self.hands is not None:
            self._tidy(verdict, sensed)
        elif verdict.kind == "steady" and self._acted != self.view.last and legal:
            out += self._bot_turn(legal, sensed)
        return out

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
        for piece in order:
            at = where.get(piece)
            free = [c for c in home[piece] if c not in taken]
            if at is None or not free:
                continue
            self.hands.move(at, free[0])
            return

    def _bot_turn(self, legal: list[dict[str, Any]], sensed: Mapping[CellId, str]) -> list[Message]:
        for seat in sorted(self.bots & self.view.seats):
            move = self.judge.bot_move(seat, legal)
            if move is None:
                continue
            route = self.judge.route(move, sensed) if "tile" in move else None
            self._acted = self.view.last
            if route is not None and self.hands is not None:
                self.hands.move(*route)  # the sensors will see it, and the judge claims it
                return []
            self._claimed = self.view.last
            return [{"type": "claim", "move": move}]  # a pass or a draw: the seat's button
        return []
