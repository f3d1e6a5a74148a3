import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ApiError, type ModelEntry, type ModelHeader, type TestGeneration } from '../core/api/index.ts';
import { asRoleName } from '../core/ids.ts';
import { defaultThreads } from '../models/resolve.ts';
import { errorMessage } from '../core/errors.ts';

/** The header fields the catalogue shows (defined with the API's `ModelEntry` in core/api/lab.ts). */
export type { ModelHeader };

/** Reads a GGUF header without loading the model; throws an Error whose message names the file. */
export type ReadModelHeader = (file: string) => Promise<ModelHeader>;

/** Options of {@link ModelCatalog}. */
export interface ModelCatalogOptions {
  /** The model folder: its `*.gguf` files (not recursive) are listed with `source: 'folder'`. Need not exist. */
  modelDir: string;
  /**
   * JSON file remembering the models added by path (`{"version":1,"added":[paths]}`); its folder
   * is created on the first `add`. Undefined: remembered in memory only (`:memory:` databases).
   */
  addedFile?: string;
  /** Header reader. Default: `readGgufInfo` from models/llama (loaded on first use). */
  readHeader?: ReadModelHeader;
  /**
   * The reader `add` uses: the header plus a check that the weights are finite, so a file that
   * cannot generate is refused when it is added. Default: `readCheckedGgufInfo` when
   * `readHeader` is not given, else `readHeader`.
   */
  readAdded?: ReadModelHeader;
}

/** `readGgufInfo`, imported lazily so listing nothing never loads node-llama-cpp. */
export const readGgufHeader: ReadModelHeader = async (file) => {
  const { readGgufInfo } = await import('../models/llama/index.ts');
  return readGgufInfo(file);
};

/** `readCheckedGgufInfo`: the header, then every float weight tested finite (what `add` and a run's model check use). */
export const readCheckedGgufHeader: ReadModelHeader = async (file) => {
  const { readCheckedGgufInfo } = await import('../models/llama/index.ts');
  return readCheckedGgufInfo(file);
};

interface Cached {
  mtimeMs: number;
  size: number;
  header?: ModelHeader;
  error?: string;
}

/**
 * The GGUF files the lab knows: those in the model folder and those added by absolute path.
 * Headers are read once per file version (path, size, mtime) and cached.
 */
export class ModelCatalog {
  readonly modelDir: string;
  private readonly readHeader: ReadModelHeader;
  private readonly readAdded: ReadModelHeader;
  private readonly cache = new Map<string, Cached>();
  private added: string[] | undefined;

  constructor(private readonly options: ModelCatalogOptions) {
    this.modelDir = path.resolve(options.modelDir);
    this.readHeader = options.readHeader ?? readGgufHeader;
    this.readAdded = options.readAdded ?? options.readHeader ?? readCheckedGgufHeader;
  }

  /**
   * The folder's `*.gguf` files sorted by name, then the added ones in the order they were added
   * (a path also in the folder is listed once, as `folder`). An unreadable file is listed with
   * `error` (and `sizeBytes: 0` when it is gone) instead of `info`.
   */
  async list(): Promise<ModelEntry[]> {
    const folder = this.folderFiles();
    const seen = new Set(folder);
    const entries: ModelEntry[] = [];
    for (const file of folder) entries.push(await this.entry(file, 'folder'));
    for (const file of this.addedPaths()) {
      if (seen.has(file)) continue;
      seen.add(file);
      entries.push(await this.entry(file, 'added'));
    }
    return entries;
  }

  /**
   * Adds a model by absolute path and remembers it (a file already in the model folder is just
   * returned). Errors: `BAD_REQUEST` (field `path`) when the file is missing, its GGUF header
   * is unreadable or a weight is not finite (`readAdded`); the message names the file.
   */
  async add(file: string): Promise<ModelEntry> {
    const abs = path.resolve(file);
    let header: ModelHeader;
    try {
      header = await this.readAdded(abs);
    } catch (err) {
      throw new ApiError('BAD_REQUEST', `addModel: ${errorMessage(err)}`, 'addModel', 'path', { cause: err });
    }
    const inFolder = path.dirname(abs) === this.modelDir && /\.gguf$/i.test(abs);
    if (!inFolder && !this.addedPaths().includes(abs)) {
      this.added = [...this.addedPaths(), abs];
      this.save();
    }
    const st = statSync(abs);
    this.cache.set(abs, { mtimeMs: st.mtimeMs, size: st.size, header });
    return toEntry(abs, inFolder ? 'folder' : 'added', st.size, header);
  }

  private folderFiles(): string[] {
    let names: string[];
    try {
      names = readdirSync(this.modelDir);
    } catch {
      return [];
    }
    return names
      .filter((n) => /\.gguf$/i.test(n))
      .sort()
      .map((n) => path.join(this.modelDir, n))
      .filter((f) => {
        try {
          return statSync(f).isFile();
        } catch {
          return false;
        }
      });
  }

  private async entry(file: string, source: ModelEntry['source']): Promise<ModelEntry> {
    let st;
    try {
      st = statSync(file);
    } catch {
      return { path: file, fileName: path.basename(file), sizeBytes: 0, source, error: `Model file not found: ${file}` };
    }
    let cached = this.cache.get(file);
    if (!cached || cached.mtimeMs !== st.mtimeMs || cached.size !== st.size) {
      cached = { mtimeMs: st.mtimeMs, size: st.size };
      try {
        cached.header = await this.readHeader(file);
      } catch (err) {
        cached.error = errorMessage(err);
      }
      this.cache.set(file, cached);
    }
    if (cached.header) return toEntry(file, source, st.size, cached.header);
    return { path: file, fileName: path.basename(file), sizeBytes: st.size, source, error: cached.error ?? 'unreadable' };
  }

  private addedPaths(): string[] {
    if (this.added) return this.added;
    this.added = [];
    const file = this.options.addedFile;
    if (!file) return this.added;
    try {
      const doc = JSON.parse(readFileSync(file, 'utf8')) as { added?: unknown };
      if (Array.isArray(doc.added)) this.added = doc.added.filter((p): p is string => typeof p === 'string' && path.isAbsolute(p));
    } catch {
      // absent or unreadable: start empty (rewritten on the next add)
    }
    return this.added;
  }

  private save(): void {
    const file = this.options.addedFile;
    if (!file) return;
    mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ version: 1, added: this.added ?? [] }, null, 2) + '\n');
    renameSync(tmp, file);
  }
}

function toEntry(file: string, source: ModelEntry['source'], sizeBytes: number, h: ModelHeader): ModelEntry {
  const info: NonNullable<ModelEntry['info']> = { architecture: h.architecture, fileType: h.fileType, hasChatTemplate: h.hasChatTemplate };
  if (h.name !== undefined) info.name = h.name;
  if (h.parameters !== undefined) info.parameters = h.parameters;
  if (h.contextLength !== undefined) info.contextLength = h.contextLength;
  return { path: file, fileName: path.basename(file), sizeBytes, source, info };
}

/** Options of {@link testGeneration}. */
export interface TestGenerationOptions {
  /** CPU threads. Default: `defaultThreads(file)` (1 for files under 64 MB, else half the cores). */
  threads?: number;
  signal?: AbortSignal;
}

/**
 * Loads `file` with node-llama-cpp (CPU, context 1024 tokens), generates up to `maxTokens`
 * tokens greedily (seed 0) from `prompt` as a plain completion (or through the model's chat
 * template when it has one), and unloads it. `ms` is the generation's wall time in milliseconds
 * (the load is not counted).
 * Errors: `BAD_REQUEST` (field `path`) for a missing or invalid GGUF file (non-finite weights
 * included), naming it; any other failure (load, generation; `MODEL_INVALID` for logits that
 * are not finite) propagates with its message.
 */
export async function testGeneration(file: string, prompt: string, maxTokens: number, options: TestGenerationOptions = {}): Promise<TestGeneration> {
  const { LlamaProvider, readCheckedGgufInfo } = await import('../models/llama/index.ts');
  try {
    await readCheckedGgufInfo(file);
  } catch (err) {
    throw new ApiError('BAD_REQUEST', `testModel: ${errorMessage(err)}`, 'testModel', 'path', { cause: err });
  }
  const provider = new LlamaProvider({ models: { default: { path: file, threads: options.threads ?? defaultThreads(file), sequences: 1 } } });
  try {
    const out = await provider.generate({
      role: asRoleName('test'),
      model: 'default',
      prompt,
      seed: 0,
      params: { temperature: 0, maxTokens },
      key: { taskKey: 'test', nodeId: 'test', attempt: 1, callIndex: 0 },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return { text: out.text, promptTokens: out.tokens.prompt, completionTokens: out.tokens.completion, ms: Math.round(out.ms) };
  } finally {
    await provider.dispose();
  }
}
