// A virtual MicroPython board: real MicroPython (the WebAssembly port) whose
// REPL and sys.stdin/sys.stdout are bridged to the master side of a
// pseudo-terminal, so host tools (mpremote, tablesense flash/diag) open the
// slave path exactly as they open /dev/ttyACM0.
//
//   node mpboard.mjs SPEC.json        (started by tablesense/sim/mpboard.py)
//
// SPEC: {"fd": master pty fd (O_NONBLOCK, inherited), "micropython": path of
//        micropython.mjs, "uid": hex unique id, "heapsize": bytes,
//        "rom": {"/rom/machine.py": "/abs/source.py", ...},
//        "soft_reset": true|false}
//
// What a real board does and the WebAssembly port does not, done here:
// - boot: run boot.py then main.py from the filesystem, then the REPL;
// - soft reset (Ctrl-D at an empty REPL line, machine.soft_reset()): a fresh
//   interpreter over the same files, "MPY: soft reboot"; in the raw REPL
//   main.py is skipped and the raw REPL comes back, as on a real board;
//   with "soft_reset": false the board lacks it (Ctrl-D is ignored);
// - hard reset (machine.reset()): a fresh interpreter, main.py runs again;
// - raw-paste mode: the port blocks on it, so we answer "R\x00" (not
//   supported), as old firmware does, and the host falls back to the plain
//   raw REPL;
// - the keyboard interrupt: a received Ctrl-C (when micropython.kbd_intr has
//   not disabled it) interrupts running code, as the USB CDC driver does.
// The filesystem lives in memory (Emscripten MEMFS) and survives resets.
import fs from "node:fs";

const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const FD = spec.fd;
const { loadMicroPython } = await import(spec.micropython);
const HIDDEN = new Set(["/tmp", "/home", "/dev", "/proc", "/rom"]);
const SLEEP = new Int32Array(new SharedArrayBuffer(4));

function sleepMs(ms) {
  Atomics.wait(SLEEP, 0, 0, ms);
}

function log(msg) {
  process.stderr.write(`mpboard: ${msg}\n`);
}

// ---- the pty --------------------------------------------------------------

const inq = []; // received bytes not consumed yet
const tmp = Buffer.alloc(4096);
let out = []; // bytes MicroPython printed, not yet written
let lastInput = Date.now();

function pump() {
  for (;;) {
    let n;
    try {
      n = fs.readSync(FD, tmp, 0, tmp.length, null);
    } catch (e) {
      if (e.code === "EAGAIN" || e.code === "EIO") return; // nothing / no host
      throw e;
    }
    if (n <= 0) return;
    for (let i = 0; i < n; i++) inq.push(tmp[i]);
    lastInput = Date.now();
  }
}

// The port reports Emscripten's errno numbers (ENOENT is 44 there); real
// boards, and mpremote's error mapping, use MicroPython's (ENOENT 2). Map the
// common ones in REPL output (never in the firmware's binary frames).
const ERRNO = { 44: 2, 20: 17, 54: 20, 31: 21, 28: 22, 2: 13, 8: 9, 51: 28, 55: 39, 63: 1 };

function fixErrno(buf) {
  const text = buf.toString("latin1");
  if (!text.includes("OSError: ")) return buf;
  return Buffer.from(
    text.replace(/OSError: (\d+)/g, (m, n) => (n in ERRNO ? `OSError: ${ERRNO[n]}` : m)),
    "latin1",
  );
}

function flush() {
  if (out.length === 0) return;
  let buf = Buffer.from(out);
  out = [];
  if (!running) buf = fixErrno(buf);
  let off = 0;
  const deadline = Date.now() + 2000;
  while (off < buf.length) {
    try {
      off += fs.writeSync(FD, buf, off, buf.length - off);
    } catch (e) {
      if (e.code !== "EAGAIN" && e.code !== "EIO") throw e;
      // Nobody reads (host away): like USB CDC, drop after a while.
      if (Date.now() > deadline) return;
      sleepMs(1);
    }
  }
}

function emit(text) {
  for (const b of Buffer.from(text, "latin1")) out.push(b);
}

// ---- the interpreter -------------------------------------------------------

let mp = null;
let pendingReset = null; // "hard" | "soft" | "bootloader"
let resetCause = 1; // fake_machine.PWRON_RESET
let muted = false;
let running = false; // boot.py/main.py in progress (not the REPL)

function stdinChar() {
  // Called when Python code reads sys.stdin (the firmware's transport).
  flush();
  if (inq.length === 0) pump();
  if (inq.length === 0) {
    // Idle: a real board would wait in WFI; do not burn a host core.
    if (Date.now() - lastInput > 200) sleepMs(running ? 4 : 1);
    return null; // read() returns b"" (nothing waiting)
  }
  const c = inq.shift();
  const ichr = mp._module._mp_hal_get_interrupt_char();
  if (ichr >= 0 && c === ichr) {
    mp._module._mp_sched_keyboard_interrupt();
    return null;
  }
  return c;
}

const jsBoard = {
  uid: spec.uid,
  reset(kind) {
    pendingReset = String(kind);
  },
  reset_cause() {
    return resetCause;
  },
  idle() {
    flush();
    pump();
    if (inq.length === 0) sleepMs(1);
  },
};

function snapshotFiles() {
  const files = [];
  if (mp === null) return files;
  const walk = (dir) => {
    for (const name of mp.FS.readdir(dir)) {
      if (name === "." || name === "..") continue;
      const path = (dir === "/" ? "" : dir) + "/" + name;
      if (HIDDEN.has(path)) continue;
      const st = mp.FS.stat(path);
      if (mp.FS.isDir(st.mode)) {
        files.push([path, null]);
        walk(path);
      } else {
        files.push([path, mp.FS.readFile(path)]);
      }
    }
  };
  walk("/");
  return files;
}

async function newInterpreter(files) {
  mp = await loadMicroPython({
    heapsize: spec.heapsize || 8 * 1024 * 1024,
    stdin: stdinChar,
    stdout: (data) => {
      if (!muted) for (const b of data) out.push(b);
    },
    stderr: (data) => {
      if (!muted) for (const b of data) out.push(b);
    },
    linebuffer: false,
  });
  mp.registerJsModule("_mpboard", jsBoard);
  for (const [dest, src] of Object.entries(spec.rom || {})) {
    mkdirs(dest);
    mp.FS.writeFile(dest, fs.readFileSync(src));
  }
  for (const [path, data] of files) {
    if (data === null) {
      try {
        mp.FS.mkdir(path);
      } catch (e) {
        /* exists */
      }
    } else {
      mp.FS.writeFile(path, data);
    }
  }
  mp.runPython("import sys\nsys.path.append('/rom')\n");
}

function mkdirs(path) {
  let cur = "";
  for (const p of path.split("/").filter(Boolean).slice(0, -1)) {
    cur += "/" + p;
    try {
      mp.FS.mkdir(cur);
    } catch (e) {
      /* exists */
    }
  }
}

function exists(path) {
  try {
    mp.FS.stat(path);
    return true;
  } catch (e) {
    return false;
  }
}

function runFile(name) {
  // pyexec_file: run a top-level script as __main__; print what it raises.
  if (!exists("/" + name)) return;
  running = true;
  try {
    mp.runPython(
      "import sys\n" +
        "try:\n" +
        `    exec(open('/${name}').read(), {'__name__': '__main__', '__file__': '${name}'})\n` +
        "except SystemExit:\n" +
        "    pass\n" +
        "except BaseException as _e:\n" +
        "    sys.print_exception(_e)\n",
    );
  } catch (e) {
    emit(`${e.message}\r\n`);
  } finally {
    running = false;
  }
  flush();
}

// REPL bookkeeping the port does not expose.
let rawMode = false;
let lineLen = 0; // bytes typed since the last prompt / line end
let pasteProbe = 0; // progress through Ctrl-E 'A' Ctrl-A

async function boot(kind) {
  // kind: "power" | "hard" | "soft"
  const files = snapshotFiles();
  const wasRaw = rawMode;
  resetCause = kind === "soft" ? 5 : kind === "hard" ? 3 : 1;
  if (kind === "soft") emit("MPY: soft reboot\r\n");
  flush();
  pendingReset = null;
  await newInterpreter(files);
  runFile("boot.py");
  if (!(kind === "soft" && wasRaw)) runFile("main.py");
  while (pendingReset !== null) {
    // main.py asked for a reset (REBOOT command, machine.reset()).
    const again = pendingReset;
    pendingReset = null;
    resetCause = again === "soft" ? 5 : 3;
    if (again === "bootloader") log("machine.bootloader(): a virtual board has no boot ROM; restarting instead");
    const keep = snapshotFiles();
    await newInterpreter(keep);
    runFile("boot.py");
    runFile("main.py");
  }
  muted = true;
  mp.replInit();
  if (kind === "soft" && wasRaw) {
    mp.replProcessChar(1);
    muted = false;
    emit("raw REPL; CTRL-B to exit\r\n>");
    rawMode = true;
  } else {
    muted = false;
    emit("MicroPython v1.27.0 on tablesense virtual board (WebAssembly)\r\n>>> ");
    rawMode = false;
  }
  lineLen = 0;
  pasteProbe = 0;
  flush();
}

async function feed(c) {
  // One received byte for the REPL; returns after any reset it causes.
  if (rawMode && pasteProbe > 0) {
    const want = pasteProbe === 1 ? 0x41 : 0x01;
    if (c === want) {
      pasteProbe += 1;
      if (pasteProbe === 3) {
        pasteProbe = 0;
        emit("R\x00"); // raw-paste not supported: use the plain raw REPL
      }
      return;
    }
    // Not a raw-paste probe (line noise): drop the Ctrl-E, which would make
    // the port block reading raw-paste data.
    pasteProbe = 0;
  }
  if (rawMode && c === 0x05 && lineLen === 0) {
    pasteProbe = 1;
    return;
  }
  if (c === 0x04 && lineLen === 0) {
    if (spec.soft_reset === false) return; // a board without soft reset
    await boot("soft");
    return;
  }
  const r = mp.replProcessChar(c);
  if (c === 0x01) {
    rawMode = true;
    lineLen = 0;
  } else if (c === 0x02) {
    rawMode = false;
    lineLen = 0;
  } else if (c === 0x03 || c === 0x04 || (!rawMode && (c === 0x0d || c === 0x0a))) {
    lineLen = 0; // in the raw REPL a newline is part of the code
  } else {
    lineLen += 1;
  }
  if (pendingReset !== null) {
    const kind = pendingReset === "soft" ? "soft" : "hard";
    rawMode = kind === "soft" ? rawMode : false;
    await boot(kind);
    return;
  }
  if (r !== 0 && !rawMode) {
    // The port's REPL wants to exit (Ctrl-D on an empty line it saw): a real
    // board soft-resets instead.
    await boot("soft");
  }
}

async function loop() {
  let idleSince = Date.now();
  for (;;) {
    pump();
    if (inq.length > 0) {
      while (inq.length > 0) {
        const c = inq.shift();
        await feed(c);
      }
      flush();
      idleSince = Date.now();
      continue;
    }
    flush();
    const idle = Date.now() - idleSince;
    await new Promise((r) => setTimeout(r, idle > 1000 ? 10 : 1));
  }
}

// SIGTERM keeps its default action (exit) even while MicroPython runs synchronously.
await boot("power");
await loop();
