# The board's step core: scan, debounce, events, commands. Runs on MicroPython
# (the real board, firmware/main.py) and on CPython (tests, the virtual table),
# with every device injected:
#
#   Board(config, readers, leds, transport, clock, uid, files=...)
#
#   config     the board config dict (config.parse() is applied to it)
#   readers    one MFRC522-like object per cell (read_uid(), init(),
#              self_test()); None for a cell without a reader
#   leds       a leds.Strip, leds.NoLeds or None
#   transport  read() -> bytes (non-blocking, b"" when nothing) and write(bytes)
#   clock      ticks_ms(), ticks_us(), ticks_diff(a, b), sleep_us(n) (the
#              time module on MicroPython; without sleep_us a field's
#              power-up lead is not waited for)
#   uid        the board's unique id (machine.unique_id())
#   files      list of (name, sha256 digest) or a callable returning it
#   reboot, bootloader   callables run after the ACK was sent (None: refused)
#
# step() does one bounded slice of work: read what the host sent, answer it,
# read ONE cell, and send the resulting event. A full sweep is `cells` steps.
# step() never raises (except KeyboardInterrupt/SystemExit): a failure inside
# is counted, reported as a LOG frame, and the loop goes on.

try:
    from . import config as _config
    from . import proto  # the host imports tablesense.firmware.board
except ImportError:  # on the board every file sits at the top level
    import config as _config
    import proto

FW_VERSION = "1.0.0"

# Maintenance break: at the start of a frame, the bytes 0x0D 0x03 (what
# mpremote sends) or 0x03 0x03 (Ctrl-C twice) can never begin a version-1
# frame (its second byte is the version, 0x01), so they ask the board to stop
# framing and hand USB back to the REPL.
_BREAK_FIRST = (0x0D, 0x03)

# A frame whose bytes stop arriving for this long is dropped (a host that went
# away mid-frame must not glue its half frame to the next host's bytes).
STALE_FRAME_MS = 500
MAX_READS_PER_STEP = 16
# A step goes on to the sweep's next cells (runs of quiet cells, pairs of
# tags read together, cells read early) until this long has passed since it
# began, or the sweep ends, or a cell was read alone (_scan_next): the host's
# next frame waits at most this and one more read for the step's input poll
# (a pair of known tags ~4 ms on rp2040js). A quiet run of the plain path
# (the WebAssembly port, CPython, a starved virtual board, where an empty
# cell can take ms) begins no cell past it either.
STEP_US = 4000
# The compiled quiet run (rp2 port) reads up to 16 cells in one call, ~7 ms
# on rp2040js, without looking at the clock
QUIET_RUN_COMPILED = 16

LOG_INFO = 1
LOG_WARN = 2
LOG_ERROR = 3


class HostClock:
    """ticks_ms/ticks_us/ticks_diff for CPython (the virtual table, tests),
    with MicroPython's wrap-around arithmetic (30-bit ticks)."""

    PERIOD = 1 << 30

    def __init__(self):
        import time

        self._ns = getattr(time, "monotonic_ns")  # noqa: B009 - not in MicroPython's stubs

    def ticks_ms(self):
        return (self._ns() // 1000000) & (self.PERIOD - 1)

    def ticks_us(self):
        return (self._ns() // 1000) & (self.PERIOD - 1)

    def ticks_diff(self, a, b):
        half = self.PERIOD // 2
        return ((a - b + half) & (self.PERIOD - 1)) - half

    def ticks_add(self, t, delta):
        return (t + delta) & (self.PERIOD - 1)

    def sleep_us(self, us):
        import time

        time.sleep(us / 1e6)


def _same(a, b):
    """Two readings agree: same UID, both empty, or both errors (any codes);
    unscanned (-1) only equals unscanned."""
    if a is None or b is None:
        return a is None and b is None
    ai = isinstance(a, int)
    bi = isinstance(b, int)
    if ai or bi:
        return ai and bi and (a < 0) == (b < 0)
    return a == b


def _identical(a, b):
    """Exactly the same state (used to decide whether to send an event)."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return _same(a, b)


class Board:
    """One sensor board's logic, driven one step() at a time (see the top of
    this file for the devices it is given). The real loop is firmware/main.py;
    the tests and the virtual table call step() themselves."""

    def __init__(
        self,
        config,
        readers,
        leds,
        transport,
        clock,
        uid,
        files=None,
        reboot=None,
        bootloader=None,
        reset_cause=proto.BOOT_POWER_ON,
        fw_version=FW_VERSION,
    ):
        cfg = _config.parse(config)
        self.config = cfg
        self.board_id = cfg["board"]
        n = cfg["cells"]
        self.cells = n
        readers = list(readers)
        while len(readers) < n:
            readers.append(None)
        self.readers = readers[:n]
        self.leds = leds
        self.transport = transport
        self.clock = clock
        self.uid = bytes(uid)
        self.files = files
        self.reboot = reboot
        self.bootloader = bootloader
        self.reset_cause = reset_cause
        self.fw_version = fw_version
        deb = cfg["debounce"]
        self.need_tag = deb["tag"]
        self.need_empty = deb["empty"]
        self.need_error = deb["error"]
        self.need_unstable = deb["unstable"]
        rfid = cfg["rfid"]
        self.retry_ms = rfid["retry_ms"]
        # Time-shared RF fields (docs/firmware.md): only the reader being
        # read and the next few have their field on, the next ones switched
        # on field_lead_us before their read (a tag's power-up). 0: every
        # field stays on. Needs readers with field(on) (mfrc522.MFRC522).
        self.field_lead_us = rfid["field_lead_us"]
        self.overlap = rfid["overlap"]  # overlapped reads (below, _read_pair)
        if self.overlap:
            for r in self.readers:
                if r is not None and getattr(r, "read_pair", None) is None:
                    self.overlap = 0  # (scripted test readers): never paired
        self._field = [getattr(r, "field", None) if self.field_lead_us else None for r in self.readers]
        self._sharing = False
        for f in self._field:
            if f is not None:
                self._sharing = True
        # ticks_us when the field came on; -1: off (an array the compiled
        # quiet run reads and writes, see _quiet_setup)
        self._field_since = [-1] * n
        self._lit = 0  # fields on from next_cell on, in sweep order
        # The shortest step of the last sweep (from one read's start to the
        # next, waits left out): the window of lit fields is sized from it,
        # so that even a run of the quickest cells (empty ones) gives every
        # field its lead without waiting. 1 ms until a sweep has been timed.
        self._cell_us = 1000
        self._quickest_us = 0  # the shortest step of this sweep so far (0: none yet)
        self._read_start = None  # ticks_us when the last read began, after its wait
        self.fields_on = 0  # fields on now (tests, diagnostics)
        self.max_fields_on = 0
        self.field_waits = 0  # reads that waited for their field's lead
        self._ahead = 0
        self._keep = False  # every field stays on (_size_window)
        self._size_window()

        self.confirmed = [-1] * n  # the reported state (proto cell state values)
        self.candidate = [-1] * n
        self.agree = [0] * n  # consecutive reads agreeing with candidate
        self.disagree = [0] * n  # consecutive reads differing from confirmed
        self.read_errors = [0] * n
        self.last_read = [-1] * n  # the raw last reading (diagnostics)
        # ticks_ms of the last init of each reader, and whether it passed
        self._retry_at = [None] * n
        self.ready = [False] * n
        # a reader whose init failed and whose read then timed out: not read
        # again until its retry time (_read)
        self.skipped = [False] * n

        # The host's hint (HOT): cells a legal move can touch, read once more
        # between every two cells of the sweep's own order, their fields kept
        # on. Empty: every cell is ordinary.
        self.hot = []
        # Readers that can read a cell expected empty in one call (probe():
        # mfrc522.MFRC522); None when none can (scripted test readers)
        probes = [getattr(r, "probe", None) for r in self.readers]
        self._probes = probes if [f for f in probes if f is not None] else None
        # The compiled quiet run (rp2 port): its parameters, function, script
        # and transfer buffer (_quiet_setup); None: the readers' probe()
        self._qp = None
        self._quiet = None
        self._qscript = None
        self._qbuf = None
        if self._probes is not None and self._sharing:
            self._quiet_setup()
        self.quiet_reads = 0  # reads made by _scan_quiet (tests, diagnostics)
        # Overlapped reads (rfid.overlap): cell i's known-tag read runs with
        # cell i + overlap's (MFRC522.read_pair), whose reader the config
        # says is out of reach of cell i's field; early[j]: cell j was read
        # so, its own turn only moves the fields on
        self._early = [False] * n
        self.pair_reads = 0  # reads made by read_pair (tests, diagnostics)
        self._hot_next = 0  # the hot cell whose turn comes next
        self._hot_turn = False  # the next step reads a hot cell
        self._step_began = 0  # ticks_us when this step began (_scan_one)
        self.hot_reads = 0

        self.decoder = proto.FrameDecoder()
        self.seq = 0
        self.started = False
        self.maintenance = False  # set by a maintenance break: main.py leaves
        self.pending_action = None  # "reboot" / "bootloader" after the ACK
        self.next_cell = 0
        self.sweeps = 0
        self.sweep_us = 0
        self.events = 0
        self.frames_tx = 0
        self.errors = 0  # exceptions caught inside step()
        self.reinits = 0  # readers re-initialised after a timeout
        self.steps = 0
        self._sweep_start = None
        self._start_ms = clock.ticks_ms()
        self._last_rx_ms = self._start_ms
        self._run = 0  # bytes since the last 0x00 seen on input
        self._first = 0  # first byte after that 0x00

    # --- output ---------------------------------------------------------------

    def _send(self, msg_type, payload=b""):
        frame = proto.encode_frame(msg_type, self.board_id, self.seq, payload)
        self.seq = (self.seq + 1) & 0xFF
        self.frames_tx += 1
        self.transport.write(frame)

    def log(self, level, message):
        try:
            self._send(proto.LOG, proto.encode_log(level, message))
        except Exception:  # noqa: BLE001 - a log must never take the board down
            pass

    # --- start ------------------------------------------------------------------

    def start(self):
        """Send BOOT (seq 0) and initialise the readers. step() calls it
        on the first step; calling it again does nothing."""
        if self.started:
            return
        self.started = True
        self.seq = 0
        self._send(proto.BOOT, bytes((self.reset_cause & 0xFF,)))
        for i in range(self.cells):
            self._init_reader(i)
        self._sweep_start = self.clock.ticks_us()

    def _init_reader(self, i):
        """(Re-)initialise reader i -> whether it answered; remembers when,
        and whether it is ready to be read."""
        r = self.readers[i]
        if r is None:
            return False
        self._retry_at[i] = self.clock.ticks_ms()
        try:
            ok = bool(r.init())
        except Exception:  # noqa: BLE001 - a dead reader is a cell error, not a crash
            ok = False
        self.ready[i] = ok
        field = self._field[i]
        if field is not None:
            # init() switches the field on; a shared field waits for its turn
            if self._field_since[i] < 0:
                self._field_since[i] = 0
                self.fields_on += 1
            self._set_field(i, False)
        return ok

    # --- time-shared RF fields -------------------------------------------------

    def _set_field(self, i, on):
        """Switch reader i's field and keep the count (on: only a field that
        is off; off: only one that is on)."""
        try:
            self._field[i](on)
        except Exception:  # noqa: BLE001 - the read that follows reports the fault
            return
        if on:
            self._field_since[i] = self.clock.ticks_us()
            k = self.fields_on + 1
            self.fields_on = k
            if k > self.max_fields_on:
                self.max_fields_on = k
        else:
            self._field_since[i] = -1
            self.fields_on -= 1

    def _field_before_read(self, i):
        """Cell i is read next: its field must be on, and on for
        field_lead_us, or a tag lying there may not have powered up. Also
        times the step since the last read (the window's size)."""
        clock = self.clock
        now = clock.ticks_us()
        last = self._read_start
        if last is not None:
            step = clock.ticks_diff(now, last)
            if step > 0 and (self._quickest_us == 0 or step < self._quickest_us):
                self._quickest_us = step
        if self._lit == 0:
            self._lit = 1
        since = self._field_since[i]
        if since < 0 and self._field[i] is not None and not self.skipped[i]:
            # (re-initialised since it was lit, or the window was empty)
            self._set_field(i, True)
            since = self._field_since[i]
        if since >= 0:
            left = self.field_lead_us - clock.ticks_diff(now, since)
            if left > 0:
                self.field_waits += 1
                sleep_us = getattr(clock, "sleep_us", None)
                if sleep_us is not None:
                    sleep_us(left)
                    now = clock.ticks_us()
        self._read_start = now

    def _field_after_read(self, i):
        """Cell i was read: its field goes off (unless it is the only
        cell), and the fields of the cells read within field_lead_us from
        now come on, one more each step in the steady state."""
        n = self.cells
        since = self._field_since
        fields = self._field
        lit = self._lit - 1
        ahead = self._ahead
        try:
            if n > 1 and since[i] >= 0 and not self._keep and not (self.hot and i in self.hot):
                fields[i](False)  # (the decoder still holds its address: no routing)
                since[i] = -1
                self.fields_on -= 1
            while lit < ahead:
                j = i + 1 + lit
                if j >= n:
                    j -= n
                lit += 1
                if since[j] < 0 and fields[j] is not None and not self.skipped[j]:
                    fields[j](True)
                    since[j] = self.clock.ticks_us()
                    k = self.fields_on + 1
                    self.fields_on = k
                    if k > self.max_fields_on:
                        self.max_fields_on = k
        except Exception:  # noqa: BLE001 - a reader fault: its own read reports it
            pass
        self._lit = lit

    def _size_window(self):
        """How many cells ahead have their field on: those read within
        field_lead_us, at the quickest step of the last sweep. A field lit
        after the read of cell i is read after ahead - 1 whole steps (the
        lighting ends step i, the read begins step i + ahead): so ahead - 1
        steps must cover the lead."""
        ahead = self.field_lead_us // self._cell_us + 2
        # overlapped reads (rfid.overlap): cell i + overlap is read with
        # cell i, so its field comes on overlap cells earlier, and has had
        # its lead by then as cell i's has
        ahead += self.overlap
        n = self.cells
        self._ahead = ahead if ahead < n else n - 1
        # a window of every other cell keeps every field on: switching the
        # read cell's off would only light it again a step later, and the
        # cell read early with a pair (rfid.overlap) would then wait out
        # its lead at the next sweep's pair, having had only the few cells
        # after its own turn (2.5 ms a 16-cell sweep with overlap 8 on
        # rp2040js)
        self._keep = n > 1 and ahead >= n - 1

    # --- the step ---------------------------------------------------------------

    def step(self):
        """One bounded slice of work. Returns False once the board must stop
        stepping (maintenance break), True otherwise."""
        if not self.answer():
            return False
        try:
            self._scan_one()
        except Exception as exc:  # noqa: BLE001 - the loop must go on
            self.errors += 1
            self.log(LOG_ERROR, "step: %s" % (exc,))
        self.steps += 1
        return not self.maintenance

    def answer(self):
        """The host's part of a step alone: read its frames and answer them,
        without reading a cell. A board emulated on the host calls this when
        a frame wakes it between two of its scan times, so a PING costs no
        radio work there (the booted loop always steps). Returns False once
        the board must stop stepping."""
        if self.maintenance:
            return False
        try:
            if not self.started:
                self.start()
            self._poll_input()
            if self.maintenance:
                return False
            if self.pending_action is not None:
                self._run_pending()
        except Exception as exc:  # noqa: BLE001 - the loop must go on
            self.errors += 1
            self.log(LOG_ERROR, "answer: %s" % (exc,))
        return not self.maintenance

    def _run_pending(self):
        action = self.pending_action
        self.pending_action = None
        fn = self.reboot if action == "reboot" else self.bootloader
        if fn is not None:
            fn()

    # --- input -------------------------------------------------------------------

    def _poll_input(self):
        clock = self.clock
        for _ in range(MAX_READS_PER_STEP):
            data = self.transport.read()
            if not data:
                break
            now = clock.ticks_ms()
            if self._run and clock.ticks_diff(now, self._last_rx_ms) > STALE_FRAME_MS:
                if self.decoder.reset():
                    self.decoder.framing_errors += 1
                self._run = 0
            self._last_rx_ms = now
            cut = self._find_break(data)
            if cut >= 0:
                self._feed(data[:cut])
                self.maintenance = True
                return
            self._feed(data)
        if self._run and clock.ticks_diff(clock.ticks_ms(), self._last_rx_ms) > STALE_FRAME_MS:
            if self.decoder.reset():
                self.decoder.framing_errors += 1
            self._run = 0

    def _find_break(self, data):
        """Index where a maintenance break begins in data (-1: none); keeps
        track of frame starts across calls."""
        if 3 not in data:
            k = data.rfind(b"\x00")
            if k < 0:
                if self._run == 0:
                    self._first = data[0]
                self._run += len(data)
            else:
                self._run = len(data) - k - 1
                if self._run:
                    self._first = data[k + 1]
            return -1
        run = self._run
        first = self._first
        for i in range(len(data)):
            b = data[i]
            if b == 0:
                run = 0
                continue
            if b == 3 and run == 1 and first in _BREAK_FIRST:
                self._run = 0
                return i - 1 if i > 0 else 0
            if run == 0:
                first = b
            run += 1
        self._run = run
        self._first = first
        return -1

    def _feed(self, data):
        if not data:
            return
        for msg_type, _board, seq, payload in self.decoder.feed(data):
            self._handle(msg_type, seq, payload)

    def _handle(self, msg_type, seq, payload):
        try:
            if msg_type == proto.HELLO:
                self._send(proto.IDENTITY, self._identity(seq))
            elif msg_type == proto.SNAPSHOT_REQ:
                self._snapshot(seq, payload)
            elif msg_type == proto.PING:
                self._send(proto.ACK, proto.encode_ack(seq))
            elif msg_type == proto.LEDS:
                self._leds(seq, payload)
            elif msg_type == proto.SELFTEST:
                self._send(proto.SELFTEST_RESULT, proto.encode_selftest(seq, self.self_test()))
            elif msg_type == proto.STATS_REQ:
                self._send(proto.STATS, proto.encode_stats(seq, self.stats(), self.read_errors))
            elif msg_type == proto.HOT:
                self._set_hot(proto.decode_hot(payload))
                self._send(proto.ACK, proto.encode_ack(seq))
            elif msg_type == proto.FILES_REQ:
                files = self.files() if callable(self.files) else (self.files or [])
                self._send(proto.FILES, proto.encode_files(seq, files))
            elif msg_type == proto.REBOOT or msg_type == proto.BOOTLOADER:
                fn = self.reboot if msg_type == proto.REBOOT else self.bootloader
                if fn is None:
                    self._send(proto.NAK, proto.encode_nak(seq, proto.NAK_UNSUPPORTED, "not supported here"))
                else:
                    self._send(proto.ACK, proto.encode_ack(seq))
                    if self.pending_action is None:  # the first one wins: the board goes away
                        self.pending_action = "reboot" if msg_type == proto.REBOOT else "bootloader"
            else:
                self._send(
                    proto.NAK,
                    proto.encode_nak(seq, proto.NAK_UNKNOWN_TYPE, "unknown message type 0x%02x" % msg_type),
                )
        except proto.ProtocolError as exc:
            self._send(proto.NAK, proto.encode_nak(seq, proto.NAK_BAD_PAYLOAD, str(exc)))

    def _snapshot(self, seq, payload):
        """The whole board (an empty request, as every version-1 host sends
        it), or the cells of a range (first, count; count 0: to the end)."""
        rng = proto.decode_snapshot_req(payload)
        if rng is None:
            self._send(proto.SNAPSHOT, proto.encode_snapshot(seq, self.confirmed))
            return
        first, count = rng
        if first >= self.cells:
            raise proto.ProtocolError("first cell %d, the board has %d" % (first, self.cells))
        end = self.cells if count == 0 else min(self.cells, first + count)
        states = self.confirmed[first:end]
        self._send(proto.SNAPSHOT_PART, proto.encode_snapshot_part(seq, first, self.events, states))

    def _identity(self, seq):
        leds = self.leds
        n_leds = leds.count if leds is not None and leds.has_leds else 0
        caps = 0
        if n_leds:
            caps |= proto.CAP_LEDS
        if self.bootloader is not None:
            caps |= proto.CAP_BOOTLOADER
        caps |= proto.CAP_HOT
        return proto.encode_identity(
            seq, self.uid, self.fw_version, self.cells, n_leds, caps, self.config["hash"]
        )

    def _leds(self, seq, payload):
        leds = self.leds
        if leds is None or not leds.has_leds:
            self._send(proto.NAK, proto.encode_nak(seq, proto.NAK_UNSUPPORTED, "this board has no LEDs"))
            return
        colors = proto.decode_leds(payload)
        if len(colors) > leds.count:
            raise proto.ProtocolError("%d colours for %d LEDs" % (len(colors), leds.count))
        leds.apply(colors)
        self._send(proto.ACK, proto.encode_ack(seq))

    # --- answers ---------------------------------------------------------------

    def self_test(self):
        """Each reader's self-test; a time-shared field is switched on for
        it (the test checks that the field comes on) and back off."""
        out = []
        for i, r in enumerate(self.readers):
            if r is None:
                out.append((0, False, False))
                continue
            field = self._field[i]
            was_on = self._field_since[i] >= 0
            try:
                if field is not None and not was_on:
                    field(True)
                out.append(r.self_test())
            except Exception:  # noqa: BLE001
                out.append((0, False, False))
            finally:
                if field is not None and not was_on:
                    try:
                        field(False)
                    except Exception:  # noqa: BLE001 - the next read reports it
                        pass
        return out

    def stats(self):
        d = self.decoder
        return {
            "uptime_ms": self.clock.ticks_diff(self.clock.ticks_ms(), self._start_ms),
            "sweeps": self.sweeps,
            "sweep_us": self.sweep_us,
            "frames_rx": d.frames,
            "frames_tx": self.frames_tx,
            "crc_errors": d.crc_errors,
            "framing_errors": d.framing_errors + d.version_errors + d.oversize,
            "events": self.events,
        }

    def snapshot(self):
        return list(self.confirmed)

    # --- scanning -------------------------------------------------------------

    def _set_hot(self, cells):
        """Take the host's HOT list: cells outside the board are an error
        (ProtocolError -> NAK bad payload); a hot cell's field is switched
        on and stays on while it is hot, one that cools down goes back to
        the time sharing (and stays on when every field does: _keep)."""
        for c in cells:
            if c >= self.cells:
                raise proto.ProtocolError("hot cell %d, the board has %d" % (c, self.cells))
        hot = []
        for c in cells:
            if c not in hot:
                hot.append(c)
        for c in self.hot:
            cooled = c not in hot and self._field[c] is not None and self._field_since[c] >= 0
            if cooled and self.cells > 1 and not self._keep:
                self._set_field(c, False)
        for c in hot:
            if self._field[c] is not None and self._field_since[c] < 0 and not self.skipped[c]:
                self._set_field(c, True)
        self.hot = hot
        self._hot_next = 0
        self._hot_turn = False

    def _scan_hot(self):
        """Read the hot cell whose turn it is, if its field has had its lead
        (a cell just made hot is read in its own turn until then)."""
        hot = self.hot
        k = self._hot_next
        if k >= len(hot):
            k = 0
        c = hot[k]
        self._hot_next = k + 1
        since = self._field_since[c]
        if self._field[c] is not None and (
            since < 0 or self.clock.ticks_diff(self.clock.ticks_us(), since) < self.field_lead_us
        ):
            return
        self.hot_reads += 1
        self.observe(c, self._read(c))

    def _scan_one(self):
        """The step's reads: while cells are hot, one hot read or one turn
        of the sweep's order (they take turns); otherwise the sweep's next
        cells, until STEP_US have passed, the sweep ends or a cell was read
        alone (_scan_next)."""
        if self.cells == 0:
            return
        clock = self.clock
        began = clock.ticks_us()
        self._step_began = began
        if self.hot:
            turn = self._hot_turn
            self._hot_turn = not turn
            if turn:
                self._scan_hot()
            else:
                self._scan_next()
            return
        while self._scan_next():
            if self.next_cell == 0 or clock.ticks_diff(clock.ticks_us(), began) >= STEP_US:
                return

    def _scan_next(self):
        """Read the sweep's next cell (or run of cells) and move on ->
        whether the step may go on: after the paths of a table at rest (a
        run of quiet cells, a pair of tags read together, cells read early)
        it may; after a cell read alone (a change, or a reader or board
        without those paths: one cell a step, as the tests' scripted
        readers expect) it may not."""
        n = self.cells
        i = self.next_cell
        sharing = self._sharing
        early = self._early
        if early[i]:
            # read with cell i - overlap: only the fields move on, as after
            # a read (no step timed: nothing was read), and this step goes
            # on with the next cell
            while early[i]:
                early[i] = False
                if sharing:
                    if self._lit == 0:
                        self._lit = 1
                    self._field_after_read(i)
                i += 1
                if i >= n:
                    self._advance(i)
                    return True
            self.next_cell = i
        if self._probes is not None and self.confirmed[i] is None:
            # (a cell reported with a tag or an error is never quiet)
            k = self._scan_quiet(i)
            if k != i:
                self._advance(k)
                return True
        if self.overlap and self._pairable(i):
            self._read_pair(i, i + self.overlap)
            return True
        if sharing:
            self._field_before_read(i)
        reading = self._read(i)
        if sharing:
            self._field_after_read(i)
        self.observe(i, reading)
        self._advance(i + 1)
        return False

    def _advance(self, i):
        """The sweep's next cell is i (the sweep ends at the board's last)."""
        if i >= self.cells:
            i = 0
            self.sweeps += 1
            now = self.clock.ticks_us()
            if self._sweep_start is not None:
                self.sweep_us = self.clock.ticks_diff(now, self._sweep_start)
            if self._quickest_us:
                self._cell_us = self._quickest_us
                self._quickest_us = 0
                if self._sharing:
                    self._size_window()
            self._sweep_start = now
        self.next_cell = i

    def _pairable(self, i):
        """Whether cell i is read together with cell j = i + overlap: both
        readers found a tag last time (MFRC522.tagged()), neither
        reader skipped nor its cell hot, j in this sweep, and j's
        time-shared field on (the window lights it overlap cells early;
        _read_pair waits for what is left of its lead, as for cell i's)."""
        j = i + self.overlap
        if j >= self.cells:
            return False
        ri = self.readers[i]
        rj = self.readers[j]
        if ri is None or rj is None or self.skipped[i] or self.skipped[j]:
            return False
        if not ri.tagged() or not rj.tagged():
            return False
        hot = self.hot
        if hot and (i in hot or j in hot):
            return False
        return not (self._sharing and self._field_since[j] < 0)

    def _read_pair(self, i, j):
        """Read cells i and j with their airtime overlapped
        (MFRC522.read_pair), debounce both; j's own turn in the sweep then
        only moves the fields on (early)."""
        sharing = self._sharing
        if sharing:
            self._field_before_read(i)
            clock = self.clock
            left = self.field_lead_us - clock.ticks_diff(clock.ticks_us(), self._field_since[j])
            if left > 0:
                # (a board whose sweep is shorter than the lead: cell i waited too)
                self.field_waits += 1
                sleep_us = getattr(clock, "sleep_us", None)
                if sleep_us is not None:
                    sleep_us(left)
        rj = self.readers[j]
        try:
            a = self.readers[i].read_pair(rj)
            b = rj.pair_reading
        except Exception:  # noqa: BLE001 - a reader fault is that cell's error
            a = b = proto.ERR_TIMEOUT
        if isinstance(a, int):
            a = self._after_read(i, a)
        if isinstance(b, int):
            b = self._after_read(j, b)
        if sharing:
            self._field_after_read(i)
        self._early[j] = True
        self.pair_reads += 2
        # observe()'s steady case written out (the same tags, reported:
        # the pairs of a table at rest, ~0.1 ms of calls a pair on rp2040js),
        # once per cell: a two-turn loop over the cells cost 1.3 ms a
        # sweep more on rp2040js (27.8 -> 29.1 ms, the booted sweep_us)
        confirmed = self.confirmed
        candidate = self.candidate
        if a is candidate[i] and a is confirmed[i]:
            self.last_read[i] = a
            self.agree[i] += 1
            self.disagree[i] = 0
        else:
            self.observe(i, a)
        if b is candidate[j] and b is confirmed[j]:
            self.last_read[j] = b
            self.agree[j] += 1
            self.disagree[j] = 0
        else:
            self.observe(j, b)
        self._advance(i + 1)

    def _scan_quiet(self, i):
        """Read the quiet cells from cell i on (one while cells are hot: a
        hot read comes between every two), none begun STEP_US or more after
        the step began, and never past the sweep's end -> the cell after the
        last one read (i: cell i is not quiet, the usual path reads it).

        A quiet cell was reported empty and read empty last time, its reader
        is not skipped, it is not hot, and its time-shared field has had its
        lead. It is read with the reader's probe(): one call that sends
        WUPA, decides "empty" and, when it is, switches this cell's field
        off and the field of the cell `ahead` places on -- what
        _field_before_read, _read, _field_after_read and observe do for an
        empty cell, the same frames and field switches in the same order,
        without their Python calls (the board's step is most of an empty
        cell's time on an RP2040; docs/firmware.md). A cell that answers is
        read to the end the usual way (reader.finish) and ends the run. A
        table at rest is almost all quiet cells."""
        n = self.cells
        probes = self._probes
        if probes is None:
            return i
        if self._qp is not None:
            # (_quiet_setup: sharing fields, two cells or more)
            if self._lit != self._ahead:
                return i  # the window of lit fields is being resized
            end = i + (1 if self.hot else QUIET_RUN_COMPILED)
            return self._quiet_run(i, end if end < n else n)
        confirmed = self.confirmed
        candidate = self.candidate
        skipped = self.skipped
        hot = self.hot
        sharing = self._sharing
        since = self._field_since
        clock = self.clock
        ticks_us = clock.ticks_us
        ticks_diff = clock.ticks_diff
        lead = self.field_lead_us
        ahead = self._ahead
        keep = self._keep
        early = self._early
        end = i + 1 if hot else n
        if sharing and (n < 2 or self._lit != ahead):
            return i  # the window of lit fields is being resized
        now = ticks_us()
        began = self._step_began  # (bounded by the step's time, not the run's)
        while i < end:
            if ticks_diff(now, began) >= STEP_US:
                break
            probe = probes[i]
            if probe is None or confirmed[i] is not None or candidate[i] is not None or skipped[i] or early[i]:
                break
            if hot and i in hot:
                break
            on = None
            if sharing:
                lit = since[i]
                if lit < 0 or ticks_diff(now, lit) < lead:
                    break
                last = self._read_start
                if last is not None:
                    step = ticks_diff(now, last)
                    if step > 0 and (self._quickest_us == 0 or step < self._quickest_us):
                        self._quickest_us = step
                self._read_start = now
                j = i + ahead
                if j >= n:
                    j -= n
                if keep:
                    st = probe(False, None)
                else:
                    if since[j] < 0 and self._field[j] is not None and not skipped[j]:
                        on = self.readers[j]
                    st = probe(True, on)
            else:
                st = probe(False, None)
            if st is not None:
                # an answer (or a fault): the read goes on the usual way
                reading = self._read(i, st)
                if sharing:
                    self._field_after_read(i)
                self.observe(i, reading)
                return i + 1
            now = ticks_us()
            if sharing and not keep:
                since[i] = -1
                if on is None:
                    self.fields_on -= 1
                else:
                    since[j] = now
            self.last_read[i] = None
            self.agree[i] += 1
            self.disagree[i] = 0
            self.quiet_reads += 1
            i += 1
        return i

    def _quiet_setup(self):
        """Use the compiled quiet run (mfrc522.compiled_quiet(): the rp2
        port) when every reader offers it (quiet_route()), on one SPI bus
        with one transfer buffer: _field_since becomes the array it keeps
        the fields' times in."""
        n = self.cells
        if n < 2:
            return
        routes = []
        for r in self.readers:
            q = getattr(r, "quiet_route", None)
            q = q() if q is not None else None
            if q is None:
                return
            routes.append(q)
        first = routes[0]
        limit = 0
        for q in routes:
            if q[0] is not first[0] or q[1] != first[1] or q[6] is not first[6] or q[7] is not first[7]:
                return
            if q[5] > limit:
                limit = q[5]
        from array import array

        p = array("i", [0] * (16 + 4 * n))
        p[0] = first[1]
        p[3] = n
        p[6] = limit
        for c in range(n):
            q = routes[c]
            p[16 + 4 * c] = q[2]
            p[17 + 4 * c] = q[3]
            p[18 + 4 * c] = q[4]
            p[19 + 4 * c] = 1 if self.skipped[c] else 0
        self._field_since = array("i", self._field_since)
        self._qp = p
        self._quiet = first[0]
        self._qbuf = first[6]
        self._qscript = first[7]

    def _quiet_run(self, i, end):
        """_scan_quiet's loop as one compiled call (rp2 port): the quiet
        cells from i on, up to end, read by quiet() with the same frames and
        field switches as probe() -> the cell after the last one read.
        Cells read early (with the cell `overlap` before them) among them
        are passed over as _scan_next passes them: their field off and the
        next one on, no read (a half-tagged table with overlapped reads
        would otherwise read its empty cells one call each).
        What probe()'s loop does besides for a quiet cell is left out here:
        last_read is None and disagree 0 already (what made the cell
        quiet), and agree counts nothing while the cell stays empty."""
        confirmed = self.confirmed
        candidate = self.candidate
        skipped = self.skipped
        readers = self.readers
        hot = self.hot
        early = self._early
        p = self._qp
        quiet = self._quiet
        if p is None or quiet is None:
            return i
        k = i
        passed = 0  # cells read early (with cell - overlap): the run passes over them
        while k < end:
            if early[k] and k > i:
                p[19 + 4 * k] |= 2
                passed += 1
                k += 1
                continue
            if confirmed[k] is not None or candidate[k] is not None or skipped[k] or readers[k]._idle or early[k]:
                break
            if hot and k in hot:
                break
            k += 1
        if k == i:
            return i
        p[1] = i
        p[2] = k
        p[4] = self._ahead
        p[5] = self.field_lead_us
        last = self._read_start
        p[7] = -1 if last is None else last
        p[8] = self._quickest_us
        quiet(p, self._field_since, self._qscript, self._qbuf)
        c = p[1]
        done = c - i  # cells read, and cells passed over
        if passed:
            for e in range(i + 1, k):
                if early[e]:
                    p[19 + 4 * e] &= 1
                    if e < c:
                        early[e] = False  # (one the run stopped at keeps its own turn)
                        done -= 1
        if p[7] >= 0:
            self._read_start = p[7]
        self._quickest_us = p[8]
        self.fields_on -= p[9]
        self.quiet_reads += done
        routed = p[11]
        if routed >= 0:
            r = readers[routed]
            sh = r._shared
            if sh is not None:
                sh[0] = r._index
        if p[10]:
            # cell c answered: its read goes on the usual way
            reading = self._read(c, readers[c].quiet_answered())
            self._field_after_read(c)
            self.observe(c, reading)
            return c + 1
        return c

    def _retry_due(self, i):
        """Whether reader i may be re-initialised now (retry_ms 0: never)."""
        if not self.retry_ms:
            return False
        last = self._retry_at[i]
        return last is None or self.clock.ticks_diff(self.clock.ticks_ms(), last) >= self.retry_ms

    def _read(self, i, st=None):
        """Read cell i -> its reading (st: the WUPA's status from the
        reader's probe(): the read goes on from there)."""
        r = self.readers[i]
        if r is None:
            return proto.ERR_TIMEOUT
        if self.skipped[i]:
            # A reader that failed its init and then timed out (missing,
            # unpowered, a loose cable) is not read: a read would only wait
            # out its deadlines. It is tried again every retry_ms, so a
            # sweep with a dead reader costs about what an empty cell does.
            self.read_errors[i] += 1
            if not self._retry_due(i):
                return proto.ERR_TIMEOUT
            self.reinits += 1
            if not self._init_reader(i):
                return proto.ERR_TIMEOUT
            self.skipped[i] = False
            if self._qp is not None:
                self._qp[19 + 4 * i] = 0
            if self._field[i] is not None:
                self._field_before_read(i)  # init() left it off: on, and its power-up waited for
        try:
            reading = r.read_uid() if st is None else r.finish(st)
        except Exception:  # noqa: BLE001 - a reader fault is that cell's error
            reading = proto.ERR_TIMEOUT
        return self._after_read(i, reading)

    def _after_read(self, i, reading):
        """A read error's bookkeeping for cell i (a timed-out reader is
        re-initialised, or skipped) -> the reading."""
        if isinstance(reading, int):
            self.read_errors[i] += 1
            if reading == proto.ERR_TIMEOUT:
                if self._retry_due(i):
                    # the chip stopped answering (brown-out, loose cable):
                    # re-init it now
                    self.reinits += 1
                    self._init_reader(i)
                # an init that failed (now or before) and a timeout: there
                # is no chip to read (a clone with an unknown version fails
                # init too, but its reads do not time out)
                self.skipped[i] = not self.ready[i]
                if self._qp is not None:
                    self._qp[19 + 4 * i] = 0 if self.ready[i] else 1
        return reading

    def observe(self, i, reading):
        """Debounce one reading of cell i; send CELL when the confirmed state
        changes. A tag needs `tag` agreeing reads, empty `empty` reads, an
        error `error` reads; a cell whose reads keep disagreeing with its
        state for `unstable` reads becomes ERR_UNSTABLE. A read error never
        counts towards empty."""
        self.last_read[i] = reading
        cand = self.candidate[i]
        if reading is cand and reading is self.confirmed[i]:
            # The steady case, every sweep on a quiet table: the same reading
            # as last time (None, or the very UID object the driver keeps
            # returning for a tag that stays put), already reported. The same
            # object agrees with itself by _same's rules, so this is the
            # general path below without its two calls (~50 us a cell on
            # rp2040js).
            self.agree[i] += 1
            self.disagree[i] = 0
            return
        if _same(reading, cand):
            self.agree[i] += 1
            self.candidate[i] = reading  # keep the latest error code
        else:
            self.candidate[i] = reading
            self.agree[i] = 1
        cur = self.confirmed[i]
        if _same(reading, cur):
            self.disagree[i] = 0
            return
        if reading is None:
            need = self.need_empty
        elif isinstance(reading, int):
            need = self.need_error
        else:
            need = self.need_tag
        if self.agree[i] >= need:
            self._confirm(i, reading)
            return
        self.disagree[i] += 1
        if self.disagree[i] >= self.need_unstable and not (
            isinstance(cur, int) and cur == proto.ERR_UNSTABLE
        ):
            self._confirm(i, proto.ERR_UNSTABLE)

    def _confirm(self, i, state):
        self.disagree[i] = 0
        if _identical(state, self.confirmed[i]):
            return
        self.confirmed[i] = state
        self.events += 1
        self._send(proto.CELL, proto.encode_cell_event(i, state))
