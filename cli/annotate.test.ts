import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { computeWorkflowHash, openStore } from '../core/store/index.ts';
import { agentEvent, capture, modelCall, newExperiment, runRecord, tempDir } from '../test/fixtures.ts';
import { main } from './main.ts';

/** A database with experiment `exp-a` of examples/gsm8k-single.yaml: runs exp-a-r0 (correct), exp-a-r1 and exp-a-r2 (wrong), each with node `solve`. */
function seeded(): string {
  const db = path.join(tempDir('cli-annotate'), 'lab.db');
  const store = openStore(db);
  const yaml = readFileSync('examples/gsm8k-single.yaml', 'utf8');
  store.createExperiment(newExperiment({ id: 'exp-a', workflowName: 'gsm8k-single', workflowYaml: yaml, workflowHash: computeWorkflowHash(yaml) }));
  for (const i of [0, 1, 2]) {
    const r = runRecord('exp-a', i, { correct: i === 0, score: i === 0 ? 1 : 0, startedAt: 1_800_000_000_000 + 1000 * i, endedAt: 1_800_000_000_100 + 1000 * i });
    store.saveRun(r, [agentEvent(r.runId, 'solve', 'solver', [modelCall({ completion: `answer ${i}` })])]);
  }
  store.finishExperiment('exp-a', 'completed');
  store.close();
  return db;
}

const flat = (s: string) => s.replace(/[│┌┐└┘├┤┬┴┼─]/g, ' ');

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = capture();
  const code = await main(args, io);
  return { code, out: io.out, err: io.err };
}

describe('flowlab annotate / annotations / ls --tag / export', () => {
  it('annotates a run and a node, lists them, finds the run by tag, exports them, removes one', async () => {
    const db = seeded();
    let r = await cli(['annotate', 'exp-a-r1', '--score', '0.5', '--tag', 'silent', '--tag', 'arith', '--note', 'right plan, wrong sum', '--author', 'ada', '--db', db, '--json']);
    expect(r.code).toBe(0);
    const runNote = JSON.parse(r.out) as { id: string; runId: string; score: number; tags: string[]; note: string; author: string };
    expect(runNote).toMatchObject({ runId: 'exp-a-r1', experimentId: 'exp-a', score: 0.5, tags: ['arith', 'silent'], note: 'right plan, wrong sum', author: 'ada' });
    r = await cli(['annotate', 'exp-a-r1', '--node', 'solve', '--tag', 'arith', '--author', 'bob', '--db', db]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Annotated node solve of run exp-a-r1: tags arith \(ann-\d{8}-\d{6}-[0-9a-z]{4}\)\. List: flowlab annotations exp-a-r1\n$/);
    await cli(['annotate', 'exp-a-r2', '--score', '-1', '--author', 'ada', '--db', db]);

    r = await cli(['annotations', 'exp-a', '--db', db]);
    expect(r.code).toBe(0);
    const lines = flat(r.out).split('\n');
    expect(lines.find((l) => l.includes('(run)') && l.includes('exp-a-r1'))).toMatch(/exp-a-r1\s+\(run\)\s+0\.5\s+arith, silent\s+right plan, wrong sum\s+ada/);
    expect(lines.find((l) => l.includes('solve'))).toMatch(/exp-a-r1\s+solve\s+-\s+arith\s+-\s+bob/);
    expect(r.out).toContain('3 annotations.');
    r = await cli(['annotations', 'exp-a-r1', '--node', 'solve', '--json', '--db', db]);
    expect((JSON.parse(r.out) as Array<{ author: string }>).map((a) => a.author)).toEqual(['bob']);
    r = await cli(['annotations', '--tag', 'silent', '--json', '--db', db]);
    expect((JSON.parse(r.out) as Array<{ id: string }>).map((a) => a.id)).toEqual([runNote.id]);

    // ls --tag: runs with the tag on themselves or a node; the tags column.
    r = await cli(['ls', '--tag', 'arith', '--json', '--db', db]);
    expect((JSON.parse(r.out) as { rows: Array<{ runId: string; tags: string[] }> }).rows.map((h) => [h.runId, h.tags])).toEqual([['exp-a-r1', ['arith', 'silent']]]);
    r = await cli(['ls', 'exp-a', '--db', db]);
    expect(flat(r.out)).toMatch(/1\s+exp-a-r1\s+completed\s+wrong\s+4\s+-\s+-\s+arith, silent\s+39\s+100/);

    // Exports: annotations.jsonl / .csv beside the trace tables; OTLP/JSON span events.
    const out = path.join(tempDir('cli-annotate-out'), 'x');
    r = await cli(['export', 'exp-a', '--format', 'jsonl', '--out', out, '--db', db, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ annotations: 3, files: ['runs.jsonl', 'node_events.jsonl', 'model_calls.jsonl', 'annotations.jsonl'] });
    const rows = readFileSync(path.join(out, 'annotations.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows[0]).toEqual({ annotation_id: runNote.id, run_id: 'exp-a-r1', experiment_id: 'exp-a', score: 0.5, tags: ['arith', 'silent'], note: 'right plan, wrong sum', author: 'ada', created_at: expect.any(Number) });
    expect(rows.map((x) => [x.run_id, x.node_id ?? null, x.score ?? null])).toEqual([['exp-a-r1', null, 0.5], ['exp-a-r1', 'solve', null], ['exp-a-r2', null, -1]]);
    r = await cli(['export', 'exp-a', '--format', 'csv', '--out', out, '--db', db]);
    const csv = readFileSync(path.join(out, 'annotations.csv'), 'utf8').split('\r\n');
    expect(csv[0]).toBe('annotation_id,run_id,experiment_id,node_id,score,tags,note,author,created_at');
    expect(csv[1]).toMatch(new RegExp(`^${runNote.id},exp-a-r1,exp-a,,0\\.5,"\\[""arith"",""silent""\\]","right plan, wrong sum",ada,\\d+$`));
    const file = path.join(out, 'traces.json');
    // Without --with-content the note stays home (it may quote a prompt); score, tags and author go.
    r = await cli(['export', 'exp-a-r1', '--format', 'otlp-json', '--out', file, '--db', db]);
    expect(r.out).toContain('2 annotations as span events');
    expect(readFileSync(file, 'utf8')).not.toContain('right plan, wrong sum');
    expect(readFileSync(file, 'utf8')).toContain('"flowlab.annotation.author"');
    r = await cli(['export', 'exp-a-r1', '--format', 'otlp-json', '--out', file, '--with-content', '--db', db]);
    const spans = (JSON.parse(readFileSync(file, 'utf8')) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string; events?: Array<{ name: string; attributes: Array<{ key: string; value: Record<string, unknown> }> }> }> }> }> }).resourceSpans.flatMap((x) => x.scopeSpans.flatMap((s) => s.spans));
    const eventsOf = (name: RegExp) => spans.filter((s) => name.test(s.name)).flatMap((s) => s.events ?? []).filter((e) => e.name === 'gen_ai.evaluation.result');
    const attr = (e: { attributes: Array<{ key: string; value: Record<string, unknown> }> }, key: string) => e.attributes.find((a) => a.key === key)?.value;
    const [onRun] = eventsOf(/^invoke_workflow /);
    expect(attr(onRun!, 'gen_ai.evaluation.name')).toEqual({ stringValue: 'annotation' });
    expect(attr(onRun!, 'gen_ai.evaluation.score.value')).toEqual({ doubleValue: 0.5 });
    expect(attr(onRun!, 'gen_ai.evaluation.score.label')).toEqual({ stringValue: 'arith, silent' });
    expect(attr(onRun!, 'gen_ai.evaluation.explanation')).toEqual({ stringValue: 'right plan, wrong sum' });
    expect(attr(onRun!, 'flowlab.annotation.author')).toEqual({ stringValue: 'ada' });
    const [onNode] = eventsOf(/^invoke_agent solver$/);
    expect(attr(onNode!, 'flowlab.annotation.author')).toEqual({ stringValue: 'bob' });

    r = await cli(['annotations', 'rm', runNote.id, '--db', db]);
    expect(r.out).toBe(`Removed ${runNote.id} (run exp-a-r1).\n`);
    r = await cli(['ls', '--tag', 'silent', '--json', '--db', db]);
    expect((JSON.parse(r.out) as { total: number }).total).toBe(0);
  });

  it('refuses what cannot be stored, saying what and where', async () => {
    const db = seeded();
    let r = await cli(['annotate', 'exp-a-r1', '--author', 'ada', '--db', db]);
    expect([r.code, r.err]).toEqual([2, expect.stringContaining('give at least one of --score, --tag, --note')]);
    r = await cli(['annotate', 'exp-a-r1', '--score', 'high', '--db', db]);
    expect([r.code, r.err]).toEqual([2, expect.stringContaining('--score must be a number, e.g. 0.5 or 4, got "high"')]);
    // Number() reads hexadecimal and binary: "0x10" was stored as a score of 16.
    for (const odd of ['0x10', '0b11', 'Infinity']) {
      r = await cli(['annotate', 'exp-a-r1', '--score', odd, '--db', db]);
      expect([r.code, r.err]).toEqual([2, expect.stringContaining(`--score must be a number, e.g. 0.5 or 4, got "${odd}"`)]);
    }
    r = await cli(['annotate', 'exp-a-r1', '--score', '-2.5e-1', '--author', 'ada', '--db', db, '--json']);
    expect([r.code, (JSON.parse(r.out) as { score: number }).score]).toEqual([0, -0.25]);
    r = await cli(['annotate', 'exp-a-r1', '--tag', 'two words', '--db', db]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/annotation\.tags\.0: a tag is letters, digits and - _ \. : \/ \(no spaces\).*\[INVALID_RECORD\]/);
    r = await cli(['annotate', 'exp-a-r9', '--note', 'x', '--db', db]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/no run exp-a-r9 to annotate.*\[NOT_FOUND\]/);
    r = await cli(['annotate', 'exp-a-r1', '--node', 'plan', '--note', 'x', '--db', db]);
    expect(r.err).toMatch(/run exp-a-r1 has no node "plan" to annotate.*\[NOT_FOUND\]/);
    r = await cli(['annotations', 'exp-nope', '--db', db]);
    expect([r.code, r.err]).toEqual([1, expect.stringMatching(/exp-nope.*\[NOT_FOUND\]/)]);
    r = await cli(['annotations', 'exp-a', '--node', 'solve', '--db', db]);
    expect([r.code, r.err]).toEqual([2, expect.stringContaining('--node goes with a run id')]);
    r = await cli(['annotations', 'rm', 'ann-nope', '--db', db]);
    expect([r.code, r.err]).toEqual([1, expect.stringMatching(/no annotation ann-nope.*\[NOT_FOUND\]/)]);
    // A tag no annotation can carry, as a filter: refused naming the flag (was an empty table, as if no run had it).
    for (const cmd of [['ls'], ['annotations', 'exp-a']]) {
      r = await cli([...cmd, '--tag', 'two words', '--db', db]);
      expect([r.code, r.err.split('\n')[0]]).toEqual([2, `flowlab ${cmd[0]}: --tag "two words": a tag is letters, digits and - _ . : / (no spaces), starting with a letter or digit`]);
    }
  });
});
