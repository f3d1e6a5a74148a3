import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpJsonOf, runSpans, storedRuns } from '../core/otel/index.ts';
import { seedTeamExperiment } from '../core/otel/otel.fixture.ts';
import { openStore } from '../core/store/index.ts';
import { defaultTools } from '../core/tools/index.ts';
import { capture, tempDir } from '../test/fixtures.ts';
import { main } from './main.ts';

let dir: string;
let db: string;
let team: string;
beforeAll(async () => {
  dir = tempDir('otel-cli');
  db = path.join(dir, 'source.db');
  const store = openStore(db);
  team = await seedTeamExperiment(store);
  store.close();
});

async function cli(args: string[]) {
  const io = capture();
  const code = await main(args, io);
  return { code, out: io.out, err: io.err };
}

/** A local OTLP/HTTP receiver: records each request, answers with `status`. */
function receiver(status = 200) {
  const got: Array<{ url: string; method: string; headers: IncomingHttpHeaders; body: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      got.push({ url: req.url ?? '', method: req.method ?? '', headers: req.headers, body });
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(status === 200 ? '{}' : '{"code": 3, "message": "bad spans"}');
    });
  });
  return {
    got,
    start: () => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`))),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('flowlab export --format otlp-json / flowlab import / flowlab show', () => {
  it('exports an experiment, imports it into another database with the same blame, and shows an imported run', async () => {
    const file = path.join(dir, 'team.otlp.json');
    const ex = await cli(['export', team, '--format', 'otlp-json', '--out', file, '--db', db, '--json']);
    expect(ex.code, ex.err).toBe(0);
    expect(JSON.parse(ex.out)).toMatchObject({ format: 'otlp-json', file, experimentId: team, runs: 5, content: false });
    const db2 = path.join(dir, 'imported.db');
    const im = await cli(['import', file, '--db', db2, '--json']);
    expect(im.code, im.err).toBe(0);
    const imported = JSON.parse(im.out) as { experimentId: string; runs: Array<{ runId: string; producer: string; credit: unknown }> };
    const source = openStore(db, { mustExist: true });
    const want = source.listRuns(team).map((r) => r.credit);
    source.close();
    expect(imported.runs.map((r) => r.producer)).toEqual(['flowlab', 'flowlab', 'flowlab', 'flowlab', 'flowlab']);
    expect(imported.runs.map((r) => r.credit)).toEqual(want);
    const show = await cli(['show', imported.runs[2]!.runId, '--db', db2]);
    expect(show.code, show.err).toBe(0);
    expect(show.out).toContain('✗ calculate#1 [tool solver] ROOT FAILURE execution/TOOL_ERROR');
    expect(show.out).toContain('Root failures: calculate (execution TOOL_ERROR) -> solver');
    expect(show.out).toContain('Cascades (not blamed): verify <- calculate; answer <- calculate');
  });

  it('imports a foreign trace and prints the blame', async () => {
    const r = await cli(['import', 'core/otel/testdata/openai-agents.otlp.json', '--db', path.join(dir, 'agents.db')]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^Imported 2 traces \(10 spans\) from core\/otel\/testdata\/openai-agents\.otlp\.json as experiment exp-\S+ \(kind import\)/);
    expect(r.out).toContain('foreign  Agent workflow  failed  3 nodes, 2 edges  root failures: lookup_invoice (execution TOOL_ERROR) -> Billing  cascades: Billing');
    expect(r.out).toContain('foreign  research  failed  1 nodes, 0 edges  root failures: Researcher (execution AGENT_ERROR) -> Researcher');
  });

  it('an imported foreign run is shown ungraded; diff orders it by completion and --replay refuses it plainly', async () => {
    const db3 = path.join(dir, 'agents-show.db');
    const im = await cli(['import', 'core/otel/testdata/openai-agents.otlp.json', '--db', db3, '--json']);
    expect(im.code, im.err).toBe(0);
    const runId = (JSON.parse(im.out) as { runs: Array<{ runId: string }> }).runs[0]!.runId;
    const show = await cli(['show', runId, '--db', db3]);
    expect(show.code, show.err).toBe(0);
    const head = show.out.split('\n')[0]!;
    expect(head).toMatch(/expected -  ungraded \(no expected answer\)$/);
    expect(head).not.toContain('wrong');
    const json = await cli(['show', runId, '--db', db3, '--json']);
    expect(JSON.parse(json.out)).toMatchObject({ graded: false });
    const diff = await cli(['diff', runId, runId, '--db', db3]);
    expect(diff.code, diff.err).toBe(0);
    expect(diff.err).toBe(`flowlab diff: note: ${runId} is an imported run: ordered by completion (no workflow)\n`);
    expect(diff.out).not.toContain('wrong');
    const replay = await cli(['diff', runId, '--replay', '--db', db3]);
    expect(replay.code).toBe(1);
    expect(replay.err).toContain(`cannot replay ${runId}: an imported run has no workflow to replay`);
    expect(replay.err).toContain('[WRONG_KIND]');
    expect(replay.err).not.toContain('SCHEMA');
  });

  it('exports tables as CSV and JSON lines', async () => {
    for (const format of ['csv', 'jsonl']) {
      const out = path.join(dir, `tables-${format}`);
      const r = await cli(['export', team, '--format', format, '--out', out, '--db', db]);
      expect(r.code, r.err).toBe(0);
      expect(readdirSync(out).sort()).toEqual([`annotations.${format}`, `model_calls.${format}`, `node_events.${format}`, `runs.${format}`]);
      const runs = readFileSync(path.join(out, `runs.${format}`), 'utf8').trimEnd().split(format === 'csv' ? '\r\n' : '\n');
      expect(runs).toHaveLength(format === 'csv' ? 6 : 5);
      expect(r.out).toMatch(new RegExp(`^Exported 5 runs of ${team} as ${format.toUpperCase()} to .*: runs\\.${format} \\(5 rows\\), node_events\\.${format} \\(\\d+\\), model_calls\\.${format} \\(\\d+\\), annotations\\.${format} \\(0\\)\\n$`));
    }
  });

  it('bad arguments exit 2 with the usage; a missing file exits 1', async () => {
    for (const [args, msg] of [
      [['export', team, '--format', 'otlp-json', '--db', db], 'missing --out <file.json>'],
      [['export', team, '--format', 'csv', '--out', dir, '--endpoint', 'http://x', '--db', db], '--endpoint and --header go with --format otlp-http'],
      [['export', team, '--format', 'otlp-http', '--header', 'novalue', '--db', db], '--header takes name=value, got "novalue"'],
      [['export', team, '--format', 'xml', '--out', dir, '--db', db], '--format must be one of conversational, standard, otlp-json, otlp-http, csv, jsonl, got "xml"'],
    ] as const) {
      const r = await cli([...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toContain(msg);
      expect(r.err).toContain('Usage: flowlab export');
    }
    const r = await cli(['import', path.join(dir, 'nope.json'), '--db', path.join(dir, 'x.db')]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/nope\.json: no such file \[NOT_FOUND\]/);
  });
});

describe('flowlab export --format otlp-http', () => {
  const ok = receiver(200);
  const refuse = receiver(400);
  let okUrl: string;
  let refuseUrl: string;
  beforeAll(async () => {
    okUrl = await ok.start();
    refuseUrl = await refuse.start();
  });
  afterAll(async () => {
    await ok.stop();
    await refuse.stop();
  });

  it('posts the same OTLP/JSON the file export writes, with the given headers, to the collector URL', async () => {
    const runId = `${team}/2`;
    const r = await cli(['export', runId, '--format', 'otlp-http', '--endpoint', okUrl, '--header', 'Authorization=Basic abc', '--header', 'x-project=flowlab', '--db', db]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(new RegExp(`^Sent 1 run of ${team} by OTLP/HTTP to ${okUrl.replace(/[./]/g, '\\$&')}: 8 spans in 1 traces, 1 request, no content`));
    expect(ok.got).toHaveLength(1);
    const req = ok.got[0]!;
    expect({ method: req.method, url: req.url, type: req.headers['content-type'], auth: req.headers['authorization'], project: req.headers['x-project'] }).toEqual({ method: 'POST', url: '/v1/traces', type: 'application/json', auth: 'Basic abc', project: 'flowlab' });
    const store = openStore(db, { mustExist: true });
    const { experiment, runs } = storedRuns(store, runId, defaultTools());
    store.close();
    expect(JSON.parse(req.body)).toEqual(JSON.parse(otlpJsonOf(runSpans(experiment, runs))));
  });

  it('a collector that refuses the spans fails the command with EXPORT_FAILED', async () => {
    const r = await cli(['export', team, '--format', 'otlp-http', '--endpoint', refuseUrl, '--db', db]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(new RegExp(`^flowlab export: OTLP/HTTP export to ${refuseUrl.replace(/[./]/g, '\\$&')} failed on request 1 of 1 \\(\\d+ spans\\): .* \\[EXPORT_FAILED\\]\\n$`));
    expect(refuse.got).toHaveLength(1);
  });
});
