import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import type { WorkshopHost } from '../../core/api/index.ts';
import { openStore } from '../../core/store/index.ts';
import { resolveSharedDir } from '../../core/tasks/index.ts';
import { DEFAULT_ROOM_CAP, MAX_ROOM_CAP, parseScenario, rehearse, rehearsedSteps, workshopReportHtml, WorkshopError, WorkshopSession, type Scenario, type StepRunner } from '../../core/workshop/index.ts';
import { attendeeAllow, isLoopback, type AttendeeLimits } from '../../host/index.ts';
import { act, dbOption, intOption, UsageError, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import type { Io } from '../io.ts';
import { cliStepRunner } from '../workshopRunner.ts';
import { DEFAULT_RENDERER, ensureRenderer, startServe, type RunningServe } from './serve.ts';
import { repoRoot } from '../root.ts';
import { besideDatabase } from '../../host/dataFolder.ts';
import { errorMessage } from '../../core/errors.ts';

const ROOT = repoRoot(import.meta.url);
/** Default port of `flowlab workshop` (one above `flowlab serve`'s). */
export const WORKSHOP_PORT = 5178;

interface WorkshopFlags {
  rehearse?: boolean;
  room?: boolean;
  live?: boolean;
  force?: boolean;
  port: number;
  host: string;
  db: string;
  model?: string;
  threads: number;
  report?: string;
  renderer?: string;
  roomCap: number;
}

/** `flowlab workshop <scenario.yaml>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<scenario.yaml> [--rehearse | --room | --live] [--host 0.0.0.0] [--port P] [--db file] [--model file.gguf]')
    .description([
      'Runs a workshop scenario (workshops/*.yaml) for a room: a presenter page (steps, timer, QR code, live',
      'prediction count, reveal) and an attendee page that follows it on any phone. By default each step is',
      'rehearsed once for real (its result recorded in the store; steps already rehearsed are reused) and the',
      'room is served from the recording, so no model is loaded while the room watches; the host starts as',
      'soon as step 1 is ready. Prints the presenter URL, then the attendee URL (the attendee token can only',
      "follow the workshop, predict, and read the workshop's own experiments). Ctrl-C stops; the HTML report",
      '(print it to PDF) is written after every reveal and at the end.',
    ].join('\n'))
    .argument('<scenario.yaml>', 'the scenario file')
    .addOption(new Option('--rehearse', 'run every step for real, record the results, and exit (with --force: run them again)').conflicts(['room', 'live']))
    .addOption(new Option('--room', 'serve only from a complete rehearsal; refuse to run anything').conflicts(['live']))
    .option('--live', 'run each step for real when the presenter opens it')
    .option('--force', 'with --rehearse: run every step again even if it was rehearsed')
    .addOption(intOption('--port <n>', 'TCP port; 0 picks a free one', { max: 65535, default: WORKSHOP_PORT }))
    .option('--host <addr>', 'interface: 127.0.0.1 (this machine) or 0.0.0.0 (the room\'s network)', '127.0.0.1')
    .addOption(dbOption())
    .option('--model <file.gguf>', 'the model every step uses (default: $FLOWLAB_SHARED/models/stories260K.gguf)')
    .addOption(intOption('--threads <n>', 'CPU threads of each step\'s model (1 or 2 on a laptop)', { min: 1, max: 2, default: 1 }))
    .addOption(intOption('--room-cap <n>', 'most attendees who may join (each join gets its own identity; the presenter can remove one)', { min: 1, max: MAX_ROOM_CAP, default: DEFAULT_ROOM_CAP }))
    .option('--report <file.html>', 'where the report goes (default: workshop-<session>.html next to --db)')
    .option('--renderer <dir>', 'built renderer (default: out/renderer, written by `npm run build`)')
    .action(act(ctx, (file: string, o: WorkshopFlags) => workshopCommand(file, o, ctx.io)));
}

/** Reads and validates a scenario file. Errors: CommandError `NOT_FOUND`; WorkshopError `BAD_SCENARIO` (located). */
export function loadScenario(file: string): Scenario {
  if (!existsSync(file)) throw new CommandError('NOT_FOUND', `scenario ${file} not found (the shipped ones are in workshops/)`);
  return parseScenario(readFileSync(file, 'utf8'), file);
}

/** Options of {@link startWorkshop}. */
export interface StartWorkshopOptions {
  scenario: Scenario;
  mode: 'room' | 'live';
  db: string;
  host: string;
  port: number;
  renderer: string;
  /** The model folder the lab host lists (the presenter's full lab). */
  models: string;
  report: (sessionId: string) => string;
  /** Live mode: runs the steps. */
  runner?: StepRunner;
  /** Default: 32 random bytes, hex. */
  attendeeToken?: string;
  /** Most attendees at once (default core/workshop DEFAULT_ROOM_CAP). */
  roomCap?: number;
  /** Attendee rate limits (default host/workshop DEFAULT_ATTENDEE_LIMITS). */
  limits?: Partial<AttendeeLimits>;
}

/** A served workshop: the server, the session, the attendee URL; `stop` writes the report and closes everything. */
export interface RunningWorkshop {
  serve: RunningServe;
  session: WorkshopSession;
  presenterUrl: string;
  attendeeUrl: string;
  attendeeToken: string;
  reportFile: string;
  writeReport(): void;
  stop(): Promise<void>;
}

/** Starts the host for a session: the presenter's token is the server's; the attendee token is a guest with the allow-list of host/workshop.ts. */
export async function startWorkshop(o: StartWorkshopOptions): Promise<RunningWorkshop> {
  const attendeeToken = o.attendeeToken ?? randomBytes(32).toString('hex');
  let session!: WorkshopSession;
  let reportFile = '';
  const writeReport = () => {
    const tmp = `${reportFile}.tmp`;
    writeFileSync(tmp, workshopReportHtml(o.scenario, session.id, session.reportSteps(), Date.now()));
    renameSync(tmp, reportFile);
  };
  const serve = await startServe({
    port: o.port, host: o.host, db: o.db, models: o.models, renderer: o.renderer,
    workshop: (store) => {
      session = new WorkshopSession({ store, scenario: o.scenario, mode: o.mode, ...(o.runner && { runner: o.runner }), ...(o.roomCap !== undefined && { roomCap: o.roomCap }), onStepDone: () => writeReport() });
      reportFile = o.report(session.id);
      const host: WorkshopHost = {
        view: () => session.view(),
        submit: (a, s, c) => session.submit(a, s, c),
        join: (attendee) => {
          if (attendee !== undefined && !session.attendees.has(attendee)) throw new WorkshopError('NOT_ATTENDEE', `no attendee ${attendee} is in the room`);
          return { attendee: attendee ?? session.join('presenter').id, joined: session.attendees.size };
        },
        attendees: () => session.attendees.list(),
        remove: (attendee) => {
          const r = session.removeAttendee(attendee);
          writeReport();
          return { removed: r.removed.id, predictionsDeleted: r.predictionsDeleted };
        },
        control: (c) => {
          const v = session.control(c);
          writeReport();
          return v;
        },
      };
      return { host, guests: [{ token: attendeeToken, allow: attendeeAllow(session, store, { ...(o.limits && { limits: o.limits }) }) }] };
    },
  });
  const base = serve.server.url.replace(/\?token=.*$/, '');
  const lan = serve.server.networkUrls[0]?.replace(/\?token=.*$/, '');
  const attendeeUrl = `${lan ?? base}?token=${attendeeToken}#/workshop`;
  session.setAttendeeUrl(attendeeUrl);
  writeReport();
  return {
    serve, session, presenterUrl: `${serve.server.url}#/workshop/presenter`, attendeeUrl, attendeeToken, reportFile, writeReport,
    async stop() {
      await session.settled();
      if (!serve.store.closed) writeReport();
      await serve.stop();
    },
  };
}

function defaultModel(): string {
  return path.join(resolveSharedDir(), 'models/stories260K.gguf');
}

async function workshopCommand(file: string, v: WorkshopFlags, io: Io): Promise<number> {
  if (!isLoopback(v.host) && v.host !== '0.0.0.0' && v.host !== '::') throw new UsageError(`--host ${v.host}: use 127.0.0.1, or 0.0.0.0 to share the workshop with the room's network`);
  if (v.force && !v.rehearse) throw new UsageError('--force goes with --rehearse');
  const t0 = performance.now();
  const scenario = loadScenario(file);
  const model = path.resolve(v.model ?? defaultModel());
  const runner = (): StepRunner => {
    if (!existsSync(model)) throw new CommandError('NOT_FOUND', `model ${model} not found: pass --model <file.gguf>`);
    return cliStepRunner({ db: v.db, model, threads: v.threads });
  };
  const note = (s: string) => io.stderr(`flowlab workshop: ${s}\n`);
  const onStep = (step: Scenario['steps'][number], i: number, ran: boolean) => note(`${ran ? 'rehearsing' : 'reusing the rehearsal of'} step ${i + 1}/${scenario.steps.length} "${step.title}"${ran ? ' (runs for real)' : ''}`);

  if (v.rehearse) {
    const store = openStore(v.db);
    try {
      const res = await rehearse(store, scenario, runner(), { force: !!v.force, onStep });
      note(`rehearsed ${res.ran.length} step(s), reused ${res.reused.length}; serve it with \`flowlab workshop ${file} --room\``);
      return 0;
    } finally {
      store.close();
    }
  }

  // Room mode: every step must be rehearsed (--room), or the first is rehearsed now and the rest while the room starts.
  if (!v.live) {
    const store = openStore(v.db);
    const done = new Set(rehearsedSteps(store, scenario));
    const missing = scenario.steps.filter((s) => !done.has(s.id));
    if (v.room && missing.length) {
      store.close();
      throw new WorkshopError('NOT_REHEARSED', `--room: step(s) ${missing.map((s) => `"${s.id}"`).join(', ')} of ${scenario.id} are not rehearsed in ${v.db}; run \`flowlab workshop ${file} --rehearse\` first`);
    }
    try {
      if (missing.length && !done.has(scenario.steps[0]!.id)) await rehearse(store, { ...scenario, steps: scenario.steps.slice(0, 1) }, runner(), { onStep });
    } finally {
      store.close();
    }
    if (missing.length > 1 || (missing.length === 1 && missing[0] !== scenario.steps[0])) {
      const bg = openStore(v.db);
      void rehearse(bg, scenario, runner(), { onStep }).then(
        (r) => note(`rehearsal complete (${r.ran.length} step(s) run)`),
        (err: unknown) => note(`rehearsal failed: ${errorMessage(err)}`),
      ).finally(() => bg.close());
    }
  }

  const renderer = path.resolve(v.renderer ?? DEFAULT_RENDERER);
  ensureRenderer(renderer, io, 'workshop');
  const running = await startWorkshop({
    scenario, mode: v.live ? 'live' : 'room', db: v.db, host: v.host, port: v.port, models: path.dirname(model),
    renderer, roomCap: v.roomCap,
    report: (id) => path.resolve(v.report ?? besideDatabase(v.db, [`workshop-${id}.html`])),
    ...(v.live && { runner: runner() }),
  });
  io.stdout(`${running.presenterUrl}\n${running.attendeeUrl}\n`);
  note(`"${scenario.title}" is up (${v.live ? 'live: each step runs when you open it' : 'from the rehearsal: no model is loaded'}) after ${((performance.now() - t0) / 1000).toFixed(1)} s. First line: the presenter's page (keep it to yourself); second: the attendees' page (show its QR code). Report: ${running.reportFile}. Ctrl-C stops.`);
  if (!isLoopback(v.host)) note(`listening on ${v.host}:${running.serve.server.port}: the attendee token can only follow the workshop and predict; the presenter token can do everything \`flowlab serve\` can.`);

  await new Promise<void>((resolve) => {
    const onSignal = () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      // A rehearsal still running in the background is left to its step (the terminal's Ctrl-C reaches it too).
      void running.stop().then(() => {
        note(`stopped; report ${running.reportFile}`);
        resolve();
      });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  return 0;
}
