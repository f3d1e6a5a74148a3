import { describe, expect, it } from 'vitest';
import { executePending } from '../pipeline/index.ts';
import { HINTS_HEADING } from '../engine/runNode.ts';
import { asExperimentId, asNodeId, asRoleName, asRunId } from '../ids.ts';
import { ScriptedProvider } from '../model/scripted.ts';
import type { GenerateRequest } from '../model/provider.ts';
import { openStore, type Card, type RunWithEvents } from '../store/index.ts';
import type { Grader } from '../tasks/types.ts';
import { defaultTools } from '../tools/index.ts';
import type { ModelCallRecord, NodeEvent } from '../trace/events.ts';
import type { RunRecord } from '../results/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import {
  CARD_SCHEMA,
  CardInjector,
  cardHints,
  cardSession,
  CardsImportError,
  distillCard,
  DistillError,
  distillFromExperiment,
  distillPrompt,
  estimateTokens,
  exportCards,
  importCards,
  parseCardsDocument,
  pickExemplars,
  renderCard,
  type CardsConfig,
} from './index.ts';

// ---------- hand-built runs ----------

function call(role: string, prompt: string, completion: string, model = 'tiny.gguf'): ModelCallRecord {
  return { callIndex: 0, role: asRoleName(role), modelRef: 'default', model, prompt, params: { temperature: 0, maxTokens: 8 }, seed: 1, completion, promptTokens: 1, completionTokens: 1, ms: 1, startedAt: 0 };
}
function handRun(i: number, h: Record<string, number>, opts: { score?: number; correct?: boolean; calls?: ModelCallRecord[]; simulated?: boolean } = {}): RunWithEvents {
  const runId = asRunId(`exp-x/${i}`);
  const run: RunRecord = {
    runId, experimentId: asExperimentId('exp-x'), taskIndex: i, taskId: `t/${i}`, status: 'completed', score: opts.score ?? 0, correct: opts.correct ?? false,
    seed: i, promptTokens: 0, completionTokens: 0, startedAt: 0, endedAt: 0, failures: {},
    ladder: Object.fromEntries(Object.entries(h).map(([role, reward]) => [role, { reward } as never])),
    simulated: opts.simulated,
  };
  const events: NodeEvent[] = [{
    runId, nodeId: asNodeId('solve'), attempt: 1, seq: 0, kind: 'agent', role: asRoleName('solver'), wiredBy: asRoleName('human'), runBy: asRoleName('solver'),
    inputs: {}, status: 'ok', calls: opts.calls ?? [call('solver', `Q${i}`, `A${i}`)], startedAt: 0, endedAt: 0,
  }];
  return { run, events };
}

describe('pickExemplars', () => {
  const runs = [
    handRun(0, { solver: 0.4 }, { score: 0 }),
    handRun(1, { solver: 0.9 }, { score: 1, correct: true }),
    handRun(2, { solver: 0.7 }, { score: 0.5 }),
    handRun(3, { solver: 0.7 }, { score: 1, correct: true }),
    handRun(4, { solver: 0.7 }, { score: 0.5 }),
    handRun(5, { solver: 1.0 }, { calls: [call('planner', 'p', 'q')] }), // no solver call: not an exemplar
    handRun(6, { planner: 1.0 }), // no solver ladder
  ];

  it('takes the K best by the role ladder reward h; ties: higher score, then task order', () => {
    const picked = pickExemplars(runs, 'solver', 4);
    expect(picked.map((e) => e.taskIndex)).toEqual([1, 3, 2, 4]);
    expect(picked[0]).toMatchObject({ runId: 'exp-x/1', reward: 0.9, correct: true, simulated: false, turns: [{ nodeId: 'solve', attempt: 1, prompt: 'Q1', completion: 'A1' }] });
    expect(pickExemplars(runs, 'solver', 100)).toHaveLength(5);
    expect(pickExemplars(runs, 'solver', 0)).toEqual([]);
  });

  it('onlySuccesses keeps only correct runs, and may find none', () => {
    expect(pickExemplars(runs, 'solver', 5, { onlySuccesses: true }).map((e) => e.taskIndex)).toEqual([1, 3]);
    expect(pickExemplars(runs.filter((r) => !r.run.correct), 'solver', 5, { onlySuccesses: true })).toEqual([]);
  });

  it('marks simulated runs: injected faults or a simulated model', () => {
    const sim = [handRun(0, { solver: 1 }, { simulated: true }), handRun(1, { solver: 0.5 }, { calls: [call('solver', 'q', 'a', 'scripted (simulated)')] }), handRun(2, { solver: 0.1 })];
    expect(pickExemplars(sim, 'solver', 3).map((e) => e.simulated)).toEqual([true, true, false]);
  });
});

describe('distillPrompt', () => {
  it('fits the budget (estimated ceil(chars/4)), best exemplar first, and gives the card schema', () => {
    const long = [handRun(0, { solver: 1 }, { calls: [call('solver', 'Question: ' + 'x'.repeat(3000) + ' Expression as JSON:', '{"expression":"1+1"}')] }), handRun(1, { solver: 0.5 })];
    const ex = pickExemplars(long, 'solver', 2);
    const tp = distillPrompt({ name: 'solver', instructions: 'Write one expression.' }, ex, 300);
    expect(tp.tokens).toBeLessThanOrEqual(300);
    expect(estimateTokens(tp.system) + estimateTokens(tp.prompt)).toBe(tp.tokens);
    expect(tp.prompt.indexOf('Example 1 (reward h=1.00')).toBeLessThan(tp.prompt.indexOf('Example 2 (reward h=0.50'));
    expect(tp.prompt).toContain('Question: x'); // the start of a long prompt survives
    expect(tp.prompt).toContain('Expression as JSON:'); // and its end
    expect(tp.prompt).toContain('Its instructions: Write one expression.');
    expect(tp.schema).toBe(CARD_SCHEMA);
    expect(() => distillPrompt({ name: 'solver' }, ex, 60)).toThrow(RangeError);
  });
});

// ---------- teacher ----------

const CARD_JSON = JSON.stringify({ title: 'Write the arithmetic', applies_when: 'a word problem needs a sum', advice: 'Turn each quantity into a number and write one expression.' });

describe('distillCard', () => {
  it('a scripted (simulated) teacher answering JSON under the card schema gives a SIMULATED card with provenance', async () => {
    const requests: GenerateRequest[] = [];
    const teacher = new ScriptedProvider((r) => { requests.push(r); return CARD_JSON; });
    const ex = pickExemplars([handRun(0, { solver: 0.9 }, { correct: true, score: 1 }), handRun(1, { solver: 0.8 }, { correct: true, score: 1 })], 'solver', 5, { onlySuccesses: true });
    const card = await distillCard({ provider: teacher, teacherRef: 'default', role: 'solver', exemplars: ex, seed: 7, onlySuccesses: true, requestedShots: 5, experimentId: 'exp-x', now: () => new Date(Date.UTC(2025, 2, 14, 9, 26, 53)) });
    expect(card.id).toMatch(/^card-20250314-092653-[0-9a-z]{4}$/);
    expect(card).toMatchObject({
      role: 'solver', title: 'Write the arithmetic', appliesWhen: 'a word problem needs a sum', advice: 'Turn each quantity into a number and write one expression.',
      sourceRuns: ['exp-x/0', 'exp-x/1'], teacher: 'scripted (simulated)', shots: 2, onlySuccesses: true, simulated: true, experimentId: 'exp-x',
      createdAt: Date.UTC(2025, 2, 14, 9, 26, 53),
    });
    expect(card.meta?.provenance).toMatchObject({ teacherRef: 'default', seed: 7, requestedShots: 5, exemplars: [{ runId: 'exp-x/0', reward: 0.9, correct: true }, { runId: 'exp-x/1' }] });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ model: 'default', seed: 7, jsonSchema: CARD_SCHEMA, params: { temperature: 0 } });
    expect(requests[0]!.prompt).toContain('Reply: A0');
  });

  it('unusable teacher output: a typed error, and nothing is stored', async () => {
    const { store, exp, graph, tools } = experiment(2);
    await executePending({ store, experimentId: exp.id, graph, grader, provider: solverModel(), tools, seed: 1 });
    for (const [reply, code] of [
      ['Once upon a time', 'TEACHER_UNPARSABLE'],
      ['{"title":"t","applies_when":"w"}', 'TEACHER_INVALID'],
      ['{"title":"  ","applies_when":"w","advice":"a"}', 'TEACHER_INVALID'],
      ['{"title":"t","applies_when":"w","advice":"a","extra":1}', 'TEACHER_INVALID'],
      ['[1]', 'TEACHER_INVALID'],
    ] as const) {
      const err = await distillFromExperiment({ store, experimentId: exp.id, graph, role: 's', shots: 2, provider: new ScriptedProvider(() => reply), teacherRef: 'default', seed: 1 }).catch((e) => e);
      expect(err, reply).toBeInstanceOf(DistillError);
      expect(err.code, reply).toBe(code);
    }
    const failing = new ScriptedProvider(() => { throw new Error('context too small'); });
    const err = await distillFromExperiment({ store, experimentId: exp.id, graph, role: 's', shots: 2, provider: failing, teacherRef: 'default', seed: 1 }).catch((e) => e);
    expect(err.code).toBe('TEACHER_FAILED');
    expect(store.improve.listCards()).toEqual([]);
  });

  it('--only-successes with no correct run: NO_EXEMPLARS saying a tiny model may have none', async () => {
    const { store, exp, graph, tools } = experiment(2);
    await executePending({ store, experimentId: exp.id, graph, grader, provider: new ScriptedProvider(() => '{"answer": -1}'), tools, seed: 1 });
    const err = await distillFromExperiment({ store, experimentId: exp.id, graph, role: 's', shots: 5, onlySuccesses: true, provider: new ScriptedProvider(() => CARD_JSON), teacherRef: 'default', seed: 1 }).catch((e) => e);
    expect(err).toMatchObject({ code: 'NO_EXEMPLARS' });
    expect(err.message).toContain('0 of 2 runs correct');
    expect(err.message).toContain('tiny model');
    expect(store.improve.listCards()).toEqual([]);
  });
});

// ---------- injection ----------

/** A card whose rendered text is exactly `chars` characters. */
function sized(id: string, chars: number, createdAt = 0, role = 's'): Card {
  const base = { title: id, appliesWhen: 'w', advice: '' };
  const advice = 'a'.repeat(chars - renderCard(base).length);
  const card: Card = { id, role, title: id, appliesWhen: 'w', advice, sourceRuns: [], teacher: 't', shots: 5, onlySuccesses: true, simulated: false, createdAt };
  expect(renderCard(card)).toHaveLength(chars);
  return card;
}

describe('cardHints', () => {
  it('keeps cards within the token budget (ceil(chars/4)): 40 + 60 chars with 20 tokens keeps the first only', () => {
    const a = sized('c1', 40);
    const b = sized('c2', 60);
    // 40 chars = 10 tokens fits 20; 60 chars = 15 tokens does not fit the 10 left.
    expect(cardHints([a, b], { budgetTokens: 20 })).toEqual({ text: renderCard(a), ids: ['c1'] });
    expect(cardHints([a, b], { budgetTokens: 25 }).ids).toEqual(['c1', 'c2']);
    // A card that does not fit is skipped; a later one that fits is kept.
    expect(cardHints([b, a], { budgetTokens: 12 }).ids).toEqual(['c1']);
    expect(cardHints([a, b], { budgetTokens: 100, maxCards: 1 }).ids).toEqual(['c1']);
    expect(cardHints([a, b], { budgetTokens: 100, countTokens: () => 60 }).ids).toEqual(['c1']);
    expect(cardHints([], { budgetTokens: 100 })).toEqual({ text: '', ids: [] });
  });

  it('the injector gives each role its own cards newest first, freezes a run\'s set, and reports what each run saw', () => {
    const old = sized('old', 40, 1);
    const inj = new CardInjector([old, sized('p', 40, 5, 'planner')], { budgetTokens: 10 });
    expect(inj.hints('s', 'r0')).toBe(renderCard(old));
    inj.add(sized('new', 40, 2));
    expect(inj.hints('s', 'r0')).toBe(renderCard(old)); // r0 started before the new card
    expect(inj.hints('s', 'r1')).toBe(renderCard(sized('new', 40, 2))); // newest first; budget holds one
    expect(inj.hints('x', 'r1')).toBe('');
    expect(inj.cardsUsed('r0')).toEqual(['old']);
    expect(inj.cardsUsed('r1')).toEqual(['new']);
    expect(inj.cardsUsed('never')).toEqual([]);
  });
});

// ---------- through the engine ----------

const yaml = (prompt: string) => `
name: t
roles: { s: { kind: executor, instructions: Solve it. } }
nodes:
  - { id: solve, role: s, prompt: "${prompt}", inputs: { q: task.question }, output: { schema: { type: object, properties: { answer: { type: number } }, required: [answer] } } }
answer: solve.answer
`;
const grader: Grader = { grade: (a, t) => ({ score: Number(a) === Number(t.expected) ? 1 : 0, correct: Number(a) === Number(t.expected), extracted: String(a), expected: t.expected }) };

function experiment(n: number, prompt = '{{q}}') {
  const store = openStore(':memory:');
  const tools = defaultTools();
  const text = yaml(prompt);
  const { graph } = parseWorkflow(text, { tools });
  const exp = store.createExperiment({
    kind: 'run', workflowName: 't', workflowYaml: text, workflowHash: 'h', dataset: 'toy', split: 'test', seed: 5, config: {},
    tasks: Array.from({ length: n }, (_, i) => ({ taskIndex: i, taskId: `toy/${i}`, input: { question: `${i}+1` }, expected: String(i + 1) })),
  });
  return { store, tools, graph, exp };
}

/** A scripted (simulated) model that solves `i+1` and writes a card when asked under the card schema. */
function solverModel(seen: GenerateRequest[] = []) {
  return new ScriptedProvider((r) => {
    seen.push(r);
    if (r.jsonSchema === CARD_SCHEMA) return CARD_JSON;
    const i = Number(/(\d+)\+1/.exec(r.prompt)![1]);
    return JSON.stringify({ answer: i + 1 });
  });
}

describe('hints reach the prompt, and uses are counted', () => {
  const card = sized('card-a', 40);

  it('a template without {{hints}}: the card is appended to the role\'s system instructions; uses recorded per run', async () => {
    const { store, exp, graph, tools } = experiment(2);
    store.improve.saveCard(card);
    const seen: GenerateRequest[] = [];
    const { hooks } = cardSession({ store, experimentId: exp.id, graph, config: { selection: ['card-a'], ids: ['card-a'], budgetTokens: 64 }, provider: solverModel(), modelFor: () => 'default', seed: 5 });
    await executePending({ store, experimentId: exp.id, graph, grader, provider: solverModel(seen), tools, seed: 5, ...hooks });
    expect(seen).toHaveLength(2);
    for (const r of seen) {
      expect(r.system).toBe(`Solve it.\n\n${HINTS_HEADING}\n${renderCard(card)}`);
      expect(r.prompt).not.toContain(card.advice);
    }
    expect(store.improve.usesOf('card-a')).toEqual([`${exp.id}/0`, `${exp.id}/1`]);
    expect(store.improve.getCard('card-a').uses).toBe(2);
    // The stored trace shows what the model was given.
    expect(store.getRunEvents(`${exp.id}/0`)[0]!.calls[0]!.system).toContain(card.advice);
  });

  it('a template with {{hints}}: the card fills the slot and the system text stays the role\'s', async () => {
    const { store, exp, graph, tools } = experiment(1, 'Hints: {{hints}}Q: {{q}}');
    store.improve.saveCard(card);
    const seen: GenerateRequest[] = [];
    const { hooks } = cardSession({ store, experimentId: exp.id, graph, config: { selection: 'all', ids: ['card-a'], budgetTokens: 64 }, provider: solverModel(), modelFor: () => 'default', seed: 5 });
    await executePending({ store, experimentId: exp.id, graph, grader, provider: solverModel(seen), tools, seed: 5, ...hooks });
    expect(seen[0]!.prompt).toBe(`Hints: ${renderCard(card)}Q: 0+1`);
    expect(seen[0]!.system).toBe('Solve it.');
    expect(store.improve.usesOf('card-a')).toEqual([`${exp.id}/0`]);
  });

  it('no cards: prompts are exactly as before (no heading, no uses)', async () => {
    const { store, exp, graph, tools } = experiment(1);
    const seen: GenerateRequest[] = [];
    const { hooks } = cardSession({ store, experimentId: exp.id, graph, config: { selection: 'none', ids: [], budgetTokens: 64 }, provider: solverModel(), modelFor: () => 'default', seed: 5 });
    await executePending({ store, experimentId: exp.id, graph, grader, provider: solverModel(seen), tools, seed: 5, ...hooks });
    expect(seen[0]!.system).toBe('Solve it.');
  });

  it('a configured card that was removed from the library: refused, naming it', () => {
    const { store, exp, graph } = experiment(1);
    expect(() => cardSession({ store, experimentId: exp.id, graph, config: { selection: ['gone'], ids: ['gone'], budgetTokens: 64 }, provider: solverModel(), modelFor: () => 'default', seed: 5 })).toThrow(/hint card gone.*no longer in the library/);
  });
});

describe('online meta-distillation (every K tasks)', () => {
  it('after every 2 tasks distils a card per role from the successful runs so far; later tasks carry it; a resume keeps it', async () => {
    const { store, exp, graph, tools } = experiment(5);
    const config: CardsConfig = { selection: 'none', ids: [], budgetTokens: 256, distill: { every: 2, shots: 5, roles: ['s'], onlySuccesses: true, budgetTokens: 384, maxTokens: 600 } };
    const seen: GenerateRequest[] = [];
    const model = solverModel(seen);
    const log: string[] = [];
    const ac = new AbortController();
    const { hooks } = cardSession({ store, experimentId: exp.id, graph, config, provider: model, modelFor: () => 'default', seed: 5, log: (l) => log.push(l) });
    // Stop after 3 stored tasks (a crash), then resume with a fresh session.
    await executePending({ store, experimentId: exp.id, graph, grader, provider: model, tools, seed: 5, signal: ac.signal, ...hooks, onRun: (_r, done) => { if (done === 3) ac.abort(); } });
    const cards = store.improve.listCards();
    expect(cards).toHaveLength(1);
    const card = cards[0]!;
    expect(card).toMatchObject({ role: 's', experimentId: exp.id, sourceRuns: [`${exp.id}/0`, `${exp.id}/1`], shots: 2, onlySuccesses: true, simulated: true, meta: { online: { afterTasks: 2, every: 2 } } });
    expect(log.join('')).toContain(`after 2 tasks: s card ${card.id} (SIMULATED)`);
    // Task 2 started after the checkpoint: it carries the card; tasks 0 and 1 did not.
    expect(store.improve.usesOf(card.id)).toEqual([`${exp.id}/2`]);
    expect(store.getRunEvents(`${exp.id}/1`)[0]!.calls[0]!.system).toBe('Solve it.');

    const resumed = cardSession({ store, experimentId: exp.id, graph, config, provider: model, modelFor: () => 'default', seed: 5, log: (l) => log.push(l) });
    expect(resumed.injector.library.map((c) => c.id)).toEqual([card.id]);
    await executePending({ store, experimentId: exp.id, graph, grader, provider: model, tools, seed: 5, ...resumed.hooks });
    const after = store.improve.listCards();
    // After 4 tasks a second card (from 4 successes); none after the last task.
    expect(after).toHaveLength(2);
    const second = after.find((c) => c.id !== card.id)!;
    expect(second.meta).toMatchObject({ online: { afterTasks: 4 } });
    expect(second.sourceRuns).toHaveLength(4);
    expect(store.improve.usesOf(card.id)).toEqual([`${exp.id}/2`, `${exp.id}/3`, `${exp.id}/4`]);
    expect(store.improve.usesOf(second.id)).toEqual([`${exp.id}/4`]);
    expect(seen.filter((r) => r.jsonSchema === CARD_SCHEMA)).toHaveLength(2);
  });

  it('no successful trajectory yet: the checkpoint is skipped with a note, the experiment goes on', async () => {
    const { store, exp, graph, tools } = experiment(3);
    const log: string[] = [];
    const config: CardsConfig = { selection: 'none', ids: [], budgetTokens: 256, distill: { every: 1, shots: 5, roles: ['s'], onlySuccesses: true, budgetTokens: 384, maxTokens: 600 } };
    const wrong = new ScriptedProvider(() => '{"answer": -1}');
    const { hooks } = cardSession({ store, experimentId: exp.id, graph, config, provider: wrong, modelFor: () => 'default', seed: 5, log: (l) => log.push(l) });
    expect(await executePending({ store, experimentId: exp.id, graph, grader, provider: wrong, tools, seed: 5, ...hooks })).toEqual({ stored: 3, cancelled: false });
    expect(store.improve.listCards()).toEqual([]);
    expect(log.join('')).toContain('no successful trajectory of s yet');
  });
});

// ---------- export / import ----------

describe('cards export / import', () => {
  it('round-trips unchanged (deep equality, provenance included) and refuses duplicates', async () => {
    const a = openStore(':memory:');
    const teacher = new ScriptedProvider(() => CARD_JSON);
    const ex = pickExemplars([handRun(0, { solver: 0.9 }, { correct: true, score: 1 })], 'solver', 5);
    const distilled = await distillCard({ provider: teacher, teacherRef: 'default', role: 'solver', exemplars: ex, seed: 3, experimentId: 'exp-x' });
    a.improve.saveCard(distilled);
    a.improve.saveCard(sized('plain', 50, 1234));
    const doc = JSON.parse(JSON.stringify(exportCards(a.improve.listCards())));
    expect(doc).toMatchObject({ format: 'flowlab-cards', version: 1 });

    const b = openStore(':memory:');
    const imported = importCards(b, parseCardsDocument(doc));
    expect(imported).toEqual(doc.cards);
    const strip = (cs: Array<Card & { uses?: number }>) => cs.map(({ uses: _u, ...c }) => c);
    expect(strip(b.improve.listCards())).toEqual(strip(a.improve.listCards()));
    expect(b.improve.getCard(distilled.id).meta).toEqual(distilled.meta);
    expect(JSON.parse(JSON.stringify(exportCards(b.improve.listCards(), new Date(doc.exportedAt))))).toEqual(doc);

    expect(() => importCards(b, parseCardsDocument(doc))).toThrow(CardsImportError);
    expect(() => importCards(b, parseCardsDocument(doc))).toThrow(/already has card\(s\) .*plain.*nothing imported/);
    const c = openStore(':memory:');
    expect(() => importCards(c, parseCardsDocument({ ...doc, cards: [doc.cards[0], doc.cards[0]] }))).toThrow(/more than once/);
    expect(c.improve.listCards()).toEqual([]);
    expect(() => parseCardsDocument({ ...doc, version: 2 })).toThrow(/version 2 is not supported/);
    expect(() => parseCardsDocument({ format: 'flowlab-cards', version: 1, exportedAt: 'x', cards: [{ id: 'x' }] })).toThrow(/cards\.0\.role/);
  });
});
