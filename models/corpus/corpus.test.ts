import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/fixtures.ts';
import { CorpusError, ToolError, buildRetrieveIndex, defaultTools, retrieveTool, type RetrieveOutput } from '../../core/tools/index.ts';
import { PASSAGE_WORDS, forgetCorpora, listCorpusFiles, openCorpus, passagesOf } from './index.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
beforeEach(() => forgetCorpora());

/** A temp folder holding `files` (relative path -> text). */
function corpus(files: Record<string, string>): string {
  const dir = tempDir('corpus');
  dirs.push(dir);
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

/**
 * The hand-computed corpus: 4 passages. MiniSearch counts a passage's length as its distinct
 * terms: 2, 3, 2, 1, so avgdl = 8/4 = 2.
 *   a.txt#1   "apple banana apple"             {apple x2, banana}
 *   b.md#1    "# Fruit" + "banana cherry"       {fruit, banana, cherry} (the title is indexed first)
 *   c.jsonl#1 {"text": "cherry date"}          {cherry, date}
 *   c.jsonl#3 {"contents": "elderberry"}       {elderberry} (ids count JSONL lines, blank ones too)
 * BM25 with k1 = 1.2, b = 0.75, idf = ln(1 + (N - n + 0.5) / (n + 0.5)), N = 4.
 */
const FILES = {
  'a.txt': 'apple banana apple\n',
  'b.md': '# Fruit\n\nbanana cherry\n',
  'c.jsonl': '{"text": "cherry date"}\n\n{"contents": "elderberry", "title": ""}\n',
  'notes.pdf': 'not read',
  '.hidden.txt': 'apple apple apple',
};
const bm25 = (tf: number, len: number, n: number) => Math.log(1 + (4 - n + 0.5) / (n + 0.5)) * ((tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * len) / 2)));

describe('retrieve over a corpus folder: BM25 by hand', () => {
  it('"apple": only a.txt, idf ln(10/3) x 4.4/3.2 = 1.65546', () => {
    const { index, passages, files } = openCorpus(corpus(FILES));
    expect([files, passages]).toEqual([3, 4]);
    const hits = index.search('apple', 3);
    expect(hits.map((h) => h.id)).toEqual(['a.txt#1']);
    expect(bm25(2, 2, 1)).toBeCloseTo(Math.log(10 / 3) * (4.4 / 3.2), 12);
    expect(hits[0]!.score).toBeCloseTo(1.6554626, 6);
  });

  it('"banana cherry": b.md 1.15090 (both terms), then a.txt and c.jsonl#1 tied at ln 2 (smaller id first)', () => {
    const { index } = openCorpus(corpus(FILES));
    const hits = index.search('Banana, CHERRY', 5);
    expect(hits.map((h) => h.id)).toEqual(['b.md#1', 'a.txt#1', 'c.jsonl#1']);
    expect(hits.map((h) => h.score)).toEqual([expect.closeTo(bm25(1, 3, 2) * 2, 9), expect.closeTo(bm25(1, 2, 2), 9), expect.closeTo(bm25(1, 2, 2), 9)]);
    expect(hits[0]!.score).toBeCloseTo(Math.log(2) * (2.2 / 2.65) * 2, 9); // 1.1508969
    expect(hits[1]!.score).toBeCloseTo(Math.log(2), 9); // 2.2 / (1 + 1.2) = 1
    expect(hits[0]).toMatchObject({ source: 'b.md', title: 'Fruit', text: 'banana cherry' });
    expect(index.search('banana cherry', 1)).toHaveLength(1);
    expect(index.search('zebra', 3)).toEqual([]);
  });

  it('the tool: {query, hits, text}, k, and typed errors', async () => {
    const { index } = openCorpus(corpus(FILES));
    const tool = defaultTools({ corpus: index }).get('retrieve')!;
    const out = (await tool.run({ query: 'elderberry' }, {})) as RetrieveOutput;
    expect(out.text).toBe('[1] c.jsonl#3: elderberry');
    expect(out.hits[0]!.score).toBeCloseTo(bm25(1, 1, 1), 9);
    expect(((await tool.run({ query: 'banana', k: 1 }, {})) as RetrieveOutput).hits.map((h) => h.id)).toEqual(['a.txt#1']); // the shorter passage: ln 2 x 1 > ln 2 x 0.83
    expect(((await tool.run({ query: 'zebra' }, {})) as RetrieveOutput).text).toBe('no passage matches "zebra"');
    for (const [inputs, msg] of [[{ query: '' }, /empty/], [{ query: 3 }, /must be a string/], [{ query: 'x', k: 0 }, /'k' must be an integer/]] as const) {
      await expect(async () => tool.run(inputs, {})).rejects.toThrow(msg);
    }
    const none = defaultTools().get('retrieve')!;
    await expect(async () => none.run({ query: 'apple' }, {})).rejects.toMatchObject({ code: 'NO_CORPUS' });
    await expect(async () => retrieveTool(index).run({ query: 'x' }, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(ToolError);
  });
});

describe('the corpus adapter', () => {
  it('is built once: memory, then the disk cache; a changed file rebuilds it', () => {
    const dir = corpus(FILES);
    const cacheDir = path.join(dir, '..', `${path.basename(dir)}-cache`);
    dirs.push(cacheDir);
    expect(openCorpus(dir, { cacheDir }).from).toBe('built');
    expect(openCorpus(dir, { cacheDir }).from).toBe('memory');
    forgetCorpora();
    const disk = openCorpus(dir, { cacheDir });
    expect(disk.from).toBe('disk');
    expect(disk.index.search('apple', 1)[0]!.score).toBeCloseTo(1.6554626, 6);
    fs.writeFileSync(path.join(dir, 'a.txt'), 'kiwi\n');
    const rebuilt = openCorpus(dir, { cacheDir });
    expect(rebuilt.from).toBe('built');
    expect(rebuilt.index.search('apple', 3)).toEqual([]);
    fs.writeFileSync(path.join(dir, 'new.md'), 'apple');
    expect(openCorpus(dir, { cacheDir }).from).toBe('built');
  });

  it('stays inside the folder: links out are skipped, hidden and other files are not read', () => {
    const outside = corpus({ 'secret.txt': 'password hunter2' });
    const dir = corpus({ 'in/a.txt': 'inside text', 'd.txt': 'dup target' });
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'leak.txt'));
    fs.symlinkSync(outside, path.join(dir, 'leakdir'));
    fs.symlinkSync(path.join(dir, 'd.txt'), path.join(dir, 'in', 'alias.txt'));
    const listed = listCorpusFiles(dir);
    expect(listed.files.map((f) => f.rel)).toEqual(['d.txt', 'in/a.txt', 'in/alias.txt']);
    expect(listed.skipped.map((s) => s.split(' ->')[0])).toEqual(['leak.txt', 'leakdir']);
    const { index } = openCorpus(dir);
    expect(index.search('password hunter2', 5)).toEqual([]);
  });

  it('cuts text into passages of PASSAGE_WORDS words and Markdown by heading', () => {
    const long = Array.from({ length: PASSAGE_WORDS + 5 }, (_, i) => `w${i}`).join(' ');
    const text = passagesOf('t.txt', 'text', `${long}\n\nshort para`);
    expect(text.map((d) => d.text.split(' ').length)).toEqual([PASSAGE_WORDS, 7]);
    expect(text.map((d) => d.id)).toEqual(['t.txt#1', 't.txt#2']);
    const md = passagesOf('m.md', 'markdown', 'intro words\n## One ##\nfirst\n\n# Two\nsecond');
    expect(md.map((d) => [d.id, d.title, d.text])).toEqual([['m.md#1', undefined, 'intro words'], ['m.md#2', 'One', 'first'], ['m.md#3', 'Two', 'second']]);
  });

  it('errors name the folder or file:line', () => {
    expect(() => openCorpus('/no/such/folder')).toThrow(expect.objectContaining({ code: 'CORPUS_NOT_FOUND' }));
    const bad = corpus({ 'x.jsonl': '{"text": "ok"}\n{"title": "no text"}\n' });
    let err: CorpusError | undefined;
    try { openCorpus(bad); } catch (e) { err = e as CorpusError; }
    expect(err).toBeInstanceOf(CorpusError);
    expect(err!.code).toBe('BAD_CORPUS_FILE');
    expect(err!.location).toEqual({ file: path.join(fs.realpathSync(bad), 'x.jsonl'), line: 2 });
    expect(() => openCorpus(corpus({ 'x.pdf': 'no' }))).toThrow(expect.objectContaining({ code: 'CORPUS_EMPTY' }));
    expect(() => openCorpus(corpus({ 'a.txt': 'abc' }), { maxBytes: 2 })).toThrow(expect.objectContaining({ code: 'CORPUS_TOO_LARGE' }));
    expect(buildRetrieveIndex([]).size).toBe(0);
  });
});
