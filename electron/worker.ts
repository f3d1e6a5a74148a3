/**
 * The lab's utility process (started by main with `utilityProcess.fork`, bundled to
 * out/main/worker.js): engine and model work off the UI thread. It opens its own connection to
 * the store and runs the `LabHost` of host/ (runner, model catalogue, examples, datasets);
 * main relays the lab methods to it and forwards its LabEvents to the window (see relay.ts).
 */
import { openStore } from '../core/store/index.ts';
import { createLabHost, STORE_WATCH_MS } from '../host/index.ts';
import { serveLab } from './relay.ts';
import { remoteUtilityFork, type PortLike } from './sandboxForks.ts';
import { setDefaultSandboxLauncher, utilityLauncher } from '../models/sandbox/index.ts';

const parentPort = process.parentPort;
if (!parentPort) {
  console.error('electron/worker.ts runs only as an Electron utility process (process.parentPort is missing)');
  process.exit(1);
}

serveLab(
  {
    postMessage: (message) => parentPort.postMessage(message),
    onMessage: (listener) =>
      parentPort.on('message', (event) => {
        // Main's port for sandbox processes (electron/sandboxForks.ts), sent before `init`: the
        // code sandbox's workers start as utility processes forked by main.
        const data = event.data as { kind?: unknown; scriptDir?: unknown } | undefined;
        if (data?.kind === 'sandbox-forks' && typeof data.scriptDir === 'string' && event.ports[0]) {
          setDefaultSandboxLauncher(utilityLauncher(remoteUtilityFork(event.ports[0] as unknown as PortLike), data.scriptDir));
          return;
        }
        listener(event.data);
      }),
  },
  (config, emit) => {
    const store = openStore(config.dbFile, config.sqliteBinding !== undefined ? { nativeBinding: config.sqliteBinding } : {});
    const lab = createLabHost({
      store,
      dbFile: config.dbFile,
      modelDir: config.modelDir,
      examplesDir: config.examplesDir,
      ...(config.sharedDir !== undefined ? { sharedDir: config.sharedDir } : {}),
      ...(config.userDataDir !== undefined ? { userDataDir: config.userDataDir } : {}),
      emit,
      // Writes by anyone (the CLI on the same database included) reach the window as `stored` events.
      watchStoreMs: STORE_WATCH_MS,
    });
    return {
      host: lab,
      dispose: async () => {
        await lab.dispose();
        store.close();
      },
    };
  },
  (code) => process.exit(code),
);
