/**
 * The escape corpus: programs that try to leave the code sandbox (models/sandbox) or take the
 * host down with it. Each names the route it takes, what should stop it (the layer, see
 * docs/sandbox.md) and the outcome expected. A program prints `ESCAPED` if its attempt worked.
 * Placeholders filled by the test: `{{FILE}}` a sentinel file on the host, `{{DIR}}` its
 * folder, `{{PORT}}` a TCP port the host listens on (it counts connections).
 */
import type { SandboxStatus } from '../../core/sandbox/index.ts';

export interface EscapeAttempt {
  id: string;
  /** What kind of harm it tries. */
  kind: 'read host file' | 'write host file' | 'spawn process' | 'socket' | 'memory' | 'time' | 'recursion' | 'native module' | 'output' | 'js host';
  /** The route, in a few words. */
  route: string;
  code: string;
  /** The statuses a contained attempt may end with. */
  status: SandboxStatus[];
  /** The exception the run must end with (matched against `Type: message`), when it ends with one. */
  error?: RegExp;
  /** The layer that stops it (docs/sandbox.md names them). */
  stoppedBy: string;
}

/** Removes the import guard from `sys.meta_path` first: the attempts that do this test the layers under it. */
const UNGUARD = 'import sys\nsys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "SandboxImportGuard"]\n';

export const ESCAPES: EscapeAttempt[] = [
  {
    id: 'open-read', kind: 'read host file', route: 'open() on the host path',
    code: 'print("ESCAPED", open("{{FILE}}").read())', status: ['error'], error: /FileNotFoundError/, stoppedBy: 'wasm FS (in-memory, no host mount)',
  },
  {
    id: 'open-write', kind: 'write host file', route: 'open(..., "w") on the host folder',
    code: 'open("{{DIR}}/pwned.txt", "w").write("x")\nprint("ESCAPED")', status: ['error'], error: /FileNotFoundError/, stoppedBy: 'wasm FS (in-memory, no host mount)',
  },
  {
    id: 'os-remove', kind: 'write host file', route: 'os.remove / shutil.rmtree of the host folder',
    code: 'import os, shutil\ntry:\n    os.remove("{{FILE}}")\nfinally:\n    shutil.rmtree("{{DIR}}")\nprint("ESCAPED")', status: ['error'], error: /FileNotFoundError/, stoppedBy: 'wasm FS (in-memory, no host mount)',
  },
  {
    id: 'import-js-fs', kind: 'write host file', route: "import js; js.process.getBuiltinModule('fs').writeFileSync",
    code: 'import js\njs.process.getBuiltinModule("fs").writeFileSync("{{FILE}}", "pwned")\nprint("ESCAPED")', status: ['error'], error: /ImportError: import of 'js' is blocked/, stoppedBy: 'Python import guard',
  },
  {
    id: 'unguarded-js', kind: 'write host file', route: 'guard removed from sys.meta_path, then import js',
    code: `${UNGUARD}import js\njs.process.getBuiltinModule("fs").writeFileSync("{{FILE}}", "pwned")\nprint("ESCAPED")`, status: ['error'], error: /No module named 'js'/, stoppedBy: "js unregistered from Pyodide's JsFinder",
  },
  {
    id: 'sys-modules-js', kind: 'write host file', route: "sys.modules['js'] left over from start-up",
    code: 'import sys\njs = sys.modules["js"]\njs.process.getBuiltinModule("fs").writeFileSync("{{FILE}}", "pwned")\nprint("ESCAPED")', status: ['error'], error: /KeyError/, stoppedBy: 'Python: sys.modules purged',
  },
  {
    id: 'run-js', kind: 'write host file', route: 'pyodide.code.run_js',
    code: 'from pyodide.code import run_js\nrun_js("process.getBuiltinModule(\'fs\').writeFileSync(\'{{FILE}}\', \'pwned\')")\nprint("ESCAPED")', status: ['error'], error: /ImportError: import of 'pyodide(\.code)?' is blocked/, stoppedBy: 'Python import guard',
  },
  {
    id: 'unguarded-run-js', kind: 'write host file', route: 'guard removed, then pyodide.code.run_js',
    code: `${UNGUARD}from pyodide.code import run_js\nrun_js("process.getBuiltinModule('fs').writeFileSync('{{FILE}}', 'pwned')")\nprint("ESCAPED")`, status: ['error'], error: /No module named 'js'/, stoppedBy: "js unregistered from Pyodide's JsFinder",
  },
  {
    id: 'pyodide-js', kind: 'read host file', route: 'import pyodide_js; mountNodeFS the host folder',
    code: 'import pyodide_js\npyodide_js.mountNodeFS("/host", "{{DIR}}")\nprint("ESCAPED", open("/host/sentinel.txt").read())', status: ['error'], error: /ImportError: import of 'pyodide_js' is blocked/, stoppedBy: 'Python import guard',
  },
  {
    id: 'unguarded-pyodide-js', kind: 'read host file', route: 'guard removed, then import pyodide_js',
    code: `${UNGUARD}import pyodide_js\npyodide_js.mountNodeFS("/host", "{{DIR}}")\nprint("ESCAPED", open("/host/sentinel.txt").read())`, status: ['error'], error: /No module named 'pyodide_js'/, stoppedBy: "pyodide_js unregistered from Pyodide's JsFinder",
  },
  {
    id: 'ffi-function-constructor', kind: 'js host', route: "_pyodide_core.to_js(...).constructor.constructor('return process')() (the worker's process)",
    code: `${UNGUARD}import _pyodide_core\nF = _pyodide_core.to_js([1]).constructor.constructor\nproc = F("return globalThis.process || process")()\nproc.getBuiltinModule("fs").writeFileSync("{{FILE}}", "pwned")\nprint("ESCAPED")`,
    status: ['error'], error: /EvalError: Code generation from strings disallowed/, stoppedBy: 'V8 --disallow-code-generation-from-strings',
  },
  {
    id: 'gc-jsproxy-walk', kind: 'js host', route: 'walk every object the GC knows for a JS proxy reaching process or require',
    code: `${UNGUARD}import gc\nfor o in gc.get_objects():\n    if type(o).__name__.startswith('Js'):\n        for name in ('process', 'require', 'globalThis', '_module', '_api'):\n            try:\n                v = getattr(o, name)\n            except Exception:\n                continue\n            if v is not None and type(v).__name__.startswith('Js'):\n                print('ESCAPED', type(o).__name__, name)\nprint('walked')`,
    status: ['ok'], stoppedBy: 'no JS object reachable from Python leads to the host (jsglobals empty; js, pyodide_js unregistered)',
  },
  {
    id: 'ctypes-run-script', kind: 'native module', route: 'ctypes.CDLL(None).emscripten_run_script (JS eval from the wasm side)',
    code: 'import ctypes\nctypes.CDLL(None).emscripten_run_script(b"process.getBuiltinModule(\'fs\').writeFileSync(\'{{FILE}}\', \'pwned\')")\nprint("ESCAPED")', status: ['error'], error: /ImportError: import of 'ctypes' is blocked/, stoppedBy: 'Python import guard',
  },
  {
    id: 'unguarded-ctypes', kind: 'native module', route: 'guard removed, then ctypes emscripten_run_script',
    code: `${UNGUARD}import ctypes\nctypes.CDLL(None).emscripten_run_script(b"process.getBuiltinModule('fs').writeFileSync('{{FILE}}', 'pwned')")\nprint("ESCAPED")`,
    status: ['crashed'], error: /Code generation from strings disallowed/, stoppedBy: 'V8 --disallow-code-generation-from-strings (the interpreter dies; the pool replaces it)',
  },
  {
    id: 'native-extension', kind: 'native module', route: 'import a native package (numpy) / micropip',
    code: 'try:\n    import numpy\n    print("ESCAPED numpy")\nexcept ImportError:\n    pass\nimport micropip\nprint("ESCAPED")', status: ['error'], error: /ImportError: import of 'micropip' is blocked/, stoppedBy: 'no packages shipped beyond the standard library; Python import guard',
  },
  {
    id: 'os-system', kind: 'spawn process', route: 'os.system (emscripten asks Node for a child process)',
    code: 'import os\nos.system("touch {{DIR}}/pwned.txt")\nprint("ESCAPED")', status: ['crashed', 'error'], error: /Access to this API has been restricted|not supported|OSError/, stoppedBy: 'Node permission model (no --allow-child-process)',
  },
  {
    id: 'subprocess', kind: 'spawn process', route: 'subprocess.run',
    code: 'import subprocess\nsubprocess.run(["touch", "{{DIR}}/pwned.txt"])\nprint("ESCAPED")', status: ['error'], error: /OSError.*does not support processes/, stoppedBy: 'Pyodide (no processes in wasm)',
  },
  {
    id: 'fork-kill', kind: 'spawn process', route: 'os.fork, then os.kill of the parent',
    code: 'import os\ntry:\n    os.fork()\n    print("ESCAPED fork")\nexcept OSError:\n    pass\nos.kill(os.getppid(), 9)\nprint("ESCAPED")', status: ['error'], error: /PermissionError|OSError/, stoppedBy: 'Pyodide (no processes or signals in wasm)',
  },
  {
    id: 'threads', kind: 'spawn process', route: 'threading.Thread',
    code: 'import threading\nthreading.Thread(target=print).start()\nprint("ESCAPED")', status: ['error'], error: /RuntimeError: can't start new thread/, stoppedBy: 'Pyodide (no threads)',
  },
  {
    id: 'socket-connect', kind: 'socket', route: 'socket.create_connection to a host port',
    code: 'import socket\ns = socket.create_connection(("127.0.0.1", {{PORT}}), timeout=2)\nprint("ESCAPED")', status: ['error', 'timeout'], error: /OSError|unreachable|timed out|killed after/i, stoppedBy: "permission model (Pyodide's Node sockets need the ws package); JS hardening (net connect refused)",
  },
  {
    id: 'urllib', kind: 'socket', route: 'urllib.request.urlopen of a host port',
    code: 'import urllib.request\nurllib.request.urlopen("http://127.0.0.1:{{PORT}}/", timeout=2)\nprint("ESCAPED")', status: ['error', 'timeout'], error: /URLError|OSError|killed after/, stoppedBy: 'permission model; JS hardening',
  },
  {
    id: 'memory-bytes', kind: 'memory', route: 'one 2 GB bytearray',
    code: 'x = bytearray(2 * 10**9)\nprint("ESCAPED")', status: ['memory'], error: /MemoryError/, stoppedBy: 'wasm heap cap (WebAssembly.Memory.grow refused)',
  },
  {
    id: 'memory-grow', kind: 'memory', route: 'a list growing by 1 MB strings',
    code: 'a = []\nwhile True:\n    a.append(" " * 10**6)', status: ['memory', 'timeout'], error: /MemoryError|killed after/, stoppedBy: 'wasm heap cap (WebAssembly.Memory.grow refused); on a loaded machine the wall clock may come first',
  },
  {
    id: 'huge-product', kind: 'memory', route: 'an enormous product (10**10**8)',
    code: 'x = 10 ** (10 ** 8)\nprint("ESCAPED", x % 7)', status: ['timeout', 'memory'], stoppedBy: 'wall-clock limit (the process is killed)',
  },
  {
    id: 'infinite-loop', kind: 'time', route: 'while True: pass',
    code: 'while True:\n    pass', status: ['timeout'], error: /killed after/, stoppedBy: 'wall-clock limit (the process is killed)',
  },
  {
    id: 'catch-everything-loop', kind: 'time', route: 'a loop that swallows every exception',
    code: 'while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass', status: ['timeout'], error: /killed after/, stoppedBy: 'wall-clock limit (the process is killed)',
  },
  {
    id: 'recursion', kind: 'recursion', route: 'unbounded recursion at the default limit',
    code: 'def f(n):\n    return f(n + 1)\nf(0)', status: ['error'], error: /RecursionError/, stoppedBy: "Python's recursion limit",
  },
  {
    id: 'recursion-unlimited', kind: 'recursion', route: 'sys.setrecursionlimit(10**7) then unbounded recursion',
    code: 'import sys\nsys.setrecursionlimit(10**7)\ndef f(n):\n    return f(n + 1)\nf(0)', status: ['crashed', 'error', 'timeout'], error: /call stack|RecursionError|killed after/, stoppedBy: 'wasm stack limit (the interpreter dies; the pool replaces it)',
  },
  {
    id: 'nested-parse', kind: 'recursion', route: 'a parser bomb: 200 000 nested parentheses',
    code: 'eval("(" * 200000 + ")" * 200000)', status: ['error'], error: /SyntaxError|MemoryError|RecursionError/, stoppedBy: "CPython's parser limits",
  },
  {
    id: 'huge-output', kind: 'output', route: 'print 3 MB',
    code: 'print("a" * 3_000_000)', status: ['output_limit'], stoppedBy: 'output cap',
  },
  {
    id: 'output-flood', kind: 'output', route: 'print forever, swallowing the write error',
    code: 'while True:\n    try:\n        print("b" * 1000)\n    except BaseException:\n        pass', status: ['output_limit', 'timeout'], stoppedBy: 'output cap, then the wall-clock limit',
  },
  {
    id: 'poison-builtins', kind: 'js host', route: 'replace builtins and a standard module for the next program',
    code: 'import builtins, math\nbuiltins.len = lambda x: 0\nmath.sqrt = lambda x: 0\nbuiltins.__import__ = None', status: ['ok'], stoppedBy: 'state reset after each run; a worker whose standard modules changed is replaced',
  },
];
