"""Seat GPIO: turn LEDs and buttons on the Raspberry Pi header, or simulated.

Each seat has a turn LED, a seat button and (Kems) a call button; the table has
a referee button. They sit behind a small device layer in gpiozero's manner:

- a **backend** (the pin factory) owns the pins and the clock:
  :class:`RPiGPIOBackend` drives the ``RPi.GPIO`` module (on a Pi 5 that module
  comes from the ``rpi-lgpio`` package, which keeps the same API), and
  :class:`SimBackend` is a strict, drivable simulation for everything that is
  not a Pi (tests, the demo, a laptop). :func:`make_backend` picks one from
  ``TABLESENSE_GPIO=rpi|sim`` or an explicit name;
- **devices** (:class:`LED`, :class:`Button`) take a backend and a BCM pin;
  ``close()`` is idempotent, they are context managers, and a closed device
  raises :class:`DeviceClosed`;
- :class:`TableGPIO` builds every seat's devices from the table geometry, lights
  the turn LEDs from the event bus's ``view`` events and reports debounced
  button presses as :class:`ButtonEvent` to the referee.

Buttons are debounced in software, the same way on every backend (a press is
accepted once the contact has been quiet for ``debounce`` seconds), rather than
with ``RPi.GPIO``'s ``bouncetime``, which drops the *release* edge that follows
within the window and differs between RPi.GPIO and rpi-lgpio.
Buttons are wired to ground with the internal pull-up, so pressed reads low.
"""

from __future__ import annotations

import logging
import os
import platform
import sys
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

from tablesense.i18n import N_
from tablesense.outputs.clock import ManualScheduler, Scheduler, ThreadScheduler, TimerHandle
from tablesense.outputs.events import EventBus, TableEvent

__all__ = [
    "LED",
    "Button",
    "ButtonEvent",
    "DeviceClosed",
    "GPIOBackend",
    "GPIOError",
    "ManualScheduler",
    "PinInUse",
    "PinModeError",
    "RPiGPIOBackend",
    "SeatIO",
    "SimBackend",
    "TableGPIO",
    "ThreadScheduler",
    "LONG_PRESS_S",
    "forward_buttons",
    "make_backend",
]

log = logging.getLogger(__name__)

ENV_VAR = "TABLESENSE_GPIO"
BACKEND_NAMES = ("rpi", "sim")
DEFAULT_DEBOUNCE_S = 0.03

#: A seat button held this long is a long press (the coach's suggestion,
#: issue 19): long enough that nobody does it by accident while passing, short
#: enough that asking does not feel like waiting.
LONG_PRESS_S = 1.0


# --------------------------------------------------------------------------- errors


class GPIOError(RuntimeError):
    """A GPIO operation failed (no access to the pins, a missing module, ...)."""


class DeviceClosed(GPIOError):
    """The device (or its backend) was closed."""


class PinInUse(GPIOError, ValueError):
    """A pin already claimed by another device; the message names the holder."""


class PinModeError(GPIOError, ValueError):
    """A pin used in the wrong direction (writing an input, reading an unset pin)."""


# --------------------------------------------------------------------------- backends

EdgeCallback = Callable[[int], None]


class GPIOBackend(ABC):
    """A pin factory: owns pins (claims, directions) and the clock.

    Subclasses must implement ``_setup_output``, ``_setup_input``, ``_write``,
    ``_read``, ``_watch``, ``_release`` and may override ``_close``. The base
    enforces one owner per pin and that closed backends refuse work.
    """

    name: str = "abstract"

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self._owners: dict[int, str] = {}
        self._modes: dict[int, Literal["in", "out"]] = {}
        self._lock = threading.RLock()
        self._closed = False

    # public API used by devices ------------------------------------------------

    def claim(self, pin: int, owner: str) -> None:
        self._check_open()
        if not isinstance(pin, int) or isinstance(pin, bool) or not 0 <= pin <= 27:
            raise PinModeError(f"{owner}: BCM pin must be an integer 0..27, got {pin!r}")
        with self._lock:
            holder = self._owners.get(pin)
            if holder is not None:
                raise PinInUse(f"GPIO{pin} is already used by {holder}; {owner} cannot take it")
            self._owners[pin] = owner

    def setup_output(self, pin: int, initial: bool = False) -> None:
        self._check_open()
        self._setup_output(pin, initial)
        self._modes[pin] = "out"

    def setup_input(self, pin: int, pull_up: bool = True) -> None:
        self._check_open()
        self._setup_input(pin, pull_up)
        self._modes[pin] = "in"

    def write(self, pin: int, value: bool) -> None:
        self._check_open()
        if self._modes.get(pin) != "out":
            raise PinModeError(f"GPIO{pin} is not set up as an output")
        self._write(pin, bool(value))

    def read(self, pin: int) -> bool:
        self._check_open()
        if pin not in self._modes:
            raise PinModeError(f"GPIO{pin} is not set up")
        return self._read(pin)

    def watch(self, pin: int, callback: EdgeCallback) -> None:
        """Call ``callback(pin)`` on every edge of an input (any thread)."""
        self._check_open()
        if self._modes.get(pin) != "in":
            raise PinModeError(f"GPIO{pin} is not set up as an input")
        self._watch(pin, callback)

    def release(self, pin: int) -> None:
        """Give a pin back (idempotent): inputs stop reporting, outputs go low."""
        with self._lock:
            if pin not in self._owners:
                return
            del self._owners[pin]
            mode = self._modes.pop(pin, None)
        if not self._closed and mode is not None:
            self._release(pin, mode)

    def owner(self, pin: int) -> str | None:
        return self._owners.get(pin)

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Release every pin and stop the clock (idempotent)."""
        with self._lock:
            if self._closed:
                return
            pins = list(self._owners)
        for pin in pins:
            self.release(pin)
        with self._lock:
            self._closed = True
        try:
            self._close()
        finally:
            stop = getattr(self.scheduler, "stop", None)
            if callable(stop):
                stop()

    def __enter__(self) -> GPIOBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise DeviceClosed(f"the {self.name} GPIO backend is closed")

    # subclass hooks ---------------------------------------------------------------

    @abstractmethod
    def _setup_output(self, pin: int, initial: bool) -> None: ...

    @abstractmethod
    def _setup_input(self, pin: int, pull_up: bool) -> None: ...

    @abstractmethod
    def _write(self, pin: int, value: bool) -> None: ...

    @abstractmethod
    def _read(self, pin: int) -> bool: ...

    @abstractmethod
    def _watch(self, pin: int, callback: EdgeCallback) -> None: ...

    @abstractmethod
    def _release(self, pin: int, mode: Literal["in", "out"]) -> None: ...

    def _close(self) -> None:
        return None


class RPiGPIOBackend(GPIOBackend):
    """Pins through the ``RPi.GPIO`` module (BCM numbering).

    The ``pi`` extra installs ``rpi-lgpio``: it provides the ``RPi.GPIO``
    module on top of lgpio (the gpiochip device), on the Pi 4 and Pi 5 kernels
    alike, with wheels for aarch64. ``module`` injects the module (tests pass a
    recording fake).
    """

    name = "rpi"

    def __init__(
        self, module: ModuleType | Any | None = None, scheduler: Scheduler | None = None
    ) -> None:
        super().__init__(scheduler or ThreadScheduler())
        if module is None:
            try:
                import RPi.GPIO as module  # type: ignore[import-not-found]
            except ImportError as exc:
                raise GPIOError(
                    N_("the RPi.GPIO module is not installed: install tablesense with its "
                       "`pi` extra (rpi-lgpio, for every Pi: scripts/install-pi.sh does); "
                       "elsewhere use TABLESENSE_GPIO=sim")
                ) from exc
            except RuntimeError as exc:  # RPi.GPIO raises this when not on a Pi
                raise GPIOError(f"RPi.GPIO cannot run here: {exc}") from exc
            except OSError as exc:  # lgpio makes its notification pipe in the working folder
                raise GPIOError(
                    f"lgpio cannot make its notification pipe in {os.getcwd()}: {exc} "
                    "(start tablesense in a folder this user can write, as the service does, "
                    "or set LG_WD to one)"
                ) from exc
        self.gpio = module
        # rpi-lgpio lets lgpio's own exception through (a pin the kernel holds:
        # "GPIO busy"; no access to /dev/gpiochip*), RPi.GPIO raises RuntimeError.
        lgpio = sys.modules.get("lgpio")
        lgpio_error = getattr(lgpio, "error", None)
        self._errors: tuple[type[Exception], ...] = (RuntimeError,)
        if isinstance(lgpio_error, type) and issubclass(lgpio_error, Exception):
            self._errors += (lgpio_error,)
        self._call("setwarnings", False)
        self._call("setmode", module.BCM)

    def _call(self, fn: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return getattr(self.gpio, fn)(*args, **kwargs)
        except self._errors as exc:
            hint = ""
            if "access" in str(exc).lower() or "permission" in str(exc).lower():
                hint = " (add the user to the 'gpio' group, see docs/display.md)"
            raise GPIOError(f"RPi.GPIO.{fn}{args!r} failed: {exc}{hint}") from exc

    def _setup_output(self, pin: int, initial: bool) -> None:
        g = self.gpio
        self._call("setup", pin, g.OUT, initial=g.HIGH if initial else g.LOW)

    def _setup_input(self, pin: int, pull_up: bool) -> None:
        g = self.gpio
        self._call("setup", pin, g.IN, pull_up_down=g.PUD_UP if pull_up else g.PUD_DOWN)

    def _write(self, pin: int, value: bool) -> None:
        g = self.gpio
        self._call("output", pin, g.HIGH if value else g.LOW)

    def _read(self, pin: int) -> bool:
        return bool(self._call("input", pin))

    def _watch(self, pin: int, callback: EdgeCallback) -> None:
        # No bouncetime: debouncing is ours (see the module docstring).
        self._call("add_event_detect", pin, self.gpio.BOTH, callback=lambda channel: callback(pin))

    def _release(self, pin: int, mode: Literal["in", "out"]) -> None:
        if mode == "in":
            self._call("remove_event_detect", pin)
        self._call("cleanup", pin)

    def _close(self) -> None:
        self._call("cleanup")


@dataclass
class _SimPin:
    mode: Literal["in", "out"]
    level: bool
    pull_up: bool = True
    callback: EdgeCallback | None = None


class SimBackend(GPIOBackend):
    """A simulated header: strict (the same rules as the real one) and drivable.

    Tests drive inputs with :meth:`drive`, :meth:`press`, :meth:`release_button`
    and :meth:`bounce`, read outputs with :meth:`level`, and see every output
    change in :attr:`history` as ``(time, pin, level)``. With a
    :class:`ManualScheduler` (the default) time moves only by ``advance``.
    """

    name = "sim"

    def __init__(self, scheduler: Scheduler | None = None) -> None:
        super().__init__(scheduler or ManualScheduler())
        self.pins: dict[int, _SimPin] = {}
        self.history: list[tuple[float, int, bool]] = []

    def _setup_output(self, pin: int, initial: bool) -> None:
        self.pins[pin] = _SimPin("out", initial)
        self.history.append((self.scheduler.now(), pin, initial))

    def _setup_input(self, pin: int, pull_up: bool) -> None:
        self.pins[pin] = _SimPin("in", pull_up, pull_up)

    def _write(self, pin: int, value: bool) -> None:
        p = self.pins[pin]
        if p.level != value:
            p.level = value
            self.history.append((self.scheduler.now(), pin, value))

    def _read(self, pin: int) -> bool:
        return self.pins[pin].level

    def _watch(self, pin: int, callback: EdgeCallback) -> None:
        self.pins[pin].callback = callback

    def _release(self, pin: int, mode: Literal["in", "out"]) -> None:
        self.pins.pop(pin, None)

    # driving -------------------------------------------------------------------

    def level(self, pin: int) -> bool:
        """The level of a pin as the outside world sees it."""
        p = self.pins.get(pin)
        if p is None:
            raise PinModeError(f"GPIO{pin} is not set up")
        return p.level

    def drive(self, pin: int, level: bool) -> None:
        """Set an input's level from outside; an edge calls its watcher."""
        self._check_open()
        p = self.pins.get(pin)
        if p is None or p.mode != "in":
            raise PinModeError(f"GPIO{pin} is not an input, cannot drive it")
        if p.level == level:
            return
        p.level = level
        if p.callback is not None:
            p.callback(pin)

    def press(self, pin: int) -> None:
        """Close the contact (pull-up wiring: the pin goes low)."""
        self.drive(pin, not self.pins[pin].pull_up if pin in self.pins else False)

    def release_button(self, pin: int) -> None:
        """Open the contact (the pin returns to its pull)."""
        self.drive(pin, self.pins[pin].pull_up if pin in self.pins else True)

    def bounce(
        self, pin: int, final_pressed: bool, edges: int = 6, interval: float = 0.002
    ) -> None:
        """A bouncing contact: ``edges`` alternating edges ``interval`` apart,
        ending pressed or released; needs a :class:`ManualScheduler`."""
        if not isinstance(self.scheduler, ManualScheduler):
            raise TypeError("bounce() needs the ManualScheduler clock")
        if pin not in self.pins:
            raise PinModeError(f"GPIO{pin} is not set up")
        pressed_level = not self.pins[pin].pull_up
        target = pressed_level if final_pressed else not pressed_level
        # Start with the edge toward the target, alternate, and end on the target.
        levels = [target if (edges - 1 - i) % 2 == 0 else not target for i in range(edges)]
        for i, lvl in enumerate(levels):
            self.scheduler.advance(0 if i == 0 else interval)
            self.drive(pin, lvl)

    def advance(self, dt: float) -> None:
        if not isinstance(self.scheduler, ManualScheduler):
            raise TypeError("advance() needs the ManualScheduler clock")
        self.scheduler.advance(dt)

    def reset(self) -> None:
        """Forget the output history (pins stay as they are)."""
        self.history.clear()


def make_backend(name: str | None = None) -> GPIOBackend:
    """The backend named ``name`` or by ``TABLESENSE_GPIO`` (``rpi`` or ``sim``).

    With neither, use RPi.GPIO on an ARM Linux machine where the module imports,
    else the simulation (with a warning on ARM, where a missing module is more
    likely a mistake than a laptop).
    """
    chosen = (name or os.environ.get(ENV_VAR, "")).strip().lower()
    if chosen == "rpi":
        return RPiGPIOBackend()
    if chosen == "sim":
        return SimBackend(ThreadScheduler())
    if chosen:
        raise GPIOError(
            f"unknown GPIO backend {chosen!r} (from {ENV_VAR}?): use one of {', '.join(BACKEND_NAMES)}"
        )
    if platform.machine() in ("aarch64", "armv7l"):
        try:
            return RPiGPIOBackend()
        except GPIOError as exc:
            log.warning("seat GPIO falls back to the simulation: %s", exc)
    return SimBackend(ThreadScheduler())


# --------------------------------------------------------------------------- devices


class _Device:
    def __init__(self, backend: GPIOBackend, pin: int, name: str) -> None:
        self.backend = backend
        self.pin = pin
        self.name = name
        self._closed = False
        backend.claim(pin, name)

    @property
    def closed(self) -> bool:
        return self._closed or self.backend.closed

    def _check(self) -> None:
        if self.closed:
            raise DeviceClosed(f"{self.name} is closed")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.backend.release(self.pin)

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<{type(self).__name__} {self.name!r} GPIO{self.pin} {state}>"


class LED(_Device):
    """A LED on an output pin. A new command cancels a running blink."""

    def __init__(
        self, backend: GPIOBackend, pin: int, *, active_high: bool = True, name: str | None = None
    ) -> None:
        super().__init__(backend, pin, name or f"LED(GPIO{pin})")
        self.active_high = active_high
        self._lit = False
        self._blink: TimerHandle | None = None
        self._generation = 0
        self._lock = threading.RLock()
        backend.setup_output(pin, initial=not active_high)

    @property
    def is_lit(self) -> bool:
        return self._lit

    def _set(self, lit: bool) -> None:
        self._lit = lit
        self.backend.write(self.pin, lit == self.active_high)

    def _cancel_blink(self) -> None:
        self._generation += 1
        if self._blink is not None:
            self._blink.cancel()
            self._blink = None

    def on(self) -> None:
        with self._lock:
            self._check()
            self._cancel_blink()
            self._set(True)

    def off(self) -> None:
        with self._lock:
            self._check()
            self._cancel_blink()
            self._set(False)

    def toggle(self) -> None:
        with self._lock:
            self._check()
            self._cancel_blink()
            self._set(not self._lit)

    @property
    def value(self) -> bool:
        return self._lit

    @value.setter
    def value(self, lit: bool) -> None:
        if lit:
            self.on()
        else:
            self.off()

    def blink(
        self,
        on_time: float = 0.25,
        off_time: float = 0.25,
        n: int | None = None,
        *,
        end_lit: bool = False,
    ) -> None:
        """Blink ``n`` times (None = until the next command), then stay ``end_lit``."""
        if on_time <= 0 or off_time <= 0:
            raise ValueError("blink times must be positive")
        with self._lock:
            self._check()
            self._cancel_blink()
            self._generation += 1
            generation = self._generation
            done = [0]
            clock = self.backend.scheduler

            def light() -> None:
                with self._lock:
                    if generation != self._generation or self.closed:
                        return
                    self._set(True)
                    self._blink = clock.call_later(on_time, dark)

            def dark() -> None:
                with self._lock:
                    if generation != self._generation or self.closed:
                        return
                    self._set(False)
                    done[0] += 1
                    if n is not None and done[0] >= n:
                        self._blink = None
                        self._set(end_lit)
                        return
                    self._blink = clock.call_later(off_time, light)

            light()

    @property
    def is_blinking(self) -> bool:
        return self._blink is not None

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._cancel_blink()
            if not self.backend.closed:
                self._set(False)
        super().close()


@dataclass(frozen=True)
class ButtonEvent:
    """A debounced button change, as the referee receives it.

    ``button`` is ``"seat"``, ``"call"`` or ``"referee"``; ``seat`` is None for
    the referee button; ``held_for`` (seconds) is set on a release.
    """

    button: str
    seat: int | None
    pressed: bool
    ts: float
    held_for: float | None = None


class Button(_Device):
    """A push button on an input pin, debounced in software.

    The contact must stay quiet for ``debounce`` seconds before a change counts,
    so a bouncing press gives exactly one press and one release. Callbacks run
    on the backend's clock thread; keep them short.
    """

    def __init__(
        self,
        backend: GPIOBackend,
        pin: int,
        *,
        pull_up: bool = True,
        debounce: float = DEFAULT_DEBOUNCE_S,
        name: str | None = None,
        when_pressed: Callable[[Button], None] | None = None,
        when_released: Callable[[Button, float], None] | None = None,
    ) -> None:
        if debounce < 0:
            raise ValueError(f"debounce must be >= 0 seconds, got {debounce}")
        super().__init__(backend, pin, name or f"Button(GPIO{pin})")
        self.pull_up = pull_up
        self.debounce = debounce
        self.when_pressed = when_pressed
        self.when_released = when_released
        self._lock = threading.RLock()
        self._settle: TimerHandle | None = None
        self._pressed_since: float | None = None
        self.presses = 0
        self.raw_edges = 0
        self._changed = threading.Condition(self._lock)
        backend.setup_input(pin, pull_up=pull_up)
        self._pressed = self._raw_pressed()
        if self._pressed:
            self._pressed_since = backend.scheduler.now()
        backend.watch(pin, self._edge)

    def _raw_pressed(self) -> bool:
        level = self.backend.read(self.pin)
        return (not level) if self.pull_up else level

    def _edge(self, _pin: int) -> None:
        with self._lock:
            if self.closed:
                return
            self.raw_edges += 1
            if self._settle is not None:
                self._settle.cancel()
            self._settle = self.backend.scheduler.call_later(self.debounce, self._settled)

    def _settled(self) -> None:
        with self._lock:
            self._settle = None
            if self.closed:
                return
            now_pressed = self._raw_pressed()
            if now_pressed == self._pressed:
                return  # a glitch that came back: no change
            self._pressed = now_pressed
            now = self.backend.scheduler.now()
            held = 0.0
            if now_pressed:
                self.presses += 1
                self._pressed_since = now
            else:
                held = now - (self._pressed_since if self._pressed_since is not None else now)
                self._pressed_since = None
            self._changed.notify_all()
            pressed_cb, released_cb = self.when_pressed, self.when_released
        try:
            if now_pressed and pressed_cb is not None:
                pressed_cb(self)
            elif not now_pressed and released_cb is not None:
                released_cb(self, held)
        except Exception:
            log.exception("%s callback failed", self.name)

    @property
    def is_pressed(self) -> bool:
        """The debounced state."""
        self._check()
        return self._pressed

    def wait_for_press(self, timeout: float | None = None) -> bool:
        """Block until pressed (real-time clocks only); False on timeout."""
        with self._changed:
            return (
                self._changed.wait_for(lambda: self._pressed or self.closed, timeout)
                and not self.closed
            )

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            if self._settle is not None:
                self._settle.cancel()
                self._settle = None
            self._changed.notify_all()
        super().close()


# --------------------------------------------------------------------------- table


@dataclass
class SeatIO:
    """One seat's devices (any may be missing from a table's wiring)."""

    index: int
    turn_led: LED | None
    seat_button: Button | None
    call_button: Button | None


class TableGPIO:
    """Every seat's turn LED and buttons plus the referee button.

    Build with :meth:`from_geometry`. :meth:`attach` makes it follow an
    :class:`EventBus` (turn LEDs from ``view``; a blink on the calling seat's
    LED on ``call``; a blink on the offending seat on ``move_rejected``; all
    off on ``match_ended``). Button changes go to every :meth:`on_button`
    callback as :class:`ButtonEvent`.
    """

    def __init__(
        self,
        backend: GPIOBackend,
        seat_pins: Iterable[tuple[int | None, int | None, int | None]],
        referee_button_pin: int | None = None,
        *,
        debounce: float = DEFAULT_DEBOUNCE_S,
        own_backend: bool = False,
    ) -> None:
        self.backend = backend
        self._own_backend = own_backend
        self._callbacks: list[Callable[[ButtonEvent], None]] = []
        self._cb_lock = threading.Lock()
        self._detach: list[Callable[[], None]] = []
        self._closed = False
        self.seats: list[SeatIO] = []
        self.referee_button: Button | None = None
        try:
            for index, (led_pin, button_pin, call_pin) in enumerate(seat_pins):
                led = (
                    None
                    if led_pin is None
                    else LED(backend, led_pin, name=f"seat {index + 1} turn LED")
                )
                seat_btn = (
                    None
                    if button_pin is None
                    else self._button(button_pin, "seat", index, debounce)
                )
                call_btn = (
                    None if call_pin is None else self._button(call_pin, "call", index, debounce)
                )
                self.seats.append(SeatIO(index, led, seat_btn, call_btn))
            if referee_button_pin is not None:
                self.referee_button = self._button(referee_button_pin, "referee", None, debounce)
        except Exception:
            self.close()
            raise

    @classmethod
    def from_geometry(
        cls,
        geometry: Any,
        backend: GPIOBackend | None = None,
        *,
        debounce: float = DEFAULT_DEBOUNCE_S,
    ) -> TableGPIO:
        """Devices for a :class:`~tablesense.table.geometry.TableGeometry`'s pins.

        Without ``backend``, :func:`make_backend` chooses one and the table
        closes it on :meth:`close`.
        """
        own = backend is None
        chosen = backend if backend is not None else make_backend()
        pins = [(s.turn_led_pin, s.button_pin, s.call_button_pin) for s in geometry.seats]
        return cls(
            chosen,
            pins,
            getattr(geometry, "referee_button_pin", None),
            debounce=debounce,
            own_backend=own,
        )

    def _button(self, pin: int, kind: str, seat: int | None, debounce: float) -> Button:
        label = "referee button" if seat is None else f"seat {seat + 1} {kind} button"

        def pressed(_b: Button) -> None:
            self._emit(ButtonEvent(kind, seat, True, self.backend.scheduler.now()))

        def released(_b: Button, held: float) -> None:
            self._emit(ButtonEvent(kind, seat, False, self.backend.scheduler.now(), held))

        return Button(
            self.backend,
            pin,
            debounce=debounce,
            name=label,
            when_pressed=pressed,
            when_released=released,
        )

    def _emit(self, ev: ButtonEvent) -> None:
        with self._cb_lock:
            callbacks = list(self._callbacks)
        for cb in callbacks:
            try:
                cb(ev)
            except Exception:
                log.exception("button callback failed on %r", ev)

    def on_button(self, callback: Callable[[ButtonEvent], None]) -> Callable[[], None]:
        """Register a callback for button events; returns its remover."""
        with self._cb_lock:
            self._callbacks.append(callback)

        def remove() -> None:
            with self._cb_lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return remove

    # -- LEDs --------------------------------------------------------------------

    def set_turns(self, lit: Iterable[bool]) -> None:
        """Light exactly the seats whose flag is true (missing flags: off)."""
        flags = list(lit)
        for seat in self.seats:
            if seat.turn_led is None or seat.turn_led.closed:
                continue
            want = seat.index < len(flags) and bool(flags[seat.index])
            if want != seat.turn_led.is_lit or seat.turn_led.is_blinking:
                seat.turn_led.value = want

    def set_turn(self, seat: int | None) -> None:
        """Light only ``seat``'s turn LED (None: all off)."""
        self.set_turns([s.index == seat for s in self.seats])

    def blink_seat(self, seat: int, times: int = 3, *, end_lit: bool | None = None) -> None:
        if not 0 <= seat < len(self.seats):
            return
        led = self.seats[seat].turn_led
        if led is None or led.closed:
            return
        led.blink(0.15, 0.15, times, end_lit=led.is_lit if end_lit is None else end_lit)

    def handle_event(self, ev: TableEvent) -> None:
        """Follow one table event (what :meth:`attach` registers)."""
        if self._closed:
            return
        data = ev.data
        if ev.kind == "view":
            seats = data.get("seats") or []
            flags = [False] * len(self.seats)
            for s in seats:
                idx = s.get("index")
                if isinstance(idx, int) and 0 <= idx < len(flags):
                    flags[idx] = bool(s.get("is_turn"))
            self.set_turns(flags)
        elif ev.kind == "call" and isinstance(data.get("seat"), int):
            self.blink_seat(data["seat"])
        elif ev.kind == "move_rejected" and isinstance(data.get("seat"), int):
            self.blink_seat(data["seat"], 5)
        elif ev.kind == "match_ended":
            self.set_turn(None)

    def attach(self, bus: EventBus) -> Callable[[], None]:
        """Follow ``bus`` from now on (the latest view is applied at once)."""
        remove = bus.add_listener(self.handle_event, replay=True)
        self._detach.append(remove)
        return remove

    # -- life cycle -----------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Turn LEDs off, release every pin (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for remove in self._detach:
            remove()
        for seat in self.seats:
            for dev in (seat.turn_led, seat.seat_button, seat.call_button):
                if dev is not None:
                    dev.close()
        if self.referee_button is not None:
            self.referee_button.close()
        if self._own_backend:
            self.backend.close()

    def __enter__(self) -> TableGPIO:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def forward_buttons(
    table: TableGPIO,
    press: Callable[[int, str], None],
    referee_press: Callable[[], None],
    *,
    long_press: float | None = None,
) -> Callable[[], None]:
    """Send debounced presses to the referee session.

    A seat button becomes ``press(seat, "main")``, a call button
    ``press(seat, "call")`` and the referee button ``referee_press()``.
    Returns the remover.

    Without ``long_press`` a seat button acts when it closes (releases are
    not forwarded). With ``long_press`` (seconds; the coach is on) the seat
    button tells two gestures apart, so it acts on what the finger did: held
    ``long_press`` seconds it becomes ``press(seat, "coach")`` at that
    moment (the player need not guess when to let go), released sooner it is
    ``press(seat, "main")`` on the release. A long press therefore never
    passes; a short one is judged some tenths of a second later than
    without the coach. The call and referee buttons act when they close.
    """
    lock = threading.Lock()
    held: dict[int, TimerHandle | None] = {}

    def long_held(seat: int) -> None:
        with lock:
            if seat not in held:
                return  # released meanwhile
            held[seat] = None  # fired: the release does nothing
        press(seat, "coach")

    def on_button(ev: ButtonEvent) -> None:
        if ev.button == "referee":
            if ev.pressed:
                referee_press()
            return
        if ev.seat is None:
            return
        if ev.button == "call" or long_press is None:
            if ev.pressed:
                press(ev.seat, "call" if ev.button == "call" else "main")
            return
        seat = ev.seat
        if ev.pressed:
            timer = table.backend.scheduler.call_later(long_press, lambda: long_held(seat))
            with lock:
                old = held.get(seat)
                held[seat] = timer
            if old is not None:
                old.cancel()
            return
        with lock:
            pending = seat in held and held[seat] is not None
            timer = held.pop(seat, None)
        if timer is not None:
            timer.cancel()
        if pending:
            press(seat, "main")

    return table.on_button(on_button)
