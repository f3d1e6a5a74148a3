/**
 * `flowlab job kinds | start <kind> --spec <json> | resume <kind> <id>`: any registered job kind
 * (core/jobs) from the shell, through the same job table the lab uses (host/jobs.ts `LabJobs`):
 * the spec is checked by the kind's strict schema (a field the kind does not use is refused,
 * named), its `job` events go to stderr as lines, Ctrl-C cancels it, and stdout gets its end as
 * one JSON object. Kinds with a command of their own (`flowlab run`, `train-loop`, `evolve`...)
 * are listed with it.
 */
import type { Command } from 'commander';
import { builtinJobKinds, JobError, type JobEvent, type JobRegistry } from '../../core/jobs/index.ts';
import { openStore } from '../../core/store/index.ts';
import { freshStoreFile } from '../freshStore.ts';
import { LabJobs } from '../../host/jobs.ts';
import { act, dbOption, type CommandContext } from '../args.ts';
import { UsageError } from '../args.ts';
import type { Io } from '../io.ts';

/** What the job commands run against: the kinds, the output, the database, and a cancel signal (Ctrl-C in the shell). */
export interface JobCli {
  registry: JobRegistry;
  io: Io;
  db: string;
  /** Aborted: the running job is cancelled. Default: SIGINT. */
  signal?: AbortSignal;
}

/** `flowlab job`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd.description('jobs of any registered kind: list the kinds, start one from a JSON spec, resume one');
  const cli = (db: string): JobCli => ({ registry: builtinJobKinds(), io: ctx.io, db });
  cmd.command('kinds').option('--json', 'print one JSON array').action(act(ctx, async (o: { json?: boolean }) => listKinds(cli(''), Boolean(o.json))));
  const start = cmd.command('start').argument('<kind>', 'a kind from `flowlab job kinds`').requiredOption('--spec <json>', "the kind's spec as JSON").addOption(dbOption());
  start.action(act(ctx, (kind: string, o: { spec: string; db: string }) => withUsage(start, () => startJobCommand(cli(o.db), kind, parseSpec(o.spec)))));
  const resume = cmd.command('resume').argument('<kind>', 'a kind from `flowlab job kinds`').argument('<id>', 'the stored job').addOption(dbOption());
  resume.action(act(ctx, (kind: string, id: string, o: { db: string }) => withUsage(resume, async () => {
    // Experiments and train loops resume through `flowlab resume` (the registry's resumeVia), as the lab's resumeJob routes them to resumeRun.
    const via = cli(o.db).registry.list().find((k) => k.name === kind)?.resumeVia;
    if (via?.command === 'flowlab resume') return (await import('./resume.ts')).resumeCommand(id, { db: o.db }, ctx.io);
    return resumeJobCommand(cli(o.db), kind, id);
  })));
}

/** Runs `run`; a UsageError without a usage (a kind or spec the job table refused) gets `sub`'s, not `flowlab job`'s. */
async function withUsage(sub: Command, run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof UsageError && err.usage === undefined) throw new UsageError(err.message, sub.helpInformation());
    throw err;
  }
}

function parseSpec(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--spec: not JSON (${(err as Error).message})`);
  }
}

/** Prints the registered kinds; exit 0. */
export function listKinds(cli: JobCli, json: boolean): Promise<number> {
  const kinds = cli.registry.list();
  if (json) cli.io.stdout(JSON.stringify(kinds) + '\n');
  else for (const k of kinds) cli.io.stdout(`${k.name.padEnd(12)} ${k.family.padEnd(11)} ${k.describe}${k.startable ? '' : k.startVia ? ` (${k.startVia.command})` : ''}${k.resumable ? ' [resumable]' : ''}\n`);
  return Promise.resolve(0);
}

/** Starts a job of `kind` and follows it to its end. Exit: 0 completed, 130 cancelled, 1 failed; a refused spec is a UsageError naming the field. */
export function startJobCommand(cli: JobCli, kind: string, spec: unknown): Promise<number> {
  return follow(cli, (jobs) => jobs.start(kind, spec));
}

/** Resumes the stored job `id` of `kind` and follows it to its end (exit codes as `startJobCommand`). */
export function resumeJobCommand(cli: JobCli, kind: string, id: string): Promise<number> {
  return follow(cli, (jobs) => jobs.resume(kind, id));
}

async function follow(cli: JobCli, begin: (jobs: LabJobs) => Promise<{ id: string }>): Promise<number> {
  const file = freshStoreFile(cli.db);
  const store = openStore(cli.db || ':memory:');
  let begun = false;
  let end: JobEvent | undefined;
  const jobs = new LabJobs({
    registry: cli.registry, deps: { store },
    emit: (e) => {
      if (e.status === 'running') cli.io.stderr(`${e.kind} ${e.id}: running${e.total !== undefined ? ` ${e.done ?? 0}/${e.total}` : ''}${e.summary ? ` — ${e.summary}` : ''}\n`);
      else end = e;
    },
  });
  const controller = new AbortController();
  const signal = cli.signal ?? controller.signal;
  const onSigint = () => controller.abort();
  if (!cli.signal) process.once('SIGINT', onSigint);
  try {
    let id: string;
    try {
      ({ id } = await begin(jobs));
      begun = true;
    } catch (err) {
      if (err instanceof JobError) throw new UsageError(`${err.field}: ${err.message}`);
      throw err;
    }
    const cancel = () => void jobs.cancel(jobs.list().find((j) => j.id === id)?.kind ?? '', id);
    if (signal.aborted) cancel();
    else signal.addEventListener('abort', cancel, { once: true });
    await jobs.settled(id);
    signal.removeEventListener('abort', cancel);
    const e = end as JobEvent | undefined;
    cli.io.stdout(JSON.stringify(e ?? { id, status: 'completed' }) + '\n');
    return e?.status === 'cancelled' ? 130 : e?.status === 'failed' ? 1 : 0;
  } finally {
    if (!cli.signal) process.off('SIGINT', onSigint);
    await jobs.dispose();
    store.close();
    // A refused start leaves no new database behind.
    if (!begun) file.discard();
  }
}
