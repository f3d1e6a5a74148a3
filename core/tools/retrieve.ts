/**
 * `retrieve`: BM25 search over a user's corpus, with MiniSearch (lucaong/minisearch 7). The
 * index is built from documents handed in — core reads no files: the corpus adapter
 * (models/corpus) walks the folder, cuts its files into documents and caches the index, and the
 * composition roots pass it to `defaultTools({corpus})`. The tool's only input is a query string,
 * so nothing a model writes can name a file.
 *
 * Scoring: Okapi BM25 (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25
 * and Beyond", eq. 3.15) as MiniSearch computes it with its BM25+ lower bound `d` set to 0:
 * score(D, Q) = Σ_{t ∈ Q} idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·|D|/avgdl)), with
 * idf(t) = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5)) (never negative, as Lucene's), k1 = 1.2,
 * b = 0.75, where — MiniSearch's choice — a passage's length |D| is its number of distinct terms
 * and avgdl the mean of those. Terms: MiniSearch's default tokenizer (runs of letters and digits, Unicode-aware)
 * lower-cased; no stemming, no stop words; a query term matches exactly (no prefix, no fuzzy);
 * a term repeated in the query counts once per repetition. MiniSearch's own extra factor (the
 * number of distinct query terms a document matches) is divided out; ties go to the smaller id.
 */
import MiniSearch from 'minisearch';
import { WhereError } from '../errors.ts';
import { ToolError, typeName, type Tool } from './tool.ts';

/** One searchable passage of a corpus. */
export interface CorpusDocument {
  /** Unique in the corpus: the file's path relative to the corpus folder, `#<n>` for its n-th passage or JSONL line. */
  id: string;
  /** The file it came from, relative to the corpus folder (`/` separators). */
  source: string;
  /** A Markdown heading or JSONL `title`, when there is one (indexed with the text, before it). */
  title?: string;
  text: string;
}

/** One search hit. */
export interface RetrieveHit {
  id: string;
  source: string;
  title?: string;
  /** BM25 score (see this module's header); hits come highest first. */
  score: number;
  text: string;
}

/** A built index: `search` is pure and synchronous. */
export interface RetrieveIndex {
  /** Documents indexed. */
  readonly size: number;
  /** The `k` best hits for `query` (fewer when fewer documents share a term with it). */
  search(query: string, k: number): RetrieveHit[];
  /** The index as JSON text (for the adapter's cache); `loadRetrieveIndex` reads it back. */
  toJSON(): string;
}

/** BM25 parameters (MiniSearch's `d` is BM25+'s lower bound; 0 gives plain BM25). */
export const BM25_PARAMS = { k: 1.2, b: 0.75, d: 0 } as const;
/** Hits the tool returns when `k` is not given, and the most it returns. */
export const RETRIEVE_DEFAULT_K = 3;
export const RETRIEVE_MAX_K = 20;
/** Characters of each hit's text the tool returns (the rest is cut with `…`). */
export const RETRIEVE_TEXT_CHARS = 600;

/** One indexed field, `content`: the title (when there is one), a newline, the text. */
const OPTIONS = {
  fields: ['content'],
  storeFields: ['source', 'title', 'text'],
  searchOptions: { bm25: BM25_PARAMS, prefix: false, fuzzy: false, combineWith: 'OR' as const },
};

/**
 * Stable codes of corpus failures (raised by the corpus adapter, models/corpus): `CORPUS_NOT_FOUND`
 * (not a folder), `BAD_CORPUS_FILE` (a JSONL line that is not an object with text; `where` is
 * `file:line`), `CORPUS_TOO_LARGE` (over the adapter's byte limit), `CORPUS_EMPTY` (no text,
 * Markdown or JSONL document in it).
 */
export type CorpusErrorCode = 'CORPUS_NOT_FOUND' | 'BAD_CORPUS_FILE' | 'CORPUS_TOO_LARGE' | 'CORPUS_EMPTY';

/** A corpus error; `where` is the folder, a file, or `file:line`. */
export class CorpusError extends WhereError<CorpusErrorCode> {
  override readonly name = 'CorpusError';
}

/**
 * A BM25 index over `docs` (ids must be unique; a repeated id is an error of the caller:
 * MiniSearch throws). O(total text) to build.
 */
export function buildRetrieveIndex(docs: readonly CorpusDocument[]): RetrieveIndex {
  const ms = new MiniSearch<CorpusDocument & { content: string }>(OPTIONS);
  ms.addAll(docs.map((d) => ({ ...d, title: d.title ?? '', content: d.title ? `${d.title}\n${d.text}` : d.text })));
  return wrap(ms);
}

/** An index from `RetrieveIndex.toJSON()` text. Throws MiniSearch's error on text of another shape. */
export function loadRetrieveIndex(json: string): RetrieveIndex {
  return wrap(MiniSearch.loadJSON<CorpusDocument & { content: string }>(json, OPTIONS));
}

function wrap(ms: MiniSearch<CorpusDocument & { content: string }>): RetrieveIndex {
  return {
    size: ms.documentCount,
    search(query, k) {
      // MiniSearch multiplies the summed score by the number of distinct query terms matched;
      // dividing it back out leaves the plain BM25 sum (and the order BM25 gives).
      const results = ms.search(query).map((r) => ({ r, score: r.score / (r.queryTerms.length || 1) }));
      results.sort((a, b) => b.score - a.score || (String(a.r.id) < String(b.r.id) ? -1 : 1));
      return results.slice(0, k).map(({ r, score }) => {
        const hit: RetrieveHit = { id: String(r.id), source: String(r.source), score, text: String(r.text) };
        if (r.title) hit.title = String(r.title);
        return hit;
      });
    },
    toJSON: () => JSON.stringify(ms),
  };
}

/** Output of the `retrieve` tool. */
export interface RetrieveOutput {
  query: string;
  hits: RetrieveHit[];
  /** The hits as one text, `[1] <id> (<title>): <text>` per line, or `no passage matches "<query>"`. */
  text: string;
}

/**
 * The `retrieve` tool over `index` (absent: every call fails with `NO_CORPUS`, so a workflow
 * naming the tool still validates without a corpus). Inputs: `query` (a non-empty string of at
 * most 1,000 characters), optional `k` (1..20, default 3). Output: `RetrieveOutput`, each hit's
 * text cut to RETRIEVE_TEXT_CHARS.
 * Errors (ToolError): `NO_CORPUS`, `BAD_INPUT` (query missing, not a string, empty, too long;
 * k not an integer in range), `ABORTED`.
 */
export function retrieveTool(index?: RetrieveIndex): Tool {
  return {
    name: 'retrieve',
    description: `Searches the user's corpus (BM25) for passages about a query. Returns {query, hits, text}; ${RETRIEVE_DEFAULT_K} hits unless k is given.`,
    inputs: {
      query: { type: 'string', description: 'What to search for, e.g. "Citibank founded year".' },
      k: { type: 'number', optional: true, description: `How many passages (1-${RETRIEVE_MAX_K}); default ${RETRIEVE_DEFAULT_K}.` },
    },
    output: {
      type: 'object',
      properties: { query: { type: 'string' }, hits: { type: 'array' }, text: { type: 'string' } },
      required: ['query', 'hits', 'text'],
    },
    run(inputs, ctx): RetrieveOutput {
      const fail = (code: 'BAD_INPUT' | 'NO_CORPUS' | 'ABORTED', detail: string) => new ToolError(code, detail, { tool: 'retrieve' });
      if (ctx.signal?.aborted) throw fail('ABORTED', 'retrieve was cancelled before it ran');
      const { query, k = RETRIEVE_DEFAULT_K } = inputs;
      if (query === undefined || query === null) throw fail('BAD_INPUT', "input 'query' is missing");
      if (typeof query !== 'string') throw fail('BAD_INPUT', `input 'query' must be a string, got ${typeName(query)}`);
      if (!query.trim()) throw fail('BAD_INPUT', "input 'query' is empty");
      if (query.length > 1000) throw fail('BAD_INPUT', `input 'query' has ${query.length} characters; at most 1000`);
      if (typeof k !== 'number' || !Number.isInteger(k) || k < 1 || k > RETRIEVE_MAX_K) throw fail('BAD_INPUT', `input 'k' must be an integer from 1 to ${RETRIEVE_MAX_K}, got ${JSON.stringify(k)}`);
      if (!index) throw fail('NO_CORPUS', 'no corpus is loaded: pass --corpus <folder> (text, Markdown or JSONL files) to search one');
      const hits = index.search(query, k).map((h) => ({ ...h, text: cut(h.text) }));
      const text = hits.length ? hits.map((h, i) => `[${i + 1}] ${h.id}${h.title ? ` (${h.title})` : ''}: ${h.text}`).join('\n') : `no passage matches ${JSON.stringify(query)}`;
      return { query, hits, text };
    },
  };
}

function cut(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= RETRIEVE_TEXT_CHARS ? flat : `${flat.slice(0, RETRIEVE_TEXT_CHARS - 1)}…`;
}
