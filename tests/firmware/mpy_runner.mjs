// Run Python code on real MicroPython (the WebAssembly port) under Node.js.
//
//   node tests/firmware/mpy_runner.mjs SPEC.json
//
// SPEC: {"files": {"/lib/proto.py": "/abs/host/path.py", ...},
//        "texts": {"/lib/neopixel.py": "source text", ...},
//        "code": "python source", "heapsize": bytes (optional)}
// Files are written into MicroPython's in-memory filesystem (directories are
// created), /lib is put on sys.path, then the code runs. MicroPython's stdout
// goes to our stdout; an uncaught Python exception is printed to stderr and
// the exit status is 1 (2 for a bad spec or a missing file).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, "..", "..", "node_modules", "@micropython",
  "micropython-webassembly-pyscript", "micropython.mjs");

let spec;
try {
  spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
} catch (e) {
  process.stderr.write(`mpy_runner: cannot read the spec: ${e.message}\n`);
  process.exit(2);
}

const { loadMicroPython } = await import(pkg);
const mp = await loadMicroPython({
  heapsize: spec.heapsize || 16 * 1024 * 1024,
  stdout: (data) => process.stdout.write(data),
  stderr: (data) => process.stderr.write(data),
  linebuffer: false,
});

function mkdirs(path) {
  const parts = path.split("/").filter(Boolean);
  let cur = "";
  for (const p of parts.slice(0, -1)) {
    cur += "/" + p;
    try { mp.FS.mkdir(cur); } catch (e) { /* exists */ }
  }
}

try {
  for (const [dest, src] of Object.entries(spec.files || {})) {
    mkdirs(dest);
    mp.FS.writeFile(dest, readFileSync(src));
  }
  for (const [dest, text] of Object.entries(spec.texts || {})) {
    mkdirs(dest);
    mp.FS.writeFile(dest, text);
  }
} catch (e) {
  process.stderr.write(`mpy_runner: cannot write the files: ${e.message}\n`);
  process.exit(2);
}

try {
  mp.runPython("import sys\nsys.path.insert(0, '/lib')\n" + spec.code);
} catch (e) {
  if (e.name === "PythonError") {
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  }
  throw e;
}
