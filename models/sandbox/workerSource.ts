/** Standard-library modules imported before the memory snapshot (the warm baseline every run starts from). */
const WARM_IMPORTS = String.raw`
for _name in ('math', 're', 'string', 'collections', 'collections.abc', 'itertools', 'functools',
              'heapq', 'bisect', 'typing', 'operator', 'random', 'statistics', 'fractions',
              'decimal', 'copy', 'hashlib', 'datetime', 'cmath', 'array', 'struct', 'enum',
              'dataclasses', 'textwrap', 'unicodedata', 'numbers', 'json', 'traceback', 'io'):
    try:
        __import__(_name)
    except Exception:
        pass
del _name
`;

/**
 * The Python half of the worker, run once after Pyodide loads (from a snapshot or not).
 * Defines `_flowlab_run(code) ->
 * (status, error_type | None, error_message | None, tainted)`; see `WORKER_SOURCE` step 5-6.
 */
const PYTHON_PRELUDE = String.raw`
def _flowlab_setup():
    import sys, builtins, traceback, gc
    from types import ModuleType
    blocked = frozenset({'js', 'pyodide_js', 'pyodide', '_pyodide', '_pyodide_core', 'micropip', 'ctypes', '_ctypes', 'pyodide_http'})

    class SandboxImportGuard:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name.partition('.')[0] in blocked:
                raise ImportError("import of '%s' is blocked in the sandbox" % name, name=name)
            return None

    if _flowlab_guard:
        sys.meta_path.insert(0, SandboxImportGuard())
        for name in list(sys.modules):
            if name.partition('.')[0] in blocked:
                del sys.modules[name]
    gc.collect()

    def snapshot(mod):
        d = getattr(mod, '__dict__', None)
        return {k: id(v) for k, v in d.items()} if isinstance(d, dict) else {}

    base = {}
    def take_baseline():
        # Taken at the first run, once the prelude has finished changing __main__.
        base['modules'] = dict(sys.modules)
        base['builtins'] = dict(builtins.__dict__)
        base['meta_path'] = list(sys.meta_path)
        base['path'] = list(sys.path)
        base['limit'] = sys.getrecursionlimit()
        base['std'] = (sys.stdout, sys.stderr, sys.stdin)
        base['ns'] = {name: snapshot(mod) for name, mod in base['modules'].items()}

    def restore():
        tainted = False
        modules = base['modules']
        for name in list(sys.modules):
            if name not in modules:
                del sys.modules[name]
        for name, mod in modules.items():
            if sys.modules.get(name) is not mod:
                sys.modules[name] = mod
                tainted = True
        builtins.__dict__.clear()
        builtins.__dict__.update(base['builtins'])
        sys.meta_path[:] = base['meta_path']
        sys.path[:] = base['path']
        sys.setrecursionlimit(base['limit'])
        sys.settrace(None)
        sys.setprofile(None)
        sys.stdout, sys.stderr, sys.stdin = base['std']
        ns = base['ns']
        for name, mod in modules.items():
            now = snapshot(mod)
            if now == ns[name]:
                continue
            # Importing a submodule (urllib.request) binds it on its package: undo that, it is no taint.
            d = mod.__dict__
            for key in [k for k in now if k not in ns[name]]:
                v = d.get(key)
                if type(v) is ModuleType and getattr(v, '__name__', None) == name + '.' + key and v.__name__ not in modules:
                    del d[key]
            if snapshot(mod) != ns[name]:
                tainted = True
                break
        return tainted

    def run(code):
        if not base:
            take_baseline()
        status, etype, emsg = 'ok', None, None
        try:
            compiled = compile(code, '<sandbox>', 'exec')
            exec(compiled, {'__name__': '__main__', '__builtins__': builtins})
        except SystemExit as e:
            if e.code not in (None, 0):
                status, etype, emsg = 'error', 'SystemExit', 'exit status %r' % (e.code,)
        except BaseException as e:
            status, etype = 'error', type(e).__name__
            try:
                emsg = ''.join(traceback.format_exception_only(type(e), e)).strip()[-2000:]
            except BaseException:
                emsg = etype
        try:
            tainted = restore()
        except BaseException:
            tainted = True
        return (status, etype, emsg, tainted)
    return run

_flowlab_run = _flowlab_setup()
del _flowlab_setup, _flowlab_guard

def _flowlab_flush():
    import sys
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
`;

/**
 * The program a sandbox worker process runs, as text: under Node the parent (`pool.ts`, through
 * models/sandbox/launcher.ts) starts `node <permission flags> --input-type=module -` and writes
 * this to the child's stdin, so the worker needs no file of its own on disk; in the desktop app it
 * is written once to a file in the user data folder and started with Electron's
 * `utilityProcess.fork`. It talks to its parent over `process.parentPort` in a utility process,
 * else over Node's IPC channel (`process.send`).
 *
 * What the program does, in order (each step is one of the layers docs/sandbox.md measures):
 * 1. Keeps private copies of the few host functions it needs (`process.send`, `process.on`,
 *    `process.exit`, the constants `pyodide`'s file-system layer reads) and replaces
 *    `process.binding` with a stub that answers only `constants` (Node's permission model already
 *    throws `ERR_ACCESS_DENIED` for it, which stops Pyodide from loading).
 * 2. Caps WebAssembly memory: `WebAssembly.Memory.prototype.grow` refuses growth past the
 *    run's `memoryMb`, so Python's allocator fails and the program sees `MemoryError`.
 * 3. Waits for the parent's first message `{type:'init', snapshot, layers}` and loads Pyodide with
 *    `jsglobals` an empty object with no prototype (what `import js` would see): from the memory
 *    snapshot when one is given (Pyodide's `_loadSnapshot`), else cold, importing the warm
 *    standard-library baseline (`WARM_IMPORTS`) and sending `{type:'snapshot', bytes}` back
 *    (`makeMemorySnapshot`) so later workers start from it.
 * 4. Replaces the socket entry points of `net`, `dgram`, `tls` and `dns` with functions that throw,
 *    removes `fetch`, `WebSocket`, `EventSource` and `process` from the global object (Node's
 *    permission model of Node 20 covers files, child processes, workers and native addons, not
 *    the network).
 * 5. In Python: an import guard first on `sys.meta_path` refusing `js`, `pyodide_js`, `pyodide`,
 *    `_pyodide`, `_pyodide_core`, `micropip`, `ctypes`, `_ctypes`; those modules removed from
 *    `sys.modules`; `js` and `pyodide_js` unregistered from Pyodide's JsFinder.
 * 6. Serves runs over the IPC channel: `{type:'run', id, code, memoryMb, outputBytes}` ->
 *    `{type:'result', id, status, stdout, stderr, error?, heapMb, tainted}`. Each run executes in
 *    fresh globals; afterwards modules it imported are dropped, builtins and `sys` hooks are
 *    restored, and if a standard module's namespace was changed the worker reports `tainted`
 *    (the pool retires it, so no run can change what a later run sees).
 *
 * Each layer but the heap caps can be switched off for measurement (`SandboxLayers`, sent in the
 * parent's first message); docs/sandbox.md shows what each one alone stops.
 * The program is plain JavaScript (ES2022) with no imports but `pyodide` itself.
 */
export const WORKER_SOURCE = String.raw`
// The parent's channel: Electron's process.parentPort in a utility process, else Node's IPC.
const parentPort = process.parentPort;
const send = parentPort ? (msg) => parentPort.postMessage(msg) : process.send.bind(process);
const on = process.on.bind(process);
const onMessage = parentPort ? (fn) => parentPort.on('message', (e) => fn(e.data)) : (fn) => on('message', fn);
const exit = process.exit.bind(process);
const pyodideUrl = process.env.FLOWLAB_PYODIDE_URL;
const fsConstants = process.getBuiltinModule('fs').constants;
const osConstants = process.getBuiltinModule('os').constants;
process.binding = (name) => {
  if (name === 'constants') return { fs: fsConstants, os: osConstants };
  throw new Error('process.binding is disabled in the sandbox');
};
if (!parentPort) process.on('disconnect', () => exit(0));

const MB = 1024 * 1024;
const limits = { heapBytes: 512 * MB, outputBytes: 1 << 20 };
const originalGrow = WebAssembly.Memory.prototype.grow;
let refusedGrowth = false;
WebAssembly.Memory.prototype.grow = function grow(pages) {
  if (this.buffer.byteLength + pages * 65536 > limits.heapBytes) {
    refusedGrowth = true;
    throw new RangeError('sandbox memory cap reached');
  }
  return originalGrow.call(this, pages);
};

const out = { stdout: [], stderr: [], bytes: 0, over: false, draining: false };
function writer(key) {
  return {
    write(buffer) {
      if (out.over) {
        if (out.draining) return buffer.length; // after the run: drop what Python still buffers
        throw new Error('sandbox output cap reached');
      }
      const room = limits.outputBytes - out.bytes;
      const take = buffer.length <= room ? buffer : buffer.subarray(0, Math.max(0, room));
      out[key].push(Buffer.from(take));
      out.bytes += take.length;
      if (take.length < buffer.length) { out.over = true; throw new Error('sandbox output cap reached'); }
      return buffer.length;
    },
  };
}

// The parent's first message: a memory snapshot of an interpreter that has loaded and imported
// the warm baseline (Pyodide's makeMemorySnapshot), or none, in which case this worker makes one.
let settleInit;
const initSeen = new Promise((resolve) => { settleInit = resolve; });
const runQueue = [];
let serveRun = (msg) => runQueue.push(msg);
onMessage((msg) => {
  if (msg && msg.type === 'init') settleInit(msg);
  else if (msg && msg.type === 'run') serveRun(msg);
});
const init = await initSeen;
const t0 = Date.now();
const { loadPyodide } = await import(pyodideUrl);
const layers = init.layers;
const options = { jsglobals: layers.emptyJsGlobals ? Object.create(null) : globalThis, stdout: () => {}, stderr: () => {} };
const pyodide = init.snapshot
  ? await loadPyodide({ ...options, _loadSnapshot: init.snapshot })
  : await loadPyodide({ ...options, _makeSnapshot: true });
if (!init.snapshot) {
  pyodide.runPython(${JSON.stringify(WARM_IMPORTS)});
  send({ type: 'snapshot', bytes: pyodide.makeMemorySnapshot() });
}
pyodide.setStdout(writer('stdout'));
pyodide.setStderr(writer('stderr'));

// Sockets: Node 20's permission model does not cover the network.
if (layers.jsHardening) {
const refuse = (what) => function refused() { throw new Error(what + ' is disabled in the sandbox'); };
const net = process.getBuiltinModule('net');
const dgram = process.getBuiltinModule('dgram');
const dns = process.getBuiltinModule('dns');
const tls = process.getBuiltinModule('tls');
net.Socket.prototype.connect = refuse('net.Socket.connect');
net.Server.prototype.listen = refuse('net.Server.listen');
net.connect = net.createConnection = refuse('net.connect');
tls.connect = refuse('tls.connect');
dgram.Socket.prototype.bind = refuse('dgram.bind');
dgram.Socket.prototype.send = refuse('dgram.send');
dgram.Socket.prototype.connect = refuse('dgram.connect');
dns.lookup = dns.resolve = refuse('dns');
dns.promises.lookup = dns.promises.resolve = refuse('dns');
process.getBuiltinModule('module').syncBuiltinESMExports();
for (const name of ['fetch', 'WebSocket', 'EventSource', 'process', 'require']) {
  try { delete globalThis[name]; } catch {}
}
}

pyodide.globals.set('_flowlab_guard', layers.importGuard);
pyodide.runPython(${JSON.stringify(PYTHON_PRELUDE)});
// 'import js' and 'import pyodide_js' are served by Pyodide's JsFinder from this registry; with
// them unregistered, removing the Python guard from sys.meta_path still does not reach them.
if (layers.unregisterJs) {
  pyodide.unregisterJsModule('js');
  pyodide.unregisterJsModule('pyodide_js');
}
const runOne = pyodide.globals.get('_flowlab_run');
const flushStd = pyodide.globals.get('_flowlab_flush');
const baselineHeap = pyodide._module.HEAP8.length;
send({ type: 'ready', loadMs: Date.now() - t0, heapMb: baselineHeap / MB });

serveRun = (msg) => {
  limits.heapBytes = Math.max(baselineHeap, (msg.memoryMb ?? 512) * MB);
  limits.outputBytes = msg.outputBytes ?? (1 << 20);
  out.stdout = []; out.stderr = []; out.bytes = 0; out.over = false; out.draining = false; refusedGrowth = false;
  let status = 'ok', error, tainted = false;
  try {
    const r = runOne(msg.code).toJs();
    status = r[0]; tainted = r[3];
    if (r[1] != null) error = { type: r[1], message: r[2] ?? r[1] };
    // What print() left in Python's buffers belongs to this run; past the cap it is dropped.
    try { flushStd(); } catch {}
    if (out.over) { out.draining = true; try { flushStd(); } catch {} }
  } catch (e) {
    status = 'crashed'; tainted = true;
    error = { type: 'FatalError', message: String(e && e.message || e).slice(0, 2000) };
  }
  if (out.over) status = 'output_limit';
  else if (status === 'error' && (error?.type === 'MemoryError' || refusedGrowth)) status = 'memory';
  const heap = pyodide._module.HEAP8.length;
  send({
    type: 'result', id: msg.id, status,
    stdout: Buffer.concat(out.stdout).toString('utf8'),
    stderr: Buffer.concat(out.stderr).toString('utf8'),
    ...(error && { error }), heapMb: heap / MB, tainted,
  });
};
for (const msg of runQueue.splice(0)) serveRun(msg);
`;

