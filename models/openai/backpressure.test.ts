/**
 * Backpressure and failover of the endpoint pool (pool.ts; docs/scale.md): AIMD limits on 429/503
 * with hand-computed steps, a replica that stops answering taken out and put back, and calls
 * that all complete while one replica refuses (loopback servers: bench/latencyServer.mjs, SIMULATED).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { asRoleName } from '../../core/ids.ts';
import { parseEndpointRef, type EndpointDecision, type GenerateRequest } from '../../core/model/index.ts';
import { startLatencyServer, type LatencyServer } from '../../bench/latencyServer.mjs';
import { EndpointPool } from './pool.ts';
import { OpenAiProvider } from './OpenAiProvider.ts';

const servers: LatencyServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
const serve = async (o: Parameters<typeof startLatencyServer>[0]) => {
  const s = await startLatencyServer(o);
  servers.push(s);
  return s;
};
const request = (i: number): GenerateRequest => ({
  role: asRoleName('writer'),
  model: 'm',
  prompt: `call ${i}`,
  params: { temperature: 0, maxTokens: 8, topK: 1, topP: 1, minP: 0, stop: [] },
  seed: i,
  key: { taskKey: String(i), nodeId: 'n', attempt: 1, callIndex: 0 },
});

describe('EndpointPool AIMD', () => {
  it('halves the limit on a refusal once per round and climbs back by 1/limit per answer, never above concurrency', async () => {
    const [spec] = parseEndpointRef('openai:http://a.test:1/v1#m&concurrency=8');
    const log: EndpointDecision[] = [];
    const pool = new EndpointPool([spec!], { onDecision: (d) => void log.push(d), now: () => 1000 });
    const leases = await Promise.all(Array.from({ length: 8 }, () => pool.acquire(undefined, 'm')));
    leases[0]!.release('overloaded', 'answered 429');
    leases[1]!.release('overloaded', 'answered 429'); // sent in the same round: counted once
    for (const l of leases.slice(2)) l.release();
    expect(pool.limits()).toEqual([{ endpoint: 'http://a.test:1/v1#m', limit: 4, out: false }]);
    const refuse = async () => (await pool.acquire(undefined, 'm')).release('overloaded', 'answered 503');
    await refuse(); // 4 -> 2
    await refuse(); // 2 -> 1
    await refuse(); // at the floor: no decision
    // Additive increase from 1: 1 + 1/1 = 2 (up), 2 + 1/2 = 2.5, 2.5 + 1/2.5 = 2.9, 2.9 + 1/2.9 = 3.245 (up).
    for (let i = 0; i < 4; i++) (await pool.acquire(undefined, 'm')).release('ok');
    expect(log.map((d) => [d.action, d.limit, d.reason])).toEqual([
      ['decrease', 4, 'answered 429'],
      ['decrease', 2, 'answered 503'],
      ['decrease', 1, 'answered 503'],
      ['increase', 2, 'answered'],
      ['increase', 3, 'answered'],
    ]);
    // With a limit of 3, a 4th call waits until one of 3 ends.
    const held = await Promise.all([0, 1, 2].map(() => pool.acquire(undefined, 'm')));
    let granted = false;
    const fourth = pool.acquire(undefined, 'm').then((l) => ((granted = true), l));
    await new Promise((r) => setTimeout(r, 5));
    expect(granted).toBe(false);
    held[0]!.release('ok');
    (await fourth).release('ok');
    for (const l of held.slice(1)) l.release('ok');
    // Enough answers bring it back to 8 and no further.
    for (let i = 0; i < 100; i++) (await pool.acquire(undefined, 'm')).release('ok');
    expect(pool.limits()[0]!.limit).toBe(8);
    expect(log.filter((d) => d.action === 'increase').map((d) => d.limit)).toEqual([2, 3, 4, 5, 6, 7, 8]);
  });
});

describe('OpenAiProvider failover and backpressure', () => {
  it('takes out a replica that stops answering, finishes every call on the other, and puts it back once it answers again', async () => {
    const a = await serve({ latencyMs: 5 });
    const b = await serve({ latencyMs: 5 });
    const portA = a.port;
    await a.close(); // A stops answering: connection refused
    servers.splice(servers.indexOf(a), 1);
    const p = new OpenAiProvider({ models: { m: parseEndpointRef(`openai:${a.baseUrl}#m&concurrency=2,${b.baseUrl}#m&concurrency=2`) }, pool: { outMs: 300 } });
    const out = await Promise.all(Array.from({ length: 8 }, (_, i) => p.generate(request(i))));
    expect(out).toHaveLength(8);
    expect(b.stats().answered).toBe(8);
    const removed = p.endpointDecisions().filter((d) => d.action === 'remove');
    expect(removed.length).toBeGreaterThanOrEqual(1);
    expect(removed[0]!.endpoint).toBe(`${a.baseUrl}#m`);
    expect(removed[0]!.reason).toMatch(/cannot reach/);
    expect(removed[0]!.retryAt! - removed[0]!.at).toBe(300);
    // A comes back on its port; after the pause its probe is answered and it is put back.
    const back = await serve({ latencyMs: 5, port: portA });
    await new Promise((r) => setTimeout(r, 2 * 300 * 2 ** (removed.length - 1)));
    for (let i = 0; i < 4; i++) await p.generate(request(100 + i));
    expect(back.stats().answered).toBeGreaterThanOrEqual(1);
    expect(p.endpointDecisions().at(-1)).toMatchObject({ endpoint: `${a.baseUrl}#m`, action: 'restore', limit: 2 }); // back at its concurrency
    await p.dispose();
  });

  it('a replica answering 429 has its limit halved to 1 and every call completes on the other', async () => {
    const a = await serve({ latencyMs: 5, rejectEvery: 1 });
    const b = await serve({ latencyMs: 5 });
    const p = new OpenAiProvider({ models: { m: parseEndpointRef(`openai:${a.baseUrl}#m&concurrency=4,${b.baseUrl}#m&concurrency=4`) } });
    const out = await Promise.all(Array.from({ length: 12 }, (_, i) => p.generate(request(i))));
    expect(out.map((r) => r.text)).toHaveLength(12);
    expect(b.stats().answered).toBe(12);
    expect(a.stats().answered).toBe(0);
    const dec = p.endpointDecisions().filter((d) => d.endpoint === `${a.baseUrl}#m`).map((d) => [d.action, d.limit]);
    expect(dec).toEqual([['decrease', 2], ['decrease', 1]]);
    await p.dispose();
  });
});
