"""A real table's link to the director: ``tablesense play --director ...``.

The refereed match is played on the table, so this is the table's line to
the director (:class:`~.table_link.DirectorLink`, which headless tables use
too) without computer players: the table's broker user and ACL, its durable
outbox (:mod:`tablesense.journal.outbox`, this table's rows even in a file
several tables share), Ed25519 signature, re-send with back-off until the
director's ``ack`` names the message's digest, the retained ``online``
status and the last-will ``offline``; and the table's live progress (hand,
score, whose turn, moves, a correction or pause) from its display's view. The table learns its match from the director's
retained assignment; when the referee's match ends, :meth:`TableReporter.report`
queues the signed result with the game record, and the table shows the
director's echo (the ``ack``) on its display as a ``message`` event. A host
restarted before the echo re-sends from the outbox as soon as it reconnects.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from .bridge import BrokerURL
from .results import nums, result_message
from .security import TableKey, badges_tapped
from .table_link import DirectorLink, Display


class ReportError(Exception):
    """The result cannot be reported (no assignment, the record does not fit the match)."""


class TableReporter:
    """See the module docstring. ``start()``, ``assignment()``, ``report(record)``,
    ``wait_echo(key)``, ``close()``."""

    def __init__(
        self,
        number: int,
        key: TableKey,
        journal_path: Path,
        broker: BrokerURL,
        *,
        bus: Display | None = None,
        resend_interval: float = 0.5,
    ) -> None:
        self.number = number
        self.bus = bus
        self.reported: dict[str, Any] | None = None
        """The last result this host reported: event, round, match, revision and
        each side's badges (what a confirmation must show)."""
        self.table = DirectorLink(number, key, journal_path, broker, bus=bus, resend_interval=resend_interval)

    def attach(self, bus: Display) -> None:
        """Show the match and the director's echo on this display (the table's EventBus),
        and relay the display's public ``view`` to the director's spectator pages (tournament.live)."""
        self.bus = bus
        self.table.bus = bus
        listen = getattr(bus, "add_listener", None)
        if listen is not None:
            listen(self._relay_view)

    def _relay_view(self, event: Any) -> None:
        if getattr(event, "kind", None) == "view" and isinstance(getattr(event, "data", None), dict):
            self.table.publish_view(event.data)

    def start(self) -> TableReporter:
        self.table.start()
        return self

    def close(self) -> None:
        self.table.close()

    def __enter__(self) -> TableReporter:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ the match

    def assignment(self, timeout: float = 0.0, stop: threading.Event | None = None) -> dict[str, Any] | None:
        """The director's retained announcement for this table (waits up to ``timeout``)."""
        deadline = time.monotonic() + timeout
        while True:
            a = self.table.outbox.assignment()
            if a or time.monotonic() >= deadline or (stop is not None and stop.is_set()):
                return a or None
            time.sleep(0.05)

    def current_match(self, timeout: float = 0.0, stop: threading.Event | None = None) -> dict[str, Any] | None:
        """The first match of the announcement the table has not reported yet."""
        a = self.assignment(timeout, stop)
        if a is None:
            return None
        for m in a.get("matches", []):
            state = self.table.outbox.match(int(a["event"]), int(m["match"]))
            if not m.get("done") and (state is None or state[0] == "playing"):
                return m
        return None

    def show_match(self, m: dict[str, Any]) -> None:
        """Put the announced match on the display (names, seats, variant, target or clock)."""
        a = self.assignment() or {}
        self.table.display = {"round": a.get("round"), "match": m["match"]}  # what its live progress names
        if self.bus is None:
            return
        self.bus.publish(
            "tournament_match", match=m["match"], entrants=[e["name"] for e in m["entrants"]],
            seats=m["seats"], variant=m["variant"], target=m["options"].get("target"),
            time_limit_s=m.get("time_limit_s"), best_of=m.get("best_of", 1),
        )
        names = " v ".join(e["name"] for e in m["entrants"])
        self.bus.publish("message", text=f"tournament match {m['match']}: {names}", level="info")

    def report(self, record: dict[str, Any], match_id: int | None = None) -> str:
        """Queue the signed result of the finished match (one game record) in the
        durable outbox and send it; returns the outbox key to wait on."""
        a = self.assignment()
        if a is None:
            raise ReportError("the director has not announced a match for this table")
        matches = [m for m in a.get("matches", []) if match_id is None or int(m["match"]) == match_id]
        m = self.current_match() if match_id is None else (matches[0] if matches else None)
        if m is None:
            raise ReportError(f"no open match for table {self.number} in round {a.get('round')}")
        if record.get("variant") not in (None, m["variant"]):
            raise ReportError(f"the table played {record.get('variant')}, the match is {m['variant']}")
        ev, rnd, mid = int(a["event"]), int(a["round"]), int(m["match"])
        j = self.table.outbox
        revision = int(j.get(f"revision/{ev}/{rnd}", 0)) + 1
        j.put(f"revision/{ev}/{rnd}", revision)
        games = [record]
        j.save_match(ev, mid, "reporting", games, revision)
        result = result_message(ev, rnd, self.number, revision, m, games)
        total = result["score"]
        key = self.table.send(result)
        self.reported = {"event": ev, "round": rnd, "match": mid, "revision": revision,
                         "badges": [list(e.get("badges") or []) for e in m["entrants"]],  # digests
                         "badge_salt": str(m.get("badge_salt", "")),
                         "confirm": str(m.get("confirm", "badges")),
                         "seat_sides": {int(s["seat"]): int(s["entrant"]) for s in m.get("seats", [])}}
        if self.bus is not None:
            self.bus.publish("message", text=f"result {nums(total)} sent to the director", level="info")
        return key

    def wait_echo(self, key: str, timeout: float | None = None, stop: threading.Event | None = None) -> str | None:
        """Wait for the director's ``ack`` of ``key`` (re-sending meanwhile); show it
        on the display. None when ``timeout`` passed or ``stop`` was set first (the
        outbox keeps the message: the next start re-sends it)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            status = self.table.outbox.ack_status(key)
            if status is not None:
                break
            if (stop is not None and stop.is_set()) or (deadline is not None and time.monotonic() >= deadline):
                return None
            time.sleep(0.05)
        kind, _ev, _rnd, _table, last = key.split("/")
        if kind == "result":
            ev = int(key.split("/")[1])
            for mid, (_state, games, rev) in self._matches_reporting(int(last)):
                self.table.outbox.save_match(ev, mid, "done" if status != "refused" else "refused", games, rev)
        if self.bus is not None:
            level = "error" if status == "refused" else "info"
            what = "result" if kind == "result" else ("confirmation" if kind == "confirm" else "check-in")
            why = self.reason(key) if status == "refused" else None
            text = (why if why and kind == "checkin"  # e.g. "X plays at table 2, not at table 1"
                    else f"the director refused the {what}: {why or 'call the director'}" if status == "refused"
                    else f"the director {status} the {what}")
            self.bus.publish("message", text=text, level=level, director=status, key=key)
        return status

    def confirmation(self, seen: set[str]) -> list[str] | None:
        """The badges to send as the confirmation of the last reported result,
        once ``seen`` (tag UIDs read on the table, hex) holds one of each side's;
        None while a side is missing."""
        r = self.reported
        if r is None:
            return None
        mine = badges_tapped(seen, r["badges"], str(r.get("badge_salt", "")))
        first: dict[int, str] = {}
        for uid, side in sorted(mine.items()):
            first.setdefault(side, uid)
        if len(first) < len(r["badges"]):
            return None
        return [first[side] for side in range(len(r["badges"]))]

    @staticmethod
    def match_taps(m: dict[str, Any], seen: set[str]) -> dict[str, int]:
        """Which of ``seen`` (UIDs read on the table) are badges of announced
        match ``m``'s sides: UID -> side. The assignment carries each side's
        badges only as salted digests (security.badge_digest)."""
        return badges_tapped(seen, [e.get("badges") or [] for e in m["entrants"]], str(m.get("badge_salt", "")))

    def confirm_mode(self) -> str:
        """How the event confirms the last reported result: ``badges``, ``buttons`` or ``director``."""
        return str((self.reported or {}).get("confirm", "badges"))

    def side_of_seat(self, seat: int) -> int | None:
        """The side (entrant of the match, 0-based) sitting at ``seat``, from the announced seat plan."""
        return (self.reported or {}).get("seat_sides", {}).get(seat)

    def sides(self) -> int:
        return len((self.reported or {}).get("badges", []))

    def confirm_buttons(self, accepted: list[int], refused: list[int]) -> str:
        """Queue the sides' seat-button answer to the last reported result (``buttons`` events)."""
        r = self.reported
        if r is None:
            raise ReportError("no result to confirm")
        return self.table.send({"kind": "confirm", "event": r["event"], "round": r["round"], "table": self.number,
                                 "revision": r["revision"], "match": r["match"],
                                 "accepted": sorted(accepted), "refused": sorted(refused)})

    def confirm(self, badges: list[str]) -> str:
        """Queue the players' confirmation (badge taps) of the last reported result."""
        r = self.reported
        if r is None:
            raise ReportError("no result to confirm")
        return self.table.send({"kind": "confirm", "event": r["event"], "round": r["round"], "table": self.number,
                                 "revision": r["revision"], "match": r["match"], "badges": list(badges)})

    def check_in(self, m: dict[str, Any], badges: list[str], accepted: list[int]) -> str:
        """Queue a check-in for the announced match ``m``: the badges read on the
        table and the sides (0-based) whose seat button was pressed. The director
        refuses a badge of a player who belongs at another table, naming it
        (:meth:`reason`); the key is per match, so a refused check-in is forgotten
        before the next one is sent."""
        a = self.assignment()
        if a is None:
            raise ReportError("the director has not announced a match for this table")
        key = f"checkin/{int(a['event'])}/{int(a['round'])}/{self.number}/{int(m['match'])}"
        if self.table.outbox.ack_status(key) is not None:
            self.table.outbox.forget(key)
        return self.table.send({"kind": "checkin", "event": int(a["event"]), "round": int(a["round"]),
                                 "table": self.number, "match": int(m["match"]),
                                 "badges": sorted(badges), "accepted": sorted(accepted)})

    def reason(self, key: str) -> str | None:
        """Why the director refused ``key`` (its ack's reason), if it did."""
        r = self.table.outbox.get(f"reason/{key}")
        return None if r is None else str(r)

    def _matches_reporting(self, revision: int) -> list[tuple[int, tuple[str, list[dict[str, Any]], int | None]]]:
        a = self.assignment() or {}
        out = []
        for m in a.get("matches", []):
            st = self.table.outbox.match(int(a["event"]), int(m["match"]))
            if st is not None and st[0] == "reporting" and st[2] == revision:
                out.append((int(m["match"]), st))
        return out

    def pending(self) -> int:
        """Messages the director has not acknowledged yet."""
        return len(self.table.outbox.pending())

