"""The table's voice (``--speech``): what the referee publishes, said aloud.

It listens to the event bus, so the referee never waits for it: the texts are
already in the table's language (the referee translates when it publishes),
and the :class:`~tablesense.outputs.speech.Announcer` queues them on its own
thread. Said aloud:

- every banner (``message`` events): a rejection's instruction, hand and
  match results, the deal and resume notices;
- whose turn it is, once the table has waited ``turn_pause`` seconds for that
  seat (dominoes: the seat to play; said once per turn);

and when a correction is cleared (the table matches again) whatever is still
queued is dropped (``mute_pending``): an instruction already followed is
never read out.
"""

from __future__ import annotations

import threading
from typing import Any

from tablesense.games.common import say
from tablesense.i18n import translate
from tablesense.outputs.events import EventBus, TableEvent
from tablesense.outputs.speech import Announcer


class TableVoice:
    """Feeds an :class:`Announcer` from a bus; ``close()`` detaches it."""

    def __init__(self, bus: EventBus, announcer: Announcer, turn_pause: float = 6.0) -> None:
        self.announcer = announcer
        self.lang = announcer.lang
        self.turn_pause = turn_pause
        self._timer: threading.Timer | None = None
        self._turn: tuple[Any, ...] | None = None
        self._lock = threading.Lock()
        self._remove = bus.add_listener(self._on_event)

    def _on_event(self, ev: TableEvent) -> None:
        data = ev.data
        if ev.kind == "message":
            text = str(data.get("text") or "")
            if text:
                self.announcer.say(text)
        elif ev.kind == "correction_cleared":
            self.announcer.mute_pending()
        elif ev.kind == "view":
            self._on_view(data)

    def _on_view(self, view: dict[str, Any]) -> None:
        to_play = view.get("to_play")
        key = (view.get("hand_no"), view.get("moves"), to_play)
        with self._lock:
            if key == self._turn:
                return
            self._turn = key
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if to_play is None or view.get("correction") or view.get("match_over"):
                return
            seats = view.get("seats") or []
            name = seats[to_play].get("name") if to_play < len(seats) else None
            if not name:
                return
            text = translate(say("{seat}, your turn", seat=str(name)), self.lang)
            timer = threading.Timer(self.turn_pause, self._say_turn, (key, text))
            timer.daemon = True
            self._timer = timer
            timer.start()

    def _say_turn(self, key: tuple[Any, ...], text: str) -> None:
        with self._lock:
            if key != self._turn:
                return
        self.announcer.say(text)

    def close(self) -> None:
        self._remove()
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
