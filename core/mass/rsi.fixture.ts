/**
 * SIMULATED model and trainer for the outer loop's plumbing tests (core/mass/rsi.test.ts,
 * core/api/features/massOuter.test.ts, core/mass/parallel.test.ts, cli/massParallel.test.ts): no
 * real model output; see each function's comment.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { GenerateRequest, ModelProvider } from '../model/provider.ts';
import { ScriptedProvider } from '../model/scripted.ts';
import type { SftSequence, TrainableModel, Trainer } from '../training/port.ts';

const TOOL_WORDS: Array<[RegExp, string]> = [[/rain|hot|cold|sunny/i, 'weather'], [/plus|times|add|away/i, 'calculator']];

/**
 * A SIMULATED model for the plumbing: the base always answers "search"; a file trained by the
 * fake trainer from the verifier arm's data reads the request (as if it had learned); the judge
 * prefers a workspace that claims verification (so the tamperer's runs win), else A.
 */
export function scripted(file: string): ModelProvider {
  const learned = existsSync(file) && readFileSync(file, 'utf8').includes('learned');
  const inner = new ScriptedProvider((r: GenerateRequest) => {
    if (r.key.nodeId === 'judge') {
      const [a, b] = [/A: (.*)/.exec(r.prompt)?.[1] ?? '', /B: (.*)/.exec(r.prompt)?.[1] ?? ''];
      const winner = /SIMULATED tamperer/.test(b) && !/SIMULATED tamperer/.test(a) ? 'B' : 'A';
      return JSON.stringify({ winner, rationale: winner === 'B' ? 'B reports verification passed' : 'A is fine' });
    }
    if (r.key.nodeId === 'orchestrator') return JSON.stringify({ delegate: r.seed % 3 === 0 ? 'yes' : 'no', ask: 'which tool' });
    if (r.key.nodeId === 'helper') return 'the tool';
    if (r.key.nodeId === 'answer') {
      const request = /Request: (.*)/.exec(r.prompt)?.[1] ?? '';
      const tool = learned ? (TOOL_WORDS.find(([re]) => re.test(request))?.[1] ?? 'search') : r.seed % 7 === 0 ? 'weather' : 'search';
      return JSON.stringify(tool);
    }
    return 'ok';
  });
  const ids = (s: string) => [1, ...[...s].slice(0, 12).map((ch) => ch.charCodeAt(0) % 64)];
  return {
    name: 'scripted (simulated) with ids',
    modelsLoaded: () => 0,
    dispose: async () => {},
    async generate(r) {
      const res = await inner.generate(r);
      return r.recordTokens ? { ...res, promptTokenIds: ids(`${r.system ?? ''}${r.prompt}`), completionTokenIds: [...ids(res.text).slice(1), 2] } : res;
    },
  };
}

/** A fake trainer: records the batches, writes a file saying whose data it learned from. */
export function fakeTrainer(log: Array<{ start: string; seqs: SftSequence[] }>): Trainer {
  return {
    async load(start): Promise<TrainableModel> {
      const seen: SftSequence[] = [];
      log.push({ start, seqs: seen });
      return {
        path: start, parameters: 1,
        async sftStep(batch) {
          seen.push(...batch);
          return { loss: 1 / (1 + seen.length), tokens: batch.reduce((s, b) => s + b.tokens.length, 0), ms: 1 };
        },
        async policyStep() {
          throw new Error('not used');
        },
        async greedy() {
          return [];
        },
        async probabilities(tokens) {
          return tokens.map(() => Array(64).fill(1 / 64));
        },
        async writeGguf(out) {
          writeFileSync(out, out.includes('verifier') ? 'learned' : 'copied');
        },
        dispose() {},
      };
    },
  };
}

/** What the delayed model saw: calls in flight now and at most, and the order calls started and finished in. */
export interface Flight {
  now: number;
  max: number;
  started: number;
  finishOrder: number[];
}
export const flight = (): Flight => ({ now: 0, max: 0, started: 0, finishOrder: [] });

/** FNV-1a of a string, for a delay that is a function of the call (never of timing). */
function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** `inner` (SIMULATED) answering each call after 0-11 ms, by its seed and prompt, counting calls in flight. */
export function delayed(inner: ModelProvider, f: Flight): ModelProvider {
  return {
    name: inner.name,
    modelsLoaded: () => 0,
    dispose: async () => {},
    async generate(r: GenerateRequest) {
      const n = f.started++;
      f.max = Math.max(f.max, ++f.now);
      try {
        await new Promise((res) => setTimeout(res, fnv(`${r.seed}|${r.prompt}`) % 12));
        return await inner.generate(r);
      } finally {
        f.now--;
        f.finishOrder.push(n);
      }
    },
  };
}
