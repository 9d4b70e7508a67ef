#!/usr/bin/env node
// One emulated RP2040 sensor board: the RP2040 B1 boot ROM and a MicroPython UF2
// running in rp2040js (npm, pinned), with what a real board has around the chip.
//
// Started by tablesense.sim.rp2040.board (Python), which owns the pseudo-terminal
// and the world (the MFRC522 chips and the tags on them, tablesense.sim.mfrc522_emu).
//
//   stdin  / stdout   the USB CDC byte stream (host -> board / board -> host)
//   --out-fd (write)      device messages to Python (SPI bytes, chip-select levels,
//                     I2C, decoded LED frames); see MSG_* below
//   --in-fd (read)        Python's one-byte answers to SPI and I2C messages, read
//                     synchronously: the CPU stops while the chip model answers
//   stderr            status lines for people ("[rp2040] ...")
//
// Exit codes: 0 stopped (SIGTERM/stdin closed), 3 the firmware reset the chip
// (machine.reset(), watchdog): Python starts the process again with the same
// flash file, as a real board comes back from a reset.
//
// What stock rp2040js 1.4.1 lacks and this file adds (docs/firmware.md):
//  1. USB OUT reads are parked while the host has nothing to send (a real host
//     NAKs; stock rp2040js answers a zero-length packet every 10 us, which makes
//     Python ~3x slower and keeps sleeps from fast-forwarding), and host bytes
//     wait in our own queue (the stock 512-byte FIFO drops on overflow).
//  2. A NOR flash command model on IO_QSPI/SSI (page program, erases, JEDEC id,
//     unique id), written through to the board's flash file: littlefs persists,
//     machine.unique_id() is the board's own.
//  3. SPI answers one byte-time after the byte was sent (an alarm on the
//     emulated clock), so DMA transfers (>= 32 bytes) do not overflow the RX FIFO.
//  4. Core 0 only: the firmware must not start a thread on core 1.
//  5. Never ahead of real time, and a core asleep with nothing scheduled waits for the host
//     (runPaced, at the end): an idle board costs the host no CPU.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    rom: { type: 'string' },
    uf2: { type: 'string' },
    flash: { type: 'string' },
    uid: { type: 'string', default: '7270323034306a73' },
    'spi-id': { type: 'string', default: '0' },
    miso: { type: 'string', default: '-1' }, // the MISO GPIO: its pad's pull says what an absent chip reads
    'i2c-id': { type: 'string', default: '1' },
    watch: { type: 'string', default: '' },
    'led-pin': { type: 'string', default: '-1' },
    'no-device': { type: 'boolean', default: false },
    'out-fd': { type: 'string', default: '3' },
    'in-fd': { type: 'string', default: '4' },
    rp2040js: { type: 'string' }, // the npm package's folder (default: resolved from here)
  },
});
const { Simulator, USBCDC, ConsoleLogger, LogLevel, BasePeripheral } = await import(
  args.rp2040js ? pathToFileURL(path.join(args.rp2040js, 'dist', 'esm', 'index.js')).href : 'rp2040js'
);

const FLASH_START = 0x10000000;
const FLASH_SIZE = 2 * 1024 * 1024; // W25Q16 on the Pico
const MSG_SPI = 0x53; // 'S' mosi, f64 time_us          -> 1 byte miso (MISO pad not pulled up)
const MSG_SPI_PULLED_UP = 0x55; // 'U' the same, MISO's pad pulled up
const MSG_SPI_POSTED = 0x41; // 'A' mosi, f64 time_us   (MISO known: no answer awaited)
const MSG_PIN = 0x47; // 'G' pin, level
const MSG_I2C = 0x49; // 'I' op, value                   -> 1 byte (ack / data) for c, w, r
const MSG_LEDS = 0x4c; // 'L' u16 count, count*3 bytes RGB
const MSG_EVENT = 0x45; // 'E' code (1 = USB connected)

const log = (msg) => process.stderr.write(`[rp2040] ${msg}\n`);
const simulator = new Simulator();
const mcu = simulator.rp2040;
const simUs = () => simulator.clock.nanos / 1000;
mcu.logger = new ConsoleLogger(LogLevel.Error);

// --- boot ROM -------------------------------------------------------------------
{
  const rom = fs.readFileSync(args.rom);
  mcu.loadBootrom(new Uint32Array(rom.buffer, rom.byteOffset, rom.length >> 2));
}

// --- flash: a file per board, created from the UF2 the first time ---------------------
const flash = mcu.flash;
let flashFd;
{
  let fresh = true;
  try {
    const st = fs.statSync(args.flash);
    fresh = st.size !== FLASH_SIZE;
  } catch {
    fresh = true;
  }
  if (fresh) {
    flash.fill(0xff, 0, FLASH_SIZE);
    const uf2 = fs.readFileSync(args.uf2);
    let blocks = 0;
    for (let off = 0; off + 512 <= uf2.length; off += 512) {
      const b = uf2.subarray(off, off + 512);
      const dv = new DataView(b.buffer, b.byteOffset, 512);
      if (dv.getUint32(0, true) !== 0x0a324655 || dv.getUint32(4, true) !== 0x9e5d5157) continue;
      if (dv.getUint32(8, true) & 1) continue; // "not main flash"
      const addr = dv.getUint32(12, true);
      const size = dv.getUint32(16, true);
      if (addr < FLASH_START || addr + size > FLASH_START + FLASH_SIZE) continue;
      flash.set(b.subarray(32, 32 + size), addr - FLASH_START);
      blocks++;
    }
    fs.writeFileSync(args.flash, flash.subarray(0, FLASH_SIZE));
    log(`new flash ${args.flash} from ${args.uf2} (${blocks} UF2 blocks)`);
  } else {
    const fd = fs.openSync(args.flash, 'r');
    fs.readSync(fd, flash, 0, FLASH_SIZE, 0);
    fs.closeSync(fd);
  }
  flashFd = fs.openSync(args.flash, 'r+');
}
const persist = (start, len) => {
  fs.writeSync(flashFd, flash, start, len, start);
};

// --- 2. NOR flash commands over IO_QSPI chip select + SSI data register ----------------
{
  const SSI_SSIENR = 0x08, SSI_TXFLR = 0x20, SSI_RXFLR = 0x24, SSI_SR = 0x28, SSI_DR0 = 0x60;
  const SS_CTRL = 0x0c;
  const uid = Buffer.from(args.uid, 'hex');
  const JEDEC = [0xef, 0x40, 0x15];
  let cs = false;
  let cmd = [];
  const rx = [];
  const answer = (i) => {
    const c = cmd[0];
    if (c === 0x9f && i >= 1 && i <= 3) return JEDEC[i - 1];
    if (c === 0x4b && i >= 5 && i < 5 + uid.length) return uid[i - 5];
    return 0; // status registers: never busy
  };
  const addr = () => (cmd[1] << 16) | (cmd[2] << 8) | cmd[3];
  const erase = (a, size) => {
    a -= a % size;
    if (a + size <= FLASH_SIZE) {
      flash.fill(0xff, a, a + size);
      persist(a, size);
    }
  };
  const run = () => {
    if (!cmd.length) return;
    switch (cmd[0]) {
      case 0x02: {
        const a = addr();
        const page = a & ~0xff;
        for (let i = 4; i < cmd.length; i++) flash[page + ((a + i - 4) & 0xff)] &= cmd[i];
        if (page + 256 <= FLASH_SIZE) persist(page, 256);
        break;
      }
      case 0x20: erase(addr(), 4096); break;
      case 0x52: erase(addr(), 32768); break;
      case 0xd8: erase(addr(), 65536); break;
      case 0x60:
      case 0xc7:
        flash.fill(0xff, 0, FLASH_SIZE);
        persist(0, FLASH_SIZE);
        break;
    }
  };
  class IOQSPI extends BasePeripheral {
    constructor() {
      super(mcu, 'IO_QSPI');
      this.regs = new Map();
    }
    readUint32(offset) {
      return this.regs.get(offset) ?? 0;
    }
    writeUint32(offset, value) {
      this.regs.set(offset, value >>> 0);
      if (offset === SS_CTRL) {
        const low = ((value >>> 8) & 3) === 2; // OUTOVER = drive low: a command starts
        if (low && !cs) cmd = [];
        else if (!low && cs) {
          run();
          cmd = [];
        }
        cs = low;
      }
    }
  }
  mcu.peripherals[0x40018] = new IOQSPI();
  const ssi = mcu.peripherals[0x18000];
  const read0 = ssi.readUint32.bind(ssi);
  const write0 = ssi.writeUint32.bind(ssi);
  ssi.writeUint32 = (offset, value) => {
    if (offset === SSI_DR0) {
      if (cs) {
        cmd.push(value & 0xff);
        rx.push(answer(cmd.length - 1));
      } else rx.push(0);
    } else if (offset === SSI_SSIENR && !(value & 1)) rx.length = 0;
    write0(offset, value);
  };
  ssi.readUint32 = (offset) => {
    switch (offset) {
      case SSI_DR0: return rx.length ? rx.shift() : read0(offset);
      case SSI_RXFLR: return rx.length;
      case SSI_TXFLR: return 0;
      case SSI_SR: return 0x06 | (rx.length ? 0x08 : 0); // TFE | TFNF | RFNE
    }
    return read0(offset);
  };
}

// --- the device channel to Python ------------------------------------------------------
const OUT_FD = Number(args['out-fd']);
const IN_FD = Number(args['in-fd']);
const device = !args['no-device'];
const one = Buffer.alloc(1);
const send = (buf) => {
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(OUT_FD, buf, off, buf.length - off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
};
const ask = (buf) => {
  send(buf);
  for (;;) {
    try {
      const n = fs.readSync(IN_FD, one, 0, 1, null);
      if (n === 1) return one[0];
      // Python went away: end here, not after this loop (it would spin on
      // the closed pipe for ever, a host core busy: a killed benchmark left
      // one such emulator behind)
      if (n === 0) finish(0, true);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
};

// --- 3. SPI: every byte answered by Python's chip model, one byte-time later ------------
let spiStart = true; // the next SPI byte opens a transaction (an address byte)
let spiReading = false;
if (device) {
  const spi = mcu.spi[Number(args['spi-id'])];
  const msg = Buffer.alloc(10);
  let reply = 0xff;
  // A byte no chip drives reads the MISO pad's pull: RP2040 pads reset pulled
  // down (0x00); the firmware pulls MISO up (0xFF). Python's chip model is told
  // which with every byte it answers.
  const misoPin = Number(args.miso) >= 0 ? mcu.gpio[Number(args.miso)] : null;
  const alarm = mcu.clock.createAlarm(() => spi.completeTransmit(reply));
  // The MFRC522's SPI (datasheet 8.1.2) fixes MISO for two kinds of byte: the
  // address byte that opens a transaction, and every data byte of a register
  // write, are answered 0x00. Those are posted (the chip model still gets them,
  // in order, with their time) and only the bytes of a register read wait for
  // the chip's answer: 2-3x fewer round trips to Python. A transaction starts
  // after any chip-select activity (a watched GPIO change or an I2C transfer).
  spi.onTransmit = (value) => {
    msg[1] = value & 0xff;
    msg.writeDoubleLE(simUs(), 2);
    if (spiStart) {
      spiStart = false;
      spiReading = (value & 0x80) !== 0;
      msg[0] = MSG_SPI_POSTED;
      send(msg);
      reply = 0;
    } else if (!spiReading) {
      msg[0] = MSG_SPI_POSTED;
      send(msg);
      reply = 0;
    } else {
      msg[0] = misoPin !== null && misoPin.pullupEnabled ? MSG_SPI_PULLED_UP : MSG_SPI;
      reply = ask(msg);
    }
    const hz = spi.clockFrequency || 1e6;
    alarm.schedule(Math.max(100, Math.round(8e9 / hz)));
  };
}

// --- chip-select lines (GPIO) ---------------------------------------------------------
if (device && args.watch) {
  for (const p of args.watch.split(',').filter(Boolean).map(Number)) {
    const pin = mcu.gpio[p];
    let last = -1;
    const tell = () => {
      const v = pin.value === 0 ? 0 : 1; // Low drives 0; High, or an input with its pull-up, reads 1
      if (v === last) return;
      last = v;
      spiStart = true;
      send(Buffer.from([MSG_PIN, p, v]));
    };
    pin.addListener(tell);
    tell();
  }
}

// --- I2C (MCP23017 chip-select expanders) -------------------------------------------------
if (device) {
  const i2c = mcu.i2c[Number(args['i2c-id'])];
  const op = (code, value = 0) => {
    spiStart = true;
    return Buffer.from([MSG_I2C, code, value & 0xff]);
  };
  i2c.onStart = () => {
    send(op(0x73)); // 's'
    i2c.completeStart();
  };
  i2c.onConnect = (address, mode) => i2c.completeConnect(ask(op(mode ? 0x43 : 0x63, address)) === 1); // 'C' read / 'c' write
  i2c.onWriteByte = (value) => i2c.completeWrite(ask(op(0x77, value)) === 1); // 'w'
  i2c.onReadByte = () => i2c.completeRead(ask(op(0x72))); // 'r'
  i2c.onStop = () => {
    send(op(0x70)); // 'p'
    i2c.completeStop();
  };
}

// --- WS2812 strip: decode the data line into colours -------------------------------------
// A bit is a high pulse: ~0.4 us for 0, ~0.8 us for 1 (then low for the rest of
// 1.25 us); a low gap over 50 us latches the frame. Bits are compared with the
// low time that follows them, so a scaled clock still decodes; the last bit of a
// frame (no low time) is judged against 0.6 us.
if (device && Number(args['led-pin']) >= 0) {
  const pin = mcu.gpio[Number(args['led-pin'])];
  let level = 0;
  let riseAt = 0;
  let fallAt = 0;
  let highNs = -1; // the pulse whose low time we still wait for
  let bits = [];
  const bitOf = (high, low) => (low === null ? high > 600 : high > low);
  const latch = () => {
    if (highNs >= 0) {
      bits.push(bitOf(highNs, null));
      highNs = -1;
    }
    const n = Math.floor(bits.length / 24);
    if (n > 0) {
      const out = Buffer.alloc(3 + 3 * n);
      out[0] = MSG_LEDS;
      out.writeUInt16LE(n, 1);
      for (let i = 0; i < n; i++) {
        const byte = (k) => {
          let v = 0;
          for (let b = 0; b < 8; b++) v = (v << 1) | (bits[i * 24 + k * 8 + b] ? 1 : 0);
          return v;
        };
        const g = byte(0), r = byte(1), b = byte(2); // WS2812 order: G, R, B
        out[3 + 3 * i] = r;
        out[4 + 3 * i] = g;
        out[5 + 3 * i] = b;
      }
      send(out);
    }
    bits = [];
  };
  const latchAlarm = mcu.clock.createAlarm(latch);
  pin.addListener(() => {
    const v = pin.value === 1 ? 1 : 0;
    if (v === level) return;
    level = v;
    const now = simulator.clock.nanos;
    if (v === 1) {
      latchAlarm.cancel();
      if (highNs >= 0) {
        const low = now - fallAt;
        if (low > 50000) latch();
        else {
          bits.push(bitOf(highNs, low));
          highNs = -1;
        }
      }
      riseAt = now;
    } else {
      fallAt = now;
      highNs = now - riseAt;
      latchAlarm.schedule(50000);
    }
  });
}

// --- 1. USB CDC with a parked OUT endpoint -------------------------------------------------
const cdc = new USBCDC(mcu.usbCtrl);
let pending = Buffer.alloc(0);
// A real host cannot write to a board before it has enumerated and the OS has
// made its port usable (~100 ms or more after the USB configuration), by which
// time MicroPython has long mounted its filesystem (_boot.py) and started
// main.py. Our pseudo-terminal exists before the chip even boots, so bytes the
// host writes early wait until 100 ms of emulated time after the connection:
// delivered earlier, a 0x03 in them would interrupt _boot.py, whose bare
// `except:` then formats the filesystem.
const HOST_READY_NS = 100e6;
let hostReady = false;
const pump = () => {
  if (!hostReady) return;
  let i = 0;
  while (i < pending.length && !cdc.txFIFO.full) cdc.sendSerialByte(pending[i++]);
  if (i) pending = pending.subarray(i);
};
let parked = null;
const read0 = mcu.usbCtrl.onEndpointRead;
mcu.usbCtrl.onEndpointRead = (ep, size) => {
  pump();
  if (ep === cdc.outEndpoint && cdc.txFIFO.empty) {
    parked = { ep, size };
    return;
  }
  read0(ep, size);
};
const unpark = () => {
  pump();
  if (parked && !cdc.txFIFO.empty) {
    const { ep, size } = parked;
    parked = null;
    read0(ep, size);
  }
};
const hostWrite = (buf) => {
  pending = pending.length ? Buffer.concat([pending, buf]) : Buffer.from(buf);
  unpark();
  wakePaced(); // a core asleep for want of USB data runs now
};
const readyAlarm = mcu.clock.createAlarm(() => {
  hostReady = true;
  unpark();
});
cdc.onDeviceConnected = () => {
  log(`USB CDC connected at ${simUs().toFixed(0)} us`);
  readyAlarm.schedule(HOST_READY_NS);
  if (device) send(Buffer.from([MSG_EVENT, 1]));
};
cdc.onSerialData = (value) => process.stdout.write(value);
process.stdin.on('data', hostWrite);
process.stdin.on('end', () => finish(0));

// --- resets and the end ----------------------------------------------------------------------
let finished = false;
function finish(code, now = false) {
  if (finished && !now) return;
  finished = true;
  simulator.stop();
  try {
    fs.fsyncSync(flashFd);
    fs.closeSync(flashFd);
  } catch {
    /* already closed */
  }
  if (now) process.exit(code);
  process.stdout.write('', () => process.exit(code));
}
mcu.peripherals[0x40058].onWatchdogTrigger = () => {
  log('reset by the firmware (watchdog)');
  finish(3);
};
process.on('SIGTERM', () => finish(0));
process.on('SIGINT', () => finish(0));

// --- never ahead of real time, never spinning on nothing -------------------------------------
// rp2040js runs slices of emulation back to back as fast as the host lets it. A core asleep
// (WFI/WFE) jumps to its next alarm; with no alarm at all (MicroPython at its prompt, waiting
// for a USB packet the host has not sent) a slice is a million turns of a loop that moves
// nothing, and a board with nothing to do took a whole host core. A real board lives in real
// time: each slice is run, then the next waits until the wall clock has caught up with the
// emulated one, and a core asleep with nothing scheduled waits for the host's next bytes
// (hostWrite wakes it) or IDLE_POLL_MS. A board that falls behind (a busy host, CPU-bound
// firmware) runs the next slice at once and owes nothing: the reference moves up to now.
const IDLE_POLL_MS = 20;
let paceWallMs = performance.now();
let paceSimNs = simulator.clock.nanos;
let paceTimer = null;
const asleepForGood = () => mcu.core.waiting && simulator.clock.nextAlarm === null;
function runPaced() {
  paceTimer = null;
  if (finished) return;
  if (asleepForGood()) {
    paceWallMs = performance.now();
    paceSimNs = simulator.clock.nanos;
    paceTimer = setTimeout(runPaced, IDLE_POLL_MS);
    return;
  }
  simulator.execute(); // one slice (the next one it schedules is cancelled: the pace decides)
  simulator.stop();
  const wallMs = performance.now();
  const aheadMs = (simulator.clock.nanos - paceSimNs) / 1e6 - (wallMs - paceWallMs);
  if (aheadMs <= 0) {
    paceWallMs = wallMs;
    paceSimNs = simulator.clock.nanos;
  }
  paceTimer = setTimeout(runPaced, Math.max(0, aheadMs));
}
function wakePaced() {
  if (paceTimer !== null && !finished) {
    clearTimeout(paceTimer);
    paceTimer = setTimeout(runPaced, 0);
  }
}

mcu.core.PC = FLASH_START;
runPaced();
