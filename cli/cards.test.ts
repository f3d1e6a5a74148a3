import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { computeWorkflowHash, openStore, type Card } from '../core/store/index.ts';
import { capture, tempDir } from '../test/fixtures.ts';
import { main } from './main.ts';

const tmp = () => tempDir('cards');

function card(id: string, over: Partial<Card> = {}): Card {
  return {
    id, role: 'solver', title: `Title ${id}`, appliesWhen: 'a word problem', advice: 'Write one expression.', sourceRuns: ['exp-a/0', 'exp-a/3'],
    experimentId: 'exp-a', teacher: 'stories260K.gguf', shots: 2, onlySuccesses: true, simulated: false, createdAt: 1_700_000_000_123,
    meta: { provenance: { teacherRef: 'teacher', seed: 4, exemplars: [{ runId: 'exp-a/0', reward: 0.93 }] } }, ...over,
  };
}

describe('flowlab distill / cards: arguments', () => {
  it('bad arguments exit 2 with the usage', async () => {
    const dir = tmp();
    const db = path.join(dir, 'x.db');
    openStore(db).close();
    for (const [args, msg] of [
      [['distill', '--db', db], 'missing --experiment'],
      [['distill', '--experiment', 'e', '--db', db], 'missing --role'],
      [['distill', '--experiment', 'e', '--role', 'solver', '--shots', '0'], '--shots must be an integer >= 1'],
      [['cards'], 'missing a cards command'],
      [['cards', 'frob'], 'unknown cards command "frob"'],
      [['cards', 'show', '--db', db], 'cards show takes one <card-id>'],
      [['cards', 'list', '--bogus'], "Unknown option '--bogus'"],
      [['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--model', 'm.gguf', '--cards', 'card-nope', '--db', db], '--cards: no card card-nope'],
      [['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--model', 'm.gguf', '--distill-every', '0', '--db', db], '--distill-every must be an integer >= 1'],
      [['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--model', 'm.gguf', '--distill-every', '2', '--distill-roles', 'ghost', '--db', db], '--distill-roles names role(s) ghost'],
    ] as const) {
      const io = capture();
      expect(await main([...args], io), args.join(' ')).toBe(2);
      expect(io.err).toContain(msg);
      expect(io.err).toContain('Usage: flowlab');
    }
  });

  it('cards export / import round-trip unchanged through the CLI; import refuses duplicates; list, show, rm', async () => {
    const dir = tmp();
    const a = path.join(dir, 'a.db');
    const b = path.join(dir, 'b.db');
    const s = openStore(a);
    const cards = [card('card-20250101-000000-aaaa'), card('card-20250101-000000-bbbb', { role: 'planner', simulated: true, teacher: 'scripted (simulated)', experimentId: undefined, meta: undefined, createdAt: 5 })];
    for (const c of cards) s.improve.saveCard(c);
    s.close();

    let io = capture();
    const out = path.join(dir, 'cards.json');
    expect(await main(['cards', 'export', '--out', out, '--db', a], io), io.err).toBe(0);
    const doc = JSON.parse(readFileSync(out, 'utf8'));
    expect(doc.format).toBe('flowlab-cards');
    expect(doc.version).toBe(1);
    expect(doc.cards).toEqual([cards[1], cards[0]]); // listed by creation time

    io = capture();
    expect(await main(['cards', 'import', out, '--db', b], io), io.err).toBe(0);
    expect(io.err).toContain('Imported 2 card(s)');
    expect(io.err).toContain('1 SIMULATED');
    io = capture();
    expect(await main(['cards', 'export', '--db', b], io)).toBe(0);
    expect(JSON.parse(io.out).cards).toEqual(doc.cards); // unchanged, provenance included

    io = capture();
    expect(await main(['cards', 'import', out, '--db', b], io)).toBe(1);
    expect(io.err).toContain('already has card(s) card-20250101-000000-bbbb, card-20250101-000000-aaaa');
    expect(io.err).toContain('nothing imported');
    writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ format: 'flowlab-cards', version: 9, cards: [] }));
    io = capture();
    expect(await main(['cards', 'import', path.join(dir, 'bad.json'), '--db', b], io)).toBe(1);
    expect(io.err).toContain('version 9 is not supported');

    io = capture();
    expect(await main(['cards', 'export', 'card-20250101-000000-aaaa', '--db', b], io)).toBe(0);
    expect(JSON.parse(io.out).cards).toEqual([cards[0]]);

    io = capture();
    expect(await main(['cards', 'list', '--db', b], io)).toBe(0);
    expect(io.out).toMatch(/card-20250101-000000-bbbb.*planner.*SIMULATED/);
    expect(io.out).toMatch(/card-20250101-000000-aaaa.*solver/);
    io = capture();
    expect(await main(['cards', 'show', 'card-20250101-000000-bbbb', '--db', b], io)).toBe(0);
    expect(io.out).toContain('SIMULATED');
    io = capture();
    expect(await main(['cards', 'rm', 'card-20250101-000000-bbbb', '--db', b], io)).toBe(0);
    io = capture();
    expect(await main(['cards', 'show', 'card-20250101-000000-bbbb', '--db', b], io)).toBe(1);
    expect(io.err).toContain('no card card-20250101-000000-bbbb');
    io = capture();
    expect(await main(['cards', 'list', '--json', '--db', b], io)).toBe(0);
    expect(JSON.parse(io.out).map((c: Card) => c.id)).toEqual(['card-20250101-000000-aaaa']);
  });
});

describe('flowlab resume with hint cards', () => {
  it('refuses, before loading any model, when a card the experiment was run with has been removed', async () => {
    const dir = tmp();
    const db = path.join(dir, 'r.db');
    const store = openStore(db);
    const text = readFileSync('examples/gsm8k-single.yaml', 'utf8');
    const exp = store.createExperiment({
      kind: 'run', workflowName: 'gsm8k-single', workflowYaml: text, workflowHash: computeWorkflowHash(text), dataset: 'gsm8k', split: 'test', seed: 0,
      config: { models: { models: { default: path.resolve('package.json') }, roleModels: {}, gpu: false }, cards: { selection: ['card-gone'], ids: ['card-gone'], budgetTokens: 256 } },
      tasks: [{ taskIndex: 0, taskId: 'gsm8k/test/0', input: { question: 'What is 2 + 2?' }, expected: '4' }],
    });
    store.finishExperiment(exp.id, 'cancelled');
    store.close();
    const io = capture();
    expect(await main(['resume', exp.id, '--db', db], io)).toBe(1);
    expect(io.err).toContain('hint card(s) card-gone, chosen for experiment');
    expect(io.err).toContain('flowlab cards import');
  });
});
