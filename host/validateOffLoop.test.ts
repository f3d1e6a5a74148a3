/**
 * No request blocks the lab host (issue 30): while a 1 MiB workflow is validated (seconds of
 * parsing, in the validation worker), 50 other API requests and a new event stream are each
 * answered within 100 ms. Prints the slowest.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type RunningServe } from '../cli/commands/serve.ts';
import { MAX_WORKFLOW_CHARS } from '../core/api/index.ts';
import { tempDir } from '../test/fixtures.ts';
import { TOKEN_HEADER } from './server.ts';
import { createWorkflowValidator } from './workflowValidator.ts';

/** A legal workflow of about `chars` characters: a chain of steps, each reading the question. */
function bigWorkflow(chars: number): string {
  let out = 'name: big\nroles:\n  solver: { kind: executor, instructions: Solve. }\nsteps:\n';
  let i = 0;
  while (out.length < chars - 120) out += `  - id: s${i}\n    role: solver\n    prompt: "Go on from {{task.question}} ${i++}"\n    output: { checks: [non_empty] }\n`;
  return `${out}answer: s${i - 1}\n`;
}

const dir = tempDir('offloop');
let serve: RunningServe;
const call = async (method: string, payload?: unknown) => {
  const res = await fetch(`http://127.0.0.1:${serve.server.port}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json', [TOKEN_HEADER]: serve.server.token }, ...(payload === undefined ? {} : { body: JSON.stringify(payload) }) });
  return { status: res.status, body: (await res.json()) as { ok: boolean; result?: { ok: boolean; summary?: { nodes: unknown[] } }; error?: { code: string } } };
};

beforeAll(async () => {
  serve = await startServe({ port: 0, host: '127.0.0.1', db: path.join(dir, 'lab.db'), models: path.join(dir, 'models'), renderer: path.join(dir, 'no-renderer') });
});
afterAll(async () => {
  await serve?.stop();
});

describe('validateWorkflow runs off the event loop', () => {
  it('answers 50 other requests within 100 ms each during a 1 MiB validation', async () => {
    const text = bigWorkflow(MAX_WORKFLOW_CHARS);
    expect(text.length).toBeLessThanOrEqual(MAX_WORKFLOW_CHARS);
    // A host that has been up a moment: its worker (started with the server) has loaded the parser.
    expect((await call('validateWorkflow', { text: 'name: warm\nsteps: []\n' })).status).toBe(200);
    // The machine's own noise: the same 50 requests with nothing else running.
    const quiet: number[] = [];
    for (let i = 0; i < 50; i++) {
      const s = performance.now();
      await call(i % 2 ? 'appInfo' : 'listExperiments');
      quiet.push(performance.now() - s);
      await new Promise((r) => setTimeout(r, 10));
    }
    const quietMax = Math.max(...quiet);
    const t0 = performance.now();
    const big = call('validateWorkflow', { text }).then((r) => ({ ...r, ms: performance.now() - t0 }));
    let settled = false;
    void big.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 150)); // the document is in the worker by now
    const latencies: number[] = [];
    let during = 0;
    for (let i = 0; i < 50; i++) {
      const s = performance.now();
      const r = await call(i % 2 ? 'appInfo' : 'listExperiments');
      latencies.push(performance.now() - s);
      expect(r.status).toBe(200);
      if (!settled) during++;
      await new Promise((r) => setTimeout(r, 10));
    }
    const s = performance.now();
    const events = await fetch(`http://127.0.0.1:${serve.server.port}/api/events?token=${serve.server.token}`);
    const reader = events.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const streamMs = performance.now() - s;
    await reader.cancel();
    const done = await big;
    console.log(`latencies in order: ${latencies.map((x) => x.toFixed(0)).join(" ")}`);
    latencies.sort((a, b) => b - a);
    console.log(`slowest five: ${latencies.slice(0, 5).map((x) => x.toFixed(1)).join(", ")} ms`);
    console.log(`validateWorkflow of ${text.length} chars took ${done.ms.toFixed(0)} ms; ${during} of 50 other requests were answered during it, the slowest in ${latencies[0]!.toFixed(1)} ms; a new event stream opened in ${streamMs.toFixed(1)} ms`);
    expect(done.status).toBe(200);
    expect(done.body.result?.ok).toBe(true);
    expect(done.body.result?.summary?.nodes.length).toBeGreaterThan(9000);
    expect(during).toBeGreaterThanOrEqual(20); // the test measured while the validation ran
    // 100 ms each, as the issue asks; on a machine too loaded to answer 50 quiet requests within
    // 100 ms (a shared 2-core box), the bound is its own slowest quiet answer plus half. Blocking
    // the loop (the bug: 4-5 s per request) fails either way.
    const bound = quietMax < 100 ? 100 : quietMax * 1.5;
    console.log(`slowest quiet request ${quietMax.toFixed(1)} ms; bound ${bound.toFixed(0)} ms`);
    expect(latencies[0]).toBeLessThan(bound);
    expect(first).toContain(': connected');
    expect(streamMs).toBeLessThan(100);
  }, 120_000);

  it('bounds a validation in time (the worker is ended, the caller told) and the queue in length', async () => {
    const v = createWorkflowValidator({ timeoutMs: 200, maxQueue: 2 });
    try {
      expect(v.offThread).toBe(true);
      const text = bigWorkflow(MAX_WORKFLOW_CHARS);
      const a = v.validate(text);
      const b = v.validate('name: x\nsteps: []\n');
      await expect(v.validate('name: y\nsteps: []\n')).rejects.toMatchObject({ code: 'BUSY' });
      await expect(a).rejects.toMatchObject({ code: 'BAD_REQUEST', message: 'validateWorkflow: the document took longer than 0.2 s to validate; split it or shorten it' });
      // The next document gets a fresh worker.
      expect((await b).ok).toBe(false);
    } finally {
      await v.close();
    }
  }, 60_000);
});
