"""A headless table: plays its assigned matches with computer players and
reports them to the director over MQTT, the way a real table's referee would.

Its line to the director is the real table's (:class:`~.table_link.DirectorLink`):
the durable outbox (:mod:`tablesense.journal.outbox`) keeps the round
assignment, the finished hands of the match in play, and the messages
(check-in, result, confirmation) the director has not yet acknowledged. A table that crashes and restarts resumes from its journal:
finished hands are replayed into the engine, the interrupted hand is dealt
again, and every unacknowledged message is re-sent until the director's
``ack`` naming that message's digest arrives. The table acts only on the
director's echo: it starts a match only from the retained assignment, and
asks the players to confirm (badge taps, simulated) only after the director
acknowledged the result.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tablesense.games.registry import find_game, names

from . import protocol as proto
from .bridge import BrokerURL
from .results import result_message, score_of, winner_side
from .security import TableKey
from .table_link import Crashed, DirectorLink, Display

__all__ = ["Crashed", "Display", "HeadlessTable"]

log = logging.getLogger(__name__)

class HeadlessTable(DirectorLink):
    """One simulated table. ``start()`` connects and plays; ``crash()`` drops it
    off mid-match (no clean disconnect: the broker publishes its last will);
    ``start()`` again resumes from the outbox."""

    def __init__(
        self,
        number: int,
        key: TableKey,
        journal_path: Path,
        broker: BrokerURL,
        *,
        seed: int = 0,
        player: str = "greedy",
        resend_interval: float = 0.5,
        heartbeat_interval: float = 1.0,
        move_delay: float = 0.0,
        on_move: Callable[[HeadlessTable], None] | None = None,
        client_id: str | None = None,
        bus: Display | None = None,
        say: Callable[[str], None] | None = None,
        badges: Sequence[str] = (),
    ) -> None:
        super().__init__(number, key, journal_path, broker, resend_interval=resend_interval,
                         heartbeat_interval=heartbeat_interval, client_id=client_id, bus=bus, say=say)
        self.badges = [str(b) for b in badges]
        """The badges the simulated players bring to the table (UIDs): the
        assignment names each side's only as salted digests, so a headless
        table taps those of its players that match (none given: nobody taps)."""
        self.seed = seed
        self.player = player
        self.move_delay = move_delay
        self.on_move = on_move
        self.playing = False  # true while a hand is being played (for fault injection)

    def _more_threads(self) -> list[threading.Thread]:
        return [threading.Thread(target=self._guard(self._play_loop), name=f"table-{self.number}-play", daemon=True)]

    # --------------------------------------------------------------- play

    def _play_loop(self) -> None:
        while not self._stop.is_set():
            a = self.outbox.assignment()
            worked = False
            if a:
                for m in a.get("matches", []):
                    if self._stop.is_set():
                        raise Crashed()
                    state = self.outbox.match(int(a["event"]), int(m["match"]))
                    if m.get("done") or (state is not None and state[0] in ("done", "failed")):
                        continue
                    try:
                        self._run_match(a, m)
                    except Crashed:
                        raise
                    except Exception as exc:  # this match cannot be played here: say so, go on
                        log.exception("table %d: match %s cannot be played", self.number, m.get("match"))
                        self.outbox.save_match(int(a["event"]), int(m["match"]), "failed", [])
                        if self.bus is not None:
                            self.bus.publish("message", text=f"call the director: {exc}", level="error")
                    worked = True
            if not worked:
                self._wake.wait(0.2)
                self._wake.clear()

    def _taps(self, m: dict[str, Any]) -> dict[str, int]:
        """The players' badges (UID -> side) that match ``m``'s sides' digests."""
        from .security import badges_tapped

        return badges_tapped(self.badges, [e.get("badges") or [] for e in m["entrants"]], str(m.get("badge_salt", "")))

    def _run_match(self, a: dict[str, Any], m: dict[str, Any]) -> None:
        ev, rnd, mid = int(a["event"]), int(a["round"]), int(m["match"])
        state = self.outbox.match(ev, mid)
        self.display = {
            "round": rnd, "match": mid, "entrants": [e["name"] for e in m["entrants"]],
            "seats": m["seats"], "variant": m["variant"], "target": m["options"].get("target"),
            "time_limit_s": m.get("time_limit_s"), "best_of": m.get("best_of", 1),
        }
        if self.bus is not None:
            # The table's display shows the match: names, seats, variant, target or clock.
            self.bus.publish("tournament_match", **self.display)
        if state is None:
            badges = sorted(self._taps(m))
            self.send({"kind": "checkin", "event": ev, "round": rnd, "table": self.number, "match": mid, "badges": badges})
            self.outbox.save_match(ev, mid, "playing", [])
            state = ("playing", [], None)
        phase, games, revision = state
        if phase == "playing":
            self.playing = True
            try:
                games = self._play(m, games, ev, mid)
            finally:
                self.playing = False
            revision = int(self.outbox.get(f"revision/{ev}/{rnd}", 0)) + 1
            self.outbox.put(f"revision/{ev}/{rnd}", revision)
            self.outbox.save_match(ev, mid, "reporting", games, revision)
            phase = "reporting"
        assert revision is not None
        result = result_message(ev, rnd, self.number, revision, m, games)
        key = self.send(result) if phase == "reporting" else proto.message_key(result)
        status = self.wait_ack(key)
        if self.bus is not None:
            self.bus.publish("tournament_result", match=mid, score=result["score"], winner=result["winner"],
                             status=status, confirm=status != "refused")
        if status == "refused":
            log.warning("table %d: result of match %d refused", self.number, mid)
            self.outbox.save_match(ev, mid, "done", games, revision)
            return
        mode = m.get("confirm", "badges")
        if mode == "director":
            # The director confirms from the console; the table's part is done.
            self.outbox.save_match(ev, mid, "done", games, revision)
            return
        # The director acknowledged: ask both sides to confirm (a badge tap, or
        # each side's seat button accepting the score the table shows).
        self.outbox.save_match(ev, mid, "confirming", games, revision)
        confirm: dict[str, Any] = {"kind": "confirm", "event": ev, "round": rnd, "table": self.number,
                                   "revision": revision, "match": mid}
        if mode == "buttons":
            confirm["accepted"] = list(range(len(m["entrants"])))
        else:
            first: dict[int, str] = {}
            for uid, side in sorted(self._taps(m).items()):
                first.setdefault(side, uid)
            confirm["badges"] = [first[side] for side in sorted(first)]
        ckey = self.send(confirm)
        self.wait_ack(ckey)
        self.outbox.save_match(ev, mid, "done", games, revision)

    def _play(self, m: dict[str, Any], games: list[dict[str, Any]], ev: int, mid: int) -> list[dict[str, Any]]:
        """Play (or resume) the match; returns one game record per game of the series."""
        from tablesense.games.dominoes import DominoMatch

        best_of = int(m.get("best_of", 1))
        started = time.monotonic()
        limit = m.get("time_limit_s")
        games = list(games)
        while True:
            if games and games[-1].get("x-complete"):
                scores = [score_of(g) for g in games]
                if best_of == 1 or winner_side(games, scores, best_of) is not None:
                    return games
                games.append({"x-complete": False})
            if not games:
                games.append({"x-complete": False})
            gi = len(games) - 1
            if not find_game(m.get("game") or names()[0]).has_turns:  # simultaneous play: Kems' loop
                games[gi] = self._play_kems(m, games, gi, ev, mid)
                if limit and time.monotonic() - started >= float(limit):
                    return games
                continue
            match = DominoMatch(m["variant"], {"target": m["options"]["target"]}, seats=len(m["seats"]))
            _restore(match, games[gi])
            rng = random.Random(f"{self.seed}:{mid}:{gi}:{len(match.hands)}:{self._starts}")
            players = _players(self.player, len(m["seats"]))
            while not match.is_over:
                hand = match.new_hand(rng=rng)
                moves = 0
                while not hand.is_over:
                    if self._stop.is_set():
                        raise Crashed()
                    seat = hand.to_play
                    hand.play(players[seat].choose(hand, seat, rng))
                    moves += 1
                    self.publish_live(len(match.hands) + 1, match.score, [hand.count(s) for s in range(hand.seats)],
                                      turn=None if hand.is_over else hand.to_play, moves=moves)
                    if self.on_move is not None:
                        self.on_move(self)
                    if self.move_delay:
                        time.sleep(self.move_delay)
                match.finish_hand()
                self.publish_live(len(match.hands), match.score, None, force=True,
                                   state="finished" if match.is_over else "playing")
                rec = match.to_record()
                rec["x-complete"] = bool(match.is_over)
                games[gi] = rec
                self.outbox.save_match(ev, mid, "playing", games)
                if limit and time.monotonic() - started >= float(limit) and not match.is_over:
                    rec["x-complete"] = True
                    rec["x-stopped"] = "time limit"
                    games[gi] = rec
                    self.outbox.save_match(ev, mid, "playing", games)
                    return games


    def _play_kems(self, m: dict[str, Any], games: list[dict[str, Any]], gi: int, ev: int, mid: int) -> dict[str, Any]:
        """One Kems game: every seat polled in random order each tick, a tick where
        nobody acts refreshes the board (games.kems_players.play_round); a round
        that stalls is abandoned and dealt again. Journaled after every round."""
        from tablesense.games.kems import Card as KCard
        from tablesense.games.kems import KemsMatch, event_from_json
        from tablesense.games.kems_players import make_player, play_round

        seats = len(m["seats"])
        match = KemsMatch({"target": m["options"]["target"]}, seats=seats)
        for r in games[gi].get("hands", []):
            rnd = match.new_hand(deal=[[KCard.parse(c) for c in h] for h in r["deal"]],
                                  board=[KCard.parse(c) for c in r["board"]], stock=[KCard.parse(c) for c in r["stock"]])
            for e in r["events"]:
                rnd.play(event_from_json(e))
            match.finish_hand()
        rng = random.Random(f"{self.seed}:{mid}:{gi}:{len(match.hands)}:{self._starts}")
        players = [make_player("greedy") for _ in range(seats)]
        while not match.is_over:
            if self._stop.is_set():
                raise Crashed()
            rnd = match.new_hand(rng)
            if play_round(rnd, players, rng):
                match.finish_hand()
                self.publish_live(len(match.hands), match.score, None, force=True,
                                   state="finished" if match.is_over else "playing")
                rec = match.to_record()
                rec["x-complete"] = bool(match.is_over)
                games[gi] = rec
                self.outbox.save_match(ev, mid, "playing", games)
            else:
                match.abandon_hand()
            if self.on_move is not None:
                self.on_move(self)
            if self.move_delay:
                time.sleep(self.move_delay)
        return games[gi]


def _restore(match: Any, record: dict[str, Any]) -> None:
    """Replay the finished hands of a journaled record into a fresh match."""
    from tablesense.games.dominoes import Tile, move_from_json

    for h in record.get("hands", []):
        deal = [[Tile.parse(t) for t in seat] for seat in h["deal"]]
        boneyard = [Tile.parse(t) for t in h.get("boneyard", [])] or None
        hand = match.new_hand(deal=deal, boneyard=boneyard)
        for mv in h["moves"]:
            hand.play(move_from_json(mv))
        match.finish_hand()


def _players(kind: str, seats: int) -> list[Any]:
    """Computer players from games.dominoes_players (CONTRACTS section 1)."""
    try:
        from tablesense.games import dominoes_players as dp
    except ImportError:  # the bots' module is optional for the director: play the heaviest tile
        return [_HeaviestTile() for _ in range(seats)]
    cls = {"greedy": dp.GreedyPlayer, "random": dp.RandomPlayer}.get(kind, dp.GreedyPlayer)
    return [cls() for _ in range(seats)]


class _HeaviestTile:
    """Plays the legal move with the most pips (the classic beginner's rule)."""

    def choose(self, hand: Any, seat: int, rng: random.Random) -> Any:
        moves = hand.legal_moves(seat)
        return max(moves, key=lambda mv: (getattr(getattr(mv, "tile", None), "pips", -1), rng.random()))
