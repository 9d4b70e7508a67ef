"""Seat GPIO: the RPi.GPIO backend against a recording fake, the simulation,
software debouncing under bounce, LEDs and the table's bus-driven behaviour."""

from __future__ import annotations

import importlib.abc
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

import pytest

from tablesense.outputs.events import EventBus
from tablesense.outputs.gpio import (
    LED,
    Button,
    ButtonEvent,
    DeviceClosed,
    GPIOError,
    ManualScheduler,
    PinInUse,
    PinModeError,
    RPiGPIOBackend,
    SimBackend,
    TableGPIO,
    ThreadScheduler,
    forward_buttons,
    make_backend,
)
from testsupport import REPO


class FakeGPIO(types.ModuleType):
    """Records every call the way RPi.GPIO (and rpi-lgpio) would receive it."""

    BCM, BOARD = 11, 10
    OUT, IN = 0, 1
    HIGH, LOW = 1, 0
    PUD_UP, PUD_DOWN, PUD_OFF = 22, 21, 20
    RISING, FALLING, BOTH = 31, 32, 33

    def __init__(self) -> None:
        super().__init__("RPi.GPIO")
        self.calls: list[tuple[Any, ...]] = []
        self.mode: int | None = None
        self.levels: dict[int, int] = {}
        self.callbacks: dict[int, Callable[[int], None]] = {}
        self.fail_on: str | None = None

    def _rec(self, *call: Any) -> None:
        if self.fail_on == call[0]:
            raise RuntimeError("No access to /dev/mem. Try running as root!")
        self.calls.append(call)

    def setwarnings(self, flag: bool) -> None:
        self._rec("setwarnings", flag)

    def setmode(self, mode: int) -> None:
        self._rec("setmode", mode)
        self.mode = mode

    def setup(
        self, pin: int, direction: int, pull_up_down: int | None = None, initial: int | None = None
    ) -> None:
        assert self.mode == self.BCM, "setup before setmode"
        self._rec("setup", pin, direction, pull_up_down, initial)
        if direction == self.IN:
            self.levels[pin] = 1 if pull_up_down == self.PUD_UP else 0
        else:
            self.levels[pin] = initial or 0

    def output(self, pin: int, value: int) -> None:
        self._rec("output", pin, value)
        self.levels[pin] = value

    def input(self, pin: int) -> int:
        return self.levels[pin]

    def add_event_detect(
        self,
        pin: int,
        edge: int,
        callback: Callable[[int], None] | None = None,
        bouncetime: int | None = None,
    ) -> None:
        self._rec("add_event_detect", pin, edge, bouncetime)
        assert callback is not None
        self.callbacks[pin] = callback

    def remove_event_detect(self, pin: int) -> None:
        self._rec("remove_event_detect", pin)
        self.callbacks.pop(pin, None)

    def cleanup(self, pin: int | None = None) -> None:
        self._rec("cleanup") if pin is None else self._rec("cleanup", pin)

    # the outside world
    def drive(self, pin: int, level: int) -> None:
        if self.levels.get(pin) != level:
            self.levels[pin] = level
            if pin in self.callbacks:
                self.callbacks[pin](pin)


@pytest.fixture
def fake_gpio(monkeypatch: pytest.MonkeyPatch) -> FakeGPIO:
    fake = FakeGPIO()
    pkg = types.ModuleType("RPi")
    pkg.GPIO = fake  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "RPi", pkg)
    monkeypatch.setitem(sys.modules, "RPi.GPIO", fake)
    return fake


# --------------------------------------------------------------------------- RPi.GPIO backend


def test_rpi_backend_sets_bcm_and_drives_pins_through_the_module(fake_gpio: FakeGPIO) -> None:
    clock = ManualScheduler()
    backend = RPiGPIOBackend(scheduler=clock)  # imports the injected RPi.GPIO
    assert backend.gpio is fake_gpio
    assert fake_gpio.calls[:2] == [("setwarnings", False), ("setmode", FakeGPIO.BCM)]
    led = LED(backend, 4, name="seat 0 turn LED")
    led.on()
    led.off()
    btn = Button(backend, 17, debounce=0.03)
    assert ("setup", 4, FakeGPIO.OUT, None, FakeGPIO.LOW) in fake_gpio.calls
    assert ("output", 4, FakeGPIO.HIGH) in fake_gpio.calls
    assert fake_gpio.calls[-3:-1] == [
        ("output", 4, FakeGPIO.LOW),
        ("setup", 17, FakeGPIO.IN, FakeGPIO.PUD_UP, None),
    ]
    # Edge detection on both edges, with no hardware bouncetime (debouncing is ours).
    assert fake_gpio.calls[-1] == ("add_event_detect", 17, FakeGPIO.BOTH, None)
    fake_gpio.drive(17, 0)
    clock.advance(0.05)
    assert btn.is_pressed and btn.presses == 1
    backend.close()
    backend.close()
    tail = fake_gpio.calls[-5:]
    assert ("remove_event_detect", 17) in tail and ("cleanup", 17) in tail
    assert ("cleanup", 4) in tail and tail[-1] == ("cleanup",)
    with pytest.raises(DeviceClosed):
        led.on()


def test_rpi_backend_active_low_led_and_release_on_close(fake_gpio: FakeGPIO) -> None:
    backend = RPiGPIOBackend(scheduler=ManualScheduler())
    with LED(backend, 5, active_high=False) as led:
        assert fake_gpio.levels[5] == 1  # off = high for an active-low LED
        led.on()
        assert fake_gpio.levels[5] == 0
    assert fake_gpio.levels[5] == 1 and backend.owner(5) is None
    assert ("cleanup", 5) in fake_gpio.calls
    backend.close()


def test_rpi_backend_errors_become_clear_messages(
    fake_gpio: FakeGPIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = RPiGPIOBackend(scheduler=ManualScheduler())
    fake_gpio.fail_on = "setup"
    with pytest.raises(GPIOError, match="gpio' group"):
        LED(backend, 6)
    fake_gpio.fail_on = None
    backend.close()
    monkeypatch.setitem(sys.modules, "RPi.GPIO", None)  # an import that fails
    monkeypatch.setitem(sys.modules, "RPi", None)
    with pytest.raises(GPIOError, match="rpi-lgpio"):
        RPiGPIOBackend()


def test_rpi_lgpio_errors_become_clear_messages(
    fake_gpio: FakeGPIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rpi-lgpio (the ``pi`` extra) lets lgpio's own exception through, e.g.
    "GPIO busy" for a pin the kernel holds: a GPIOError too, not a traceback."""

    class LgpioError(Exception):
        """Stands for ``lgpio.error``, which is not a RuntimeError."""

    lgpio = types.ModuleType("lgpio")
    lgpio.error = LgpioError  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "lgpio", lgpio)
    backend = RPiGPIOBackend(scheduler=ManualScheduler())

    def busy(*args: Any, **kwargs: Any) -> None:
        raise LgpioError("GPIO busy")

    monkeypatch.setattr(fake_gpio, "setup", busy)
    with pytest.raises(GPIOError, match=r"RPi.GPIO.setup\(3, .*GPIO busy"):
        Button(backend, 3)
    backend.close()


def test_lgpio_pipe_in_a_read_only_folder_is_a_clear_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """lgpio opens ``.lgd-nfy*`` in the working folder when it is imported: in
    a folder the user cannot write that is an OSError, reported as a GPIOError."""

    class PipeFails(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
            if name in ("RPi", "RPi.GPIO"):
                raise FileNotFoundError(2, "No such file or directory", ".lgd-nfy-3")

    monkeypatch.delitem(sys.modules, "RPi", raising=False)
    monkeypatch.delitem(sys.modules, "RPi.GPIO", raising=False)
    monkeypatch.setattr(sys, "meta_path", [PipeFails(), *sys.meta_path])
    with pytest.raises(GPIOError, match=r"lgpio cannot make its notification pipe in .*set LG_WD"):
        RPiGPIOBackend(scheduler=ManualScheduler())


def test_make_backend_from_environment(
    fake_gpio: FakeGPIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TABLESENSE_GPIO", "rpi")
    b = make_backend()
    assert isinstance(b, RPiGPIOBackend)
    b.close()
    monkeypatch.setenv("TABLESENSE_GPIO", "sim")
    s = make_backend()
    assert isinstance(s, SimBackend) and isinstance(s.scheduler, ThreadScheduler)
    s.close()
    assert isinstance(make_backend("sim"), SimBackend)
    monkeypatch.setenv("TABLESENSE_GPIO", "arduino")
    with pytest.raises(GPIOError, match="unknown GPIO backend 'arduino'"):
        make_backend()


# --------------------------------------------------------------------------- devices on the simulation


def test_pins_are_claimed_once_and_directions_are_enforced() -> None:
    sim = SimBackend()
    LED(sim, 4, name="seat 0 turn LED")
    with pytest.raises(PinInUse, match="seat 0 turn LED"):
        Button(sim, 4)
    with pytest.raises(PinModeError):
        LED(sim, 40)
    with pytest.raises(PinModeError):
        sim.drive(4, True)  # an output cannot be driven from outside
    with pytest.raises(PinModeError):
        sim.write(9, True)


def test_bouncing_press_and_release_count_once() -> None:
    sim = SimBackend()
    seen: list[tuple[str, float]] = []
    btn = Button(
        sim,
        17,
        debounce=0.03,
        when_pressed=lambda b: seen.append(("press", sim.scheduler.now())),
        when_released=lambda b, held: seen.append(("release", round(held, 3))),
    )
    sim.bounce(17, final_pressed=True, edges=7, interval=0.002)
    assert not btn.is_pressed  # still bouncing: nothing accepted yet
    sim.advance(0.029)
    assert not btn.is_pressed
    sim.advance(0.002)
    assert btn.is_pressed and btn.presses == 1
    sim.advance(0.5)
    sim.bounce(17, final_pressed=False, edges=5, interval=0.003)
    sim.advance(0.05)
    assert not btn.is_pressed
    assert btn.raw_edges == 12
    assert [k for k, _ in seen] == ["press", "release"]
    # held from the accepted press (t=0.042) to the accepted release, which is
    # accepted one debounce after the last release edge (0.043 + 0.5 + 0.012 + 0.03)
    assert seen[1][1] == pytest.approx(0.543, abs=0.0005)


def test_a_short_glitch_is_not_a_press() -> None:
    sim = SimBackend()
    btn = Button(sim, 22, debounce=0.02)
    sim.press(22)
    sim.advance(0.005)
    sim.release_button(22)
    sim.advance(0.1)
    assert not btn.is_pressed and btn.presses == 0 and btn.raw_edges == 2


def test_led_blink_counts_and_a_new_command_cancels_it() -> None:
    sim = SimBackend()
    led = LED(sim, 4)
    led.blink(0.1, 0.1, n=3)
    sim.advance(1.0)
    changes = [lvl for _, pin, lvl in sim.history if pin == 4]
    assert changes == [False, True, False, True, False, True, False]
    assert not led.is_lit and not led.is_blinking
    led.blink(0.1, 0.1)  # forever, until the next command
    sim.advance(0.35)
    assert led.is_blinking
    led.on()
    before = len(sim.history)
    sim.advance(1.0)
    assert len(sim.history) == before and led.is_lit and sim.level(4)
    led.close()
    led.close()
    assert sim.history[-1] == (sim.scheduler.now(), 4, False) and 4 not in sim.pins
    with pytest.raises(DeviceClosed):
        led.off()


def test_thread_scheduler_debounces_in_real_time() -> None:
    sim = SimBackend(ThreadScheduler())
    pressed = threading.Event()
    btn = Button(sim, 5, debounce=0.01, when_pressed=lambda b: pressed.set())
    for _ in range(3):
        sim.press(5)
        sim.release_button(5)
    sim.press(5)
    assert pressed.wait(2) and btn.wait_for_press(1)
    assert btn.presses == 1
    sim.close()


# --------------------------------------------------------------------------- the table


def test_table_from_geometry_lights_turns_from_view_events_and_reports_buttons() -> None:
    from tablesense.table.geometry import TableGeometry

    geo = TableGeometry.load(REPO / "hardware" / "tables" / "dominoes-4.toml")
    sim = SimBackend()
    bus = EventBus()
    events: list[ButtonEvent] = []
    with TableGPIO.from_geometry(geo, sim) as table:
        table.on_button(events.append)
        table.attach(bus)
        leds = [s.turn_led for s in table.seats]
        assert all(led is not None for led in leds)
        bus.publish("view", seats=[{"index": i, "is_turn": i == 2} for i in range(4)])
        assert [led.is_lit for led in leds if led] == [False, False, True, False]
        bus.publish("view", seats=[{"index": i, "is_turn": i == 3} for i in range(4)])
        assert [led.is_lit for led in leds if led] == [False, False, False, True]
        pin = geo.seats[1].button_pin
        assert pin is not None
        sim.bounce(pin, final_pressed=True)
        sim.advance(0.05)
        sim.bounce(pin, final_pressed=False)
        sim.advance(0.05)
        assert [(e.button, e.seat, e.pressed) for e in events] == [
            ("seat", 1, True),
            ("seat", 1, False),
        ]
        if geo.referee_button_pin is not None:
            sim.press(geo.referee_button_pin)
            sim.advance(0.05)
            assert events[-1].button == "referee" and events[-1].seat is None
        bus.publish("match_ended", winner=0)
        assert not any(led.is_lit for led in leds if led)
    assert not sim.pins  # every pin released
    table.close()  # idempotent


def test_late_attach_applies_the_latest_view_and_call_blinks() -> None:
    sim = SimBackend()
    bus = EventBus()
    bus.publish("view", seats=[{"index": 0, "is_turn": False}, {"index": 1, "is_turn": True}])
    table = TableGPIO(sim, [(4, 17, 27), (5, 18, None)], referee_button_pin=3)
    table.attach(bus)
    led1 = table.seats[1].turn_led
    assert led1 is not None and led1.is_lit
    assert table.seats[1].call_button is None
    bus.publish("call", seat=0, kind="kems")
    led0 = table.seats[0].turn_led
    assert led0 is not None and led0.is_blinking
    sim.advance(2)
    assert not led0.is_blinking and not led0.is_lit
    table.close()
    bus.publish("view", seats=[{"index": 0, "is_turn": True}])  # ignored after close
    assert not sim.pins


def test_forward_buttons_to_the_referee_session() -> None:
    sim = SimBackend()
    table = TableGPIO(sim, [(4, 17, 27), (5, 18, 23)], referee_button_pin=3)
    calls: list[tuple] = []
    remove = forward_buttons(
        table, lambda seat, button: calls.append((seat, button)), lambda: calls.append(("referee",))
    )
    for pin in (18, 27, 3):
        sim.bounce(pin, final_pressed=True)
        sim.advance(0.05)
        sim.bounce(pin, final_pressed=False)
        sim.advance(0.05)
    assert calls == [(1, "main"), (0, "call"), ("referee",)]
    remove()
    sim.press(17)
    sim.advance(0.05)
    assert len(calls) == 3
    table.close()
