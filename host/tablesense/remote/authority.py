"""The authority of a remote match: it holds the deal and the truth.

One process (the table that hosts the match, or the director) runs the
engine with every hand in it. Tables never see that engine: they send what
their own seats did, as their sensors judged it (a :class:`Claim`), and
receive what the view filter (:mod:`.view`) lets them see of each
:data:`Fact` the authority records.

A fact is the full-information account of one step, in the record format's
words (``docs/record-format.md``): a hand dealt (every hand, the boneyard or
the Kems stock), a move applied (a draw names its tile), a hand scored (its
record), the match over. The list of facts is the authority's journal: the
same facts filtered again give a table exactly the frames it had, so a
table that comes back resumes where it was (docs/remote.md, "Faults").

Pure like the engines: no clock, no I/O; dealing from an injected
``random.Random``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tablesense.games.common import IllegalPlayError, message_of, say
from tablesense.games.dominoes import Draw, Play
from tablesense.games.kems import Call
from tablesense.games.registry import find_game

#: One full-information step of the match (a JSON object with ``kind``).
Fact = dict[str, Any]


class RemoteRejected(ValueError):
    """A claim the authority refuses: not this table's seat, not legal now,
    the match paused. The message is a sentence for the table's players."""


@dataclass(frozen=True)
class Seating:
    """Which table holds which seats (every seat exactly once)."""

    tables: Mapping[str, frozenset[int]]

    def __post_init__(self) -> None:
        seen: list[int] = sorted(s for seats in self.tables.values() for s in seats)
        if seen != list(range(len(seen))) or not seen:
            raise ValueError(f"every seat must sit at exactly one table: {dict(self.tables)}")

    @property
    def seats(self) -> int:
        return sum(len(s) for s in self.tables.values())

    def table_of(self, seat: int) -> str:
        for name, seats in self.tables.items():
            if seat in seats:
                return name
        raise KeyError(seat)


class Authority:
    """The engine of a remote match and its log of facts; see the module docstring."""

    def __init__(
        self,
        game: str,
        variant: str,
        seating: Seating,
        *,
        options: Mapping[str, Any] | None = None,
        seed: int = 0,
    ) -> None:
        self.rules = find_game(game)  # UnknownGame (a ValueError) names the games there are
        self.game = game
        self.variant = variant
        self.seating = seating
        self.rng = random.Random(seed)
        self.match: Any = self.rules.new_match(variant, options, seats=seating.seats)
        self.facts: list[Fact] = []
        self.inputs: list[dict[str, Any]] = []
        """Every call that changed the match, in order (``start``, an accepted
        ``submit``, ``pause``, ``resume``): the engine is deterministic, so
        :meth:`replay` of these rebuilds the same facts after a restart."""
        self.on_input: Any = None
        """Called with each new input (the host's journal appends it to its file)."""
        self.paused: frozenset[str] = frozenset()
        """Tables whose link is down: while any is, no claim is accepted."""

    # -- the course of the match ---------------------------------------------

    @property
    def hand_no(self) -> int:
        """1-based number of the hand (round) being played or last played."""
        return len(self._done()) + (1 if self.match.current is not None else 0)

    def _done(self) -> list[Any]:
        return list(self.match.hands)

    def start(self) -> list[Fact]:
        """Deal the first hand; the facts to publish."""
        if self.facts:
            raise ValueError("the match has started already")
        out = self._deal()
        self._input({"op": "start"})
        return out

    def _deal(self) -> list[Fact]:
        """Deal the next hand; a hand over at the deal (a Kems misdeal, seven
        doubles) is scored at once and the next one dealt."""
        hand = self.match.new_hand(self.rng)
        # the full deal as the record writes it: every hand, the boneyard or the board and stock
        fact: Fact = {"kind": "deal", "game": self.game, "hand": self.hand_no, **self.rules.deal_to_json(hand)}
        if self.rules.has_turns:
            fact |= {"to_play": hand.to_play, "openers": list(hand.openers)}
        return [self._log(fact), *self._maybe_end()]

    def _log(self, fact: Fact) -> Fact:
        fact["no"] = len(self.facts)
        self.facts.append(fact)
        return fact

    def _current(self) -> Any:
        return self.match.current

    def _maybe_end(self) -> list[Fact]:
        """Score a finished hand (a Kems ``kems`` waits for its double or its
        decline) and deal the next, or end the match."""
        cur = self._current()
        if cur is None or not cur.is_over:
            return []
        if self.rules.may_call_double(cur):
            return []
        return self._close_hand()

    def _close_hand(self) -> list[Fact]:
        number = self.hand_no
        result = self.match.finish_hand()
        record = self.match.to_record()["hands"][-1]
        out = [self._log({
            "kind": "hand_end", "hand": number, "record": record, "result": result.to_json(),
            "score": list(self.match.score),
        })]
        if self.match.is_over:
            out.append(self._log({"kind": "match_end", "record": self.record()}))
            return out
        return out + self._deal()

    def record(self) -> dict[str, Any]:
        """The game record of the finished hands (the same at every table)."""
        rec: dict[str, Any] = self.match.to_record()
        return rec

    # -- claims from the tables ----------------------------------------------

    def submit(self, table: str, move: Mapping[str, Any]) -> list[Fact]:
        """A table reports what one of its seats did (record form; a draw may
        leave its tile out: the authority draws the next one). Returns the
        facts to publish; raises :class:`RemoteRejected` with the reason."""
        if self.paused:
            raise RemoteRejected(say("the match is paused: {tables} is not connected",
                                     tables=", ".join(sorted(self.paused))))
        seat = move.get("seat")
        own = isinstance(seat, int) and not isinstance(seat, bool) and seat in self.seating.tables.get(table, ())
        # without turns every seat may act at any time, and a refresh (Kems)
        # is nobody's move: any table may turn the board over
        anyone = not self.rules.has_turns and move.get("refresh") is True and table in self.seating.tables
        if not own and not anyone:
            raise RemoteRejected(say("table {table} has no seat {seat!r}", table=table, seat=seat))
        cur = self._current()
        if cur is None:
            raise RemoteRejected(say("no hand is being played"))
        if not self.rules.has_turns and move.get("decline") is True:  # the answer to a call (Kems)
            return self._decline(int(seat))  # type: ignore[arg-type]  # checked above
        seen = move.get("x-board")  # a refresh asked for by a table names the board it saw
        if seen is not None and seen != [str(c) for c in cur.board]:
            raise RemoteRejected(say("the board changed before this refresh arrived: it is not turned over twice"))
        try:
            m = self._move(cur, move)
            cur.play(m)
            applied = self.rules.move_to_json(m)
            if isinstance(m, Play) and cur.line[-1].end is not None:
                applied["end"] = cur.line[-1].end  # the arm it went to, for every table's line
        except (IllegalPlayError, ValueError) as exc:
            raise RemoteRejected(message_of(exc)) from None
        self._input({"op": "submit", "table": table, "move": dict(move)})
        fact: Fact = {"kind": "move", "hand": self.hand_no, "move": applied}
        if self.rules.has_turns:
            fact["to_play"] = cur.to_play
        else:
            fact["board"], fact["stock"] = [str(c) for c in cur.board], len(cur.stock)
        return [self._log(fact), *self._maybe_end()]

    def _move(self, hand: Any, move: Mapping[str, Any]) -> Any:
        """The engine's move for a claim (a seat and a format check: a seat
        outside the table does not fit the record)."""
        if self.rules.has_turns and move.get("draw") is True:  # the table asks; the authority draws the next tile
            drawn = [m for m in hand.legal_moves(move["seat"]) if isinstance(m, Draw)]
            if not drawn:
                raise RemoteRejected(say("seat number {seat} may not draw now", seat=move["seat"]))
            return drawn[0]
        return self.rules.move_from_json(dict(move), seats=self.seating.seats)

    def _decline(self, seat: int) -> list[Fact]:
        """Kems: the partner of a ``kems`` caller says no double."""
        cur = self._current()
        last = cur.events[-1] if cur.events else None
        if not cur.awaiting_double or not isinstance(last, Call) or cur.partner_of(last.seat) != seat:
            raise RemoteRejected(say("seat number {seat} has no double to decline", seat=seat))
        self._input({"op": "submit", "table": self.seating.table_of(seat), "move": {"seat": seat, "decline": True}})
        fact: Fact = {"kind": "move", "hand": self.hand_no, "move": {"seat": seat, "decline": True},
                      "board": [str(c) for c in cur.board], "stock": len(cur.stock)}
        return [self._log(fact), *self._close_hand()]

    # -- faults ----------------------------------------------------------------

    def pause(self, table: str) -> Fact:
        """A table's link dropped: everyone waits (docs/remote.md, "Faults")."""
        self.paused = self.paused | {table}
        self._input({"op": "pause", "table": table})
        return self._log({"kind": "pause", "tables": sorted(self.paused)})

    def resume(self, table: str) -> Fact:
        self.paused = self.paused - {table}
        self._input({"op": "resume", "table": table})
        return self._log({"kind": "resume" if not self.paused else "pause", "tables": sorted(self.paused)})

    def _input(self, entry: dict[str, Any]) -> None:
        self.inputs.append(entry)
        if self.on_input is not None:
            self.on_input(entry)

    def replay(self, inputs: list[dict[str, Any]]) -> None:
        """Apply a journal's inputs to a fresh authority (same game, seating,
        options and seed): the same facts as before the restart. Raises
        ValueError when an input does not apply (a journal of another match)."""
        if self.facts:
            raise ValueError("replay needs a fresh authority")
        hook, self.on_input = self.on_input, None
        try:
            for k, entry in enumerate(inputs):
                op = entry.get("op")
                if op == "start":
                    self.start()
                elif op == "submit":
                    self.submit(str(entry["table"]), entry["move"])
                elif op == "pause":
                    self.pause(str(entry["table"]))
                elif op == "resume":
                    self.resume(str(entry["table"]))
                else:
                    raise ValueError(f"journal entry {k}: unknown input {op!r}")
        except (RemoteRejected, KeyError) as exc:
            raise ValueError(f"the journal does not replay: {exc}") from None
        finally:
            self.on_input = hook

    def legal_for(self, table: str) -> list[dict[str, Any]]:
        """The moves the table's seats may make now, in record form (a draw
        without its tile): only the table's own pieces and public ones."""
        cur = self._current()
        if cur is None or self.paused:
            return []
        seats = self.seating.tables[table]
        out: list[dict[str, Any]] = []
        if self.rules.has_turns:
            movers = {cur.to_play} | (set(cur.openers) if not cur.line else set())
            for s in sorted(movers & seats):
                for m in cur.legal_moves(s):
                    claim = {"seat": s, "draw": True} if isinstance(m, Draw) else self.rules.move_to_json(m)
                    if claim not in out:
                        out.append(claim)
        else:
            for s in sorted(seats):
                out += [self.rules.move_to_json(e) for e in cur.legal_swaps(s) + cur.legal_calls(s)]
                if cur.awaiting_double and cur.legal_calls(s):
                    out.append({"seat": s, "decline": True})
            if not cur.is_over:
                out.append({"refresh": True})
        return out
