/**
 * The corpus adapter of the `retrieve` tool (core/tools/retrieve.ts): walks a user's folder,
 * cuts its text (`.txt`), Markdown (`.md`, `.markdown`) and JSON-lines (`.jsonl`) files into
 * passages, and builds the BM25 index once — kept in memory for the process and on disk in a
 * cache folder, both keyed by the folder's file list with each file's size and modification time,
 * so a changed, added or removed file rebuilds it.
 *
 * Confinement: only regular files under the folder are read. Hidden entries (a name starting
 * with `.`) are skipped; a symbolic link is followed only when its target lies inside the folder
 * (others are listed in `skipped`), and each real folder is walked once. The index holds paths
 * relative to the folder; the tool's only input is a query, so no model output names a file.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CorpusError, buildRetrieveIndex, loadRetrieveIndex, type CorpusDocument, type RetrieveIndex } from '../../core/tools/index.ts';

/** File name endings read, and how. */
const KINDS: Record<string, 'text' | 'markdown' | 'jsonl'> = { '.txt': 'text', '.text': 'text', '.md': 'markdown', '.markdown': 'markdown', '.jsonl': 'jsonl' };
/** A passage ends at the first paragraph break after this many words (longer paragraphs are cut at it). */
export const PASSAGE_WORDS = 120;
/** Default most bytes of corpus files read. */
export const CORPUS_MAX_BYTES = 512 * 1024 * 1024;
/** Bumped when passage cutting or the index options change, so old caches are not reused. */
const FORMAT = 1;

/** One corpus file as listed (not read). */
export interface CorpusFile {
  /** Path relative to the corpus folder, `/` separators. */
  rel: string;
  abs: string;
  size: number;
  mtimeMs: number;
}

/**
 * The corpus files under `dir`, sorted by relative path, and what was skipped (links that leave
 * the folder, as `rel -> target`). Errors: CorpusError `CORPUS_NOT_FOUND` (not a folder).
 */
export function listCorpusFiles(dir: string): { root: string; files: CorpusFile[]; skipped: string[] } {
  let root: string;
  try {
    root = fs.realpathSync(dir);
    if (!fs.statSync(root).isDirectory()) throw new Error('not a folder');
  } catch (cause) {
    throw new CorpusError('CORPUS_NOT_FOUND', `corpus folder ${dir} cannot be read: ${(cause as Error).message}`, dir, { cause });
  }
  const files: CorpusFile[] = [];
  const skipped: string[] = [];
  const seen = new Set<string>();
  const inside = (p: string) => p === root || p.startsWith(root + path.sep);
  const walk = (real: string, rel: string) => {
    if (seen.has(real)) return;
    seen.add(real);
    for (const entry of fs.readdirSync(real, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (entry.name.startsWith('.')) continue;
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      let abs = path.join(real, entry.name);
      if (entry.isSymbolicLink()) {
        let target: string;
        try {
          target = fs.realpathSync(abs);
        } catch {
          skipped.push(`${relPath} -> (broken link)`);
          continue;
        }
        if (!inside(target)) {
          skipped.push(`${relPath} -> ${target}`);
          continue;
        }
        abs = target;
      }
      const st = fs.statSync(abs);
      if (st.isDirectory()) walk(abs, relPath);
      else if (st.isFile() && KINDS[path.extname(entry.name).toLowerCase()]) files.push({ rel: relPath, abs, size: st.size, mtimeMs: st.mtimeMs });
    }
  };
  walk(root, '');
  return { root, files, skipped };
}

/** The cache key of a file list: sha256 over the format and each file's path, size and mtime. */
export function corpusSignature(files: readonly CorpusFile[]): string {
  return createHash('sha256').update(JSON.stringify([FORMAT, files.map((f) => [f.rel, f.size, f.mtimeMs])])).digest('hex');
}

/**
 * The passages of the listed files, in file order (see `passagesOf`). Errors: CorpusError
 * `CORPUS_TOO_LARGE` (over `maxBytes` in all), `BAD_CORPUS_FILE` (a JSONL line that is not an
 * object with a text field; `where` is `file:line`).
 */
export function corpusDocuments(files: readonly CorpusFile[], maxBytes = CORPUS_MAX_BYTES): CorpusDocument[] {
  const total = files.reduce((s, f) => s + f.size, 0);
  if (total > maxBytes) throw new CorpusError('CORPUS_TOO_LARGE', `the corpus holds ${total} bytes of text, Markdown and JSONL files; at most ${maxBytes} are read`, files[0]?.abs);
  return files.flatMap((f) => passagesOf(f.rel, KINDS[path.extname(f.rel).toLowerCase()]!, fs.readFileSync(f.abs, 'utf8').replace(/^\uFEFF/, ''), f.abs));
}

/**
 * The passages of one file. Text: paragraphs (split at blank lines) gathered into passages of at
 * least PASSAGE_WORDS words (the last may be shorter; a longer paragraph is cut every
 * PASSAGE_WORDS words). Markdown: the same within each section, a section running from one
 * heading line (`#` … `######`) to the next, with the heading as the title. JSONL: one passage
 * per non-blank line, an object whose text is its `text`, `contents`, `content` or `body` field
 * and whose title is its `title`. Ids: `<rel>#<n>`, n counting from 1 in the file (JSONL: the
 * line number).
 */
export function passagesOf(rel: string, kind: 'text' | 'markdown' | 'jsonl', text: string, where = rel): CorpusDocument[] {
  if (kind === 'jsonl') {
    const docs: CorpusDocument[] = [];
    text.split('\n').forEach((line, i) => {
      if (!line.trim()) return;
      const at = `${where}:${i + 1}`;
      let rec: unknown;
      try {
        rec = JSON.parse(line);
      } catch (cause) {
        throw new CorpusError('BAD_CORPUS_FILE', `${at}: not valid JSON (${(cause as Error).message})`, at, { cause });
      }
      const o = rec && typeof rec === 'object' && !Array.isArray(rec) ? (rec as Record<string, unknown>) : undefined;
      const body = o && [o.text, o.contents, o.content, o.body].find((v) => typeof v === 'string');
      if (typeof body !== 'string') throw new CorpusError('BAD_CORPUS_FILE', `${at}: expected a JSON object with a text, contents, content or body string`, at);
      const doc: CorpusDocument = { id: `${rel}#${i + 1}`, source: rel, text: body };
      if (typeof o!.title === 'string' && o!.title) doc.title = o!.title;
      docs.push(doc);
    });
    return docs;
  }
  const sections: Array<{ title?: string; body: string[] }> = [{ body: [] }];
  for (const line of text.split(/\r?\n/)) {
    const h = kind === 'markdown' ? /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line) : null;
    if (h) sections.push({ title: h[1]!, body: [] });
    else sections[sections.length - 1]!.body.push(line);
  }
  const docs: CorpusDocument[] = [];
  for (const s of sections) {
    for (const passage of gather(s.body.join('\n'))) {
      const doc: CorpusDocument = { id: `${rel}#${docs.length + 1}`, source: rel, text: passage };
      if (s.title) doc.title = s.title;
      docs.push(doc);
    }
    if (s.title && !s.body.some((l) => l.trim())) docs.push({ id: `${rel}#${docs.length + 1}`, source: rel, title: s.title, text: '' });
  }
  return docs;
}

function gather(text: string): string[] {
  const out: string[] = [];
  let words: string[] = [];
  for (const para of text.split(/\n\s*\n/)) {
    const w = para.split(/\s+/).filter(Boolean);
    if (!w.length) continue;
    words.push(...w);
    while (words.length >= PASSAGE_WORDS) {
      out.push(words.slice(0, PASSAGE_WORDS).join(' '));
      words = words.slice(PASSAGE_WORDS);
    }
  }
  if (words.length) out.push(words.join(' '));
  return out;
}

/** An opened corpus. */
export interface OpenedCorpus {
  index: RetrieveIndex;
  /** The real folder. */
  root: string;
  files: number;
  passages: number;
  skipped: string[];
  signature: string;
  /** Where the index came from: this process's memory, the cache folder, or a fresh build. */
  from: 'memory' | 'disk' | 'built';
  ms: number;
}

const MEMORY = new Map<string, { signature: string; index: RetrieveIndex }>();

/**
 * The BM25 index of the corpus folder `dir`, built once: reused from this process's memory or
 * from `opts.cacheDir` (`<sha256 of the real folder>.json`, written atomically) while the
 * folder's signature (`corpusSignature`) is unchanged, else built and cached. An unreadable or
 * stale cache file is rebuilt, and a cache folder that cannot be written is passed over: neither
 * is an error.
 * Errors: CorpusError `CORPUS_NOT_FOUND`, `CORPUS_TOO_LARGE`, `BAD_CORPUS_FILE`, `CORPUS_EMPTY`.
 */
export function openCorpus(dir: string, opts: { cacheDir?: string; maxBytes?: number } = {}): OpenedCorpus {
  const started = performance.now();
  const { root, files, skipped } = listCorpusFiles(dir);
  const signature = corpusSignature(files);
  const done = (index: RetrieveIndex, from: OpenedCorpus['from']): OpenedCorpus => ({ index, root, files: files.length, passages: index.size, skipped, signature, from, ms: performance.now() - started });
  const mem = MEMORY.get(root);
  if (mem?.signature === signature) return done(mem.index, 'memory');
  const cacheFile = opts.cacheDir ? path.join(opts.cacheDir, `${createHash('sha256').update(root).digest('hex').slice(0, 32)}.json`) : undefined;
  if (cacheFile && fs.existsSync(cacheFile)) {
    try {
      const cached = JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as { signature?: unknown; index?: unknown };
      if (cached.signature === signature && typeof cached.index === 'string') {
        const index = loadRetrieveIndex(cached.index);
        MEMORY.set(root, { signature, index });
        return done(index, 'disk');
      }
    } catch {
      // a damaged cache file is rebuilt below
    }
  }
  const documents = corpusDocuments(files, opts.maxBytes);
  if (!documents.length) throw new CorpusError('CORPUS_EMPTY', `corpus folder ${dir} has no text (.txt), Markdown (.md) or JSON-lines (.jsonl) passages${skipped.length ? ` (skipped links: ${skipped.join(', ')})` : ''}`, dir);
  const index = buildRetrieveIndex(documents);
  MEMORY.set(root, { signature, index });
  if (cacheFile) {
    try {
      fs.mkdirSync(path.dirname(cacheFile), { recursive: true });
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify({ root, signature, index: index.toJSON() }));
      fs.renameSync(tmp, cacheFile);
    } catch {
      // the disk cache only saves time: a folder that cannot be written leaves the index in memory
    }
  }
  return done(index, 'built');
}

/** Forgets the in-memory indexes (tests; a long-lived host after a folder is removed). */
export function forgetCorpora(): void {
  MEMORY.clear();
}
