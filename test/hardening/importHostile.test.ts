/**
 * `flowlab import` on hostile traces (issue 30): a 100,000-deep parent chain, a cycle of parent
 * links and a duplicate span id each exit 1 with a located error (file, span id, path, line) and
 * never a stack overflow; a valid 100,000-span import succeeds. Each run is the real CLI in a child
 * process, whose peak memory (maxRSS) is printed.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../core/store/index.ts';
import { tempDir } from '../fixtures.ts';

const dir = tempDir('import-hostile');
const hex = (n: number, digits: number) => n.toString(16).padStart(digits, '0');
const TRACE = hex(0xabc, 32);

interface Span { traceId: string; spanId: string; parentSpanId?: string; name: string; startTimeUnixNano: string; endTimeUnixNano: string; attributes?: unknown[] }
const span = (trace: string, id: number, parent: number | undefined, name: string, t: number, attributes: unknown[] = []): Span => ({
  traceId: trace, spanId: hex(id, 16), ...(parent !== undefined && { parentSpanId: hex(parent, 16) }), name,
  startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(t) * 1000n), endTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(t) * 1000n + 500n), attributes,
});
/** One OTLP/JSON document, one span per line (so lines name spans). */
const doc = (spans: Span[]) => `{"resourceSpans":[{"scopeSpans":[{"scope":{"name":"hostile"},"spans":[\n${spans.map((s) => JSON.stringify(s)).join(',\n')}\n]}]}]}\n`;
const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** Runs `flowlab import file --db db`; the child prints its maxRSS (KiB) on exit. */
function importCli(file: string, db: string): Promise<{ code: number | null; out: string; err: string; peakMiB: number; seconds: number }> {
  const t0 = performance.now();
  const hook = 'data:text/javascript,process.on("exit",()=>process.stderr.write("\\nmaxrss-kib "+process.resourceUsage().maxRSS+"\\n"))';
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', hook, 'bin/flowlab.js', 'import', file, '--db', db], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      const kib = Number(/maxrss-kib (\d+)/.exec(err)?.[1] ?? NaN);
      resolve({ code, out, err: err.replace(/\nmaxrss-kib \d+\n/, ''), peakMiB: kib / 1024, seconds: (performance.now() - t0) / 1000 });
    });
  });
}

describe('flowlab import: hostile traces get located errors; 100,000 spans import', () => {
  it('a 100,000-deep parent chain: exit 1 naming the span past the depth limit, its path and line', async () => {
    const file = path.join(dir, 'chain.json');
    writeFileSync(file, doc(Array.from({ length: 100_000 }, (_, i) => span(TRACE, i + 1, i === 0 ? undefined : i, `step ${i}`, i))));
    const r = await importCli(file, path.join(dir, 'chain.db'));
    console.log(`import 100,000-deep chain: exit ${r.code}, peak memory ${r.peakMiB.toFixed(0)} MiB, ${r.seconds.toFixed(1)} s`);
    expect(r.code).toBe(1);
    expect(r.err).not.toMatch(/call stack/i);
    // Span 1001 (id 0x3e9) is the first 1,001 links deep; it is on line 1002 (the document's first line holds the header).
    expect(r.err).toContain(`${file}: resourceSpans[0].scopeSpans[0].spans[1000] (line 1002): span 00000000000003e9 is 1001 parent links deep`);
    expect(r.err).toContain('[BAD_SPAN_TREE]');
  }, 120_000);

  it('a cycle of parent links: exit 1 naming the spans of the cycle', async () => {
    const file = path.join(dir, 'cycle.json');
    writeFileSync(file, doc([span(TRACE, 1, undefined, 'root', 0), span(TRACE, 2, 4, 'a', 1), span(TRACE, 3, 2, 'b', 2), span(TRACE, 4, 3, 'c', 3)]));
    const r = await importCli(file, path.join(dir, 'cycle.db'));
    console.log(`import cycle: exit ${r.code}, peak memory ${r.peakMiB.toFixed(0)} MiB`);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${file}: resourceSpans[0].scopeSpans[0].spans[1] (line 3): the parent links of trace ${TRACE} form a cycle: 0000000000000002 -> 0000000000000004 -> 0000000000000003 -> 0000000000000002`);
  });

  it('a duplicate span id: exit 1 naming both places', async () => {
    const file = path.join(dir, 'dup.json');
    writeFileSync(file, doc([span(TRACE, 1, undefined, 'root', 0), span(TRACE, 2, 1, 'a', 1), span(TRACE, 2, 1, 'again', 2)]));
    const r = await importCli(file, path.join(dir, 'dup.db'));
    console.log(`import duplicate ids: exit ${r.code}, peak memory ${r.peakMiB.toFixed(0)} MiB`);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${file}: resourceSpans[0].scopeSpans[0].spans[2] (line 4): span id 0000000000000002 appears twice in trace ${TRACE} (first at resourceSpans[0].scopeSpans[0].spans[1] (line 3))`);
  });

  it('an attribute without a value: exit 1 naming its path', async () => {
    const file = path.join(dir, 'valueless.json');
    writeFileSync(file, doc([span(TRACE, 1, undefined, 'root', 0, [{ key: 'gen_ai.agent.name' }])]));
    const r = await importCli(file, path.join(dir, 'valueless.db'));
    expect(r.code).toBe(1);
    expect(r.err).toContain('resourceSpans[0].scopeSpans[0].spans[0].attributes[0]: attribute "gen_ai.agent.name" has no value');
  });

  it('a parent that is not in the file is kept as a top span, with a warning', async () => {
    const file = path.join(dir, 'partial.json');
    writeFileSync(file, doc([span(TRACE, 2, 99, 'orphan', 0, [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', 'solver')])]));
    const r = await importCli(file, path.join(dir, 'partial.db'));
    expect(r.code).toBe(0);
    expect(r.err).toContain('warning: ' + file + ': resourceSpans[0].scopeSpans[0].spans[0]: span 0000000000000002 names parent 0000000000000063, which is not in the file');
  });

  it('a valid 100,000-span import (1,000 traces of 100 spans) succeeds', async () => {
    const spans: Span[] = [];
    for (let t = 0; t < 1000; t++) {
      const trace = hex(t + 1, 32);
      let id = 1;
      spans.push(span(trace, id++, undefined, 'invoke_workflow team', 0, [attr('gen_ai.operation.name', 'invoke_workflow')]));
      for (let k = 0; k < 33; k++) {
        const agent = id++;
        spans.push(span(trace, agent, 1, `invoke_agent r${k}`, 3 * k + 1, [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', `r${k}`)]));
        spans.push(span(trace, id++, agent, 'chat m', 3 * k + 1, [attr('gen_ai.operation.name', 'chat')]));
        spans.push(span(trace, id++, 1, 'execute_tool calc', 3 * k + 2, [attr('gen_ai.operation.name', 'execute_tool'), attr('gen_ai.tool.name', 'calc')]));
      }
    }
    expect(spans.length).toBe(100_000);
    const file = path.join(dir, 'valid.json');
    const db = path.join(dir, 'valid.db');
    writeFileSync(file, doc(spans));
    const r = await importCli(file, db);
    console.log(`import valid 100,000 spans: exit ${r.code}, peak memory ${r.peakMiB.toFixed(0)} MiB, ${r.seconds.toFixed(1)} s`);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toMatch(/^Imported 1000 traces \(100000 spans\)/);
    const store = openStore(db);
    const id = /as experiment (\S+)/.exec(r.out)![1]!;
    expect(store.listRuns(id)).toHaveLength(1000);
    store.close();
    expect(r.peakMiB).toBeLessThan(1024);
  }, 300_000);
});
