/**
 * GGUF file inspection without loading the model: metadata, tensor census and integrity checks.
 *
 * `readGgufInfo` is also the provider's pre-load check, so a bad file is reported as a
 * `ModelError` that names the file and says what is wrong, instead of node-llama-cpp's
 * `TypeError: Cannot read properties of undefined (reading 'architecture')` (truncated header)
 * or llama.cpp's bare `Failed to load model` (truncated tensor data).
 */
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { GgmlType, GgufFileType, readGgufFileInfo, type GgufFileInfo } from 'node-llama-cpp';
import { ModelError } from '../../core/model/index.ts';
import { GgufError, readGguf } from '../gguf/readGguf.ts';

/** What a GGUF file says about itself (read from its header; the model is not loaded). */
export interface GgufInfo {
  /** The path as given (not resolved). */
  path: string;
  /** `path`'s base name, e.g. `stories260K.gguf`. */
  fileName: string;
  /** File size in bytes. */
  sizeBytes: number;
  /** GGUF format version (2 or 3 in practice). */
  ggufVersion: number;
  /** `general.architecture`, e.g. `llama`. */
  architecture: string;
  /** `general.name`, when present. */
  name?: string;
  /**
   * Sum of the element counts of all tensors (split models: of all parts).
   * Absent when the tensor table could not be read.
   */
  parameters?: number;
  /** Number of tensors in the file. */
  tensorCount: number;
  /**
   * Readable weight format: the `general.file_type` name without its `MOSTLY_`/`ALL_` prefix
   * (`F32`, `F16`, `Q4_K_M`, ...); when the key is absent, the tensor type holding the most
   * elements (`F32` for stories260K).
   */
  fileType: string;
  /** The `general.file_type` number, when present. */
  fileTypeId?: number;
  /** `<arch>.context_length`: the training context, in tokens. */
  contextLength?: number;
  /** True when `tokenizer.chat_template` is a non-empty string. */
  hasChatTemplate: boolean;
  /** `<arch>.block_count` (layers). */
  blockCount?: number;
  /** `<arch>.embedding_length` (hidden size). */
  embeddingLength?: number;
  /** Vocabulary size: the length of `tokenizer.ggml.tokens`, else `<arch>.vocab_size`. */
  vocabSize?: number;
}

/** Result of the integrity check: the parsed header plus the derived summary. */
export interface CheckedGguf {
  info: GgufInfo;
  raw: GgufFileInfo;
}

const GGUF_MAGIC = 'GGUF';
/** magic (4) + version (4) + tensor count (8) + metadata count (8). */
const GGUF_MIN_HEADER_BYTES = 24;

/**
 * Reads a GGUF file's header (metadata and tensor table) without loading the model, and checks
 * that the file is complete.
 *
 * @param filePath path to a `.gguf` file (a local path; URLs are not fetched).
 * @returns the summary; see {@link GgufInfo} for fields and units.
 * @throws ModelError `MODEL_NOT_FOUND` when nothing exists at `filePath` (message
 *   `Model file not found: <path>`); `MODEL_INVALID` when the path is a directory or not a
 *   regular file, cannot be read, does not start with the `GGUF` magic, has a truncated or
 *   corrupt header, lacks `general.architecture`, or is shorter than its tensor table says
 *   (truncated download). Every message names the file.
 */
export async function readGgufInfo(filePath: string): Promise<GgufInfo> {
  return (await checkGgufFile(filePath)).info;
}

/**
 * Same as {@link readGgufInfo} but also returns node-llama-cpp's parsed `GgufFileInfo`
 * (used by the provider to avoid parsing twice).
 */
export async function checkGgufFile(filePath: string): Promise<CheckedGguf> {
  const sizeBytes = await statModelFile(filePath);
  await checkMagic(filePath, sizeBytes);
  await checkStructure(filePath);

  let raw: GgufFileInfo;
  try {
    raw = await readGgufFileInfo(filePath, { sourceType: 'filesystem', logWarnings: false });
  } catch (err) {
    throw new ModelError(
      'MODEL_INVALID',
      `Invalid GGUF file ${filePath}: its header is truncated or corrupt (${describe(err)})`,
      filePath,
      { cause: err },
    );
  }

  // node-llama-cpp's reader does not notice reads past the end of the file (it parses a 100-byte
  // prefix "successfully"), so compare what the header claims with the real size.
  if (raw.infoEndOffset != null && raw.infoEndOffset > sizeBytes) {
    throw new ModelError(
      'MODEL_INVALID',
      `Invalid GGUF file ${filePath}: truncated header (the file has ${sizeBytes} bytes, its header alone needs ${raw.infoEndOffset})`,
      filePath,
    );
  }
  const architecture = raw.metadata?.general?.architecture as string | undefined;
  if (typeof architecture !== 'string' || architecture === '') {
    throw new ModelError(
      'MODEL_INVALID',
      `Invalid GGUF file ${filePath}: no general.architecture in its metadata (truncated or corrupt header)`,
      filePath,
    );
  }
  checkTensorBounds(filePath, sizeBytes, raw);

  return { info: summarise(filePath, sizeBytes, architecture, raw), raw };
}

/** The structural faults Flowlab's own header reader finds before node-llama-cpp's reader sees the file. */
const STRUCTURAL = new Set(['GGUF_NOT_GGUF', 'GGUF_TRUNCATED', 'GGUF_UNSUPPORTED_VERSION', 'GGUF_CORRUPT', 'GGUF_UNKNOWN_TENSOR_TYPE']);

/**
 * Reads the header with Flowlab's reader (models/gguf/readGguf.ts), which bounds every count by
 * the file's size: node-llama-cpp's reader loops for minutes on a header claiming 2^62 tensors or
 * metadata entries. Other reader codes (quantised tensor types, architectures the trainer does
 * not know) are not faults of the file and are left to node-llama-cpp.
 *
 * @throws ModelError `MODEL_INVALID` naming the file, with the reader's reason.
 */
async function checkStructure(filePath: string): Promise<void> {
  try {
    await readGguf(filePath);
  } catch (err) {
    if (err instanceof GgufError && STRUCTURAL.has(err.code)) throw new ModelError('MODEL_INVALID', `Invalid GGUF file ${filePath}: ${err.message} [${err.code}]`, filePath, { cause: err });
  }
}

/** stat() with the error mapping shared by the provider: returns the size in bytes. */
async function statModelFile(filePath: string): Promise<number> {
  let st;
  try {
    st = await stat(filePath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException)?.code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new ModelError('MODEL_NOT_FOUND', `Model file not found: ${filePath}`, filePath, { cause: err });
    }
    throw new ModelError('MODEL_INVALID', `Model file cannot be read: ${filePath} (${describe(err)})`, filePath, {
      cause: err,
    });
  }
  if (st.isDirectory()) {
    throw new ModelError('MODEL_INVALID', `Model path is a directory, not a GGUF file: ${filePath}`, filePath);
  }
  if (!st.isFile()) {
    throw new ModelError('MODEL_INVALID', `Model path is not a regular file: ${filePath}`, filePath);
  }
  return st.size;
}

async function checkMagic(filePath: string, sizeBytes: number): Promise<void> {
  const head = Buffer.alloc(4);
  let read = 0;
  try {
    const fh = await open(filePath, 'r');
    try {
      read = (await fh.read(head, 0, 4, 0)).bytesRead;
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw new ModelError('MODEL_INVALID', `Model file cannot be read: ${filePath} (${describe(err)})`, filePath, {
      cause: err,
    });
  }
  if (read < 4 || head.toString('latin1') !== GGUF_MAGIC) {
    // The bytes found are not quoted: an error must never echo a file's contents.
    throw new ModelError(
      'MODEL_INVALID',
      `Not a GGUF file: ${filePath} (expected the magic "GGUF" at the start${read === 0 ? ', found an empty file' : ''})`,
      filePath,
    );
  }
  if (sizeBytes < GGUF_MIN_HEADER_BYTES) {
    throw new ModelError(
      'MODEL_INVALID',
      `Invalid GGUF file ${filePath}: truncated header (${sizeBytes} bytes; a GGUF header needs at least ${GGUF_MIN_HEADER_BYTES})`,
      filePath,
    );
  }
}

/**
 * Bytes per block and elements per block of ggml tensor types (ggml's type traits), for the
 * truncation check. Types missing here are skipped by the check.
 */
const GGML_BLOCK: Partial<Record<number, readonly [elements: number, bytes: number]>> = {
  [GgmlType.F32]: [1, 4],
  [GgmlType.F16]: [1, 2],
  [GgmlType.BF16]: [1, 2],
  [GgmlType.F64]: [1, 8],
  [GgmlType.I8]: [1, 1],
  [GgmlType.I16]: [1, 2],
  [GgmlType.I32]: [1, 4],
  [GgmlType.I64]: [1, 8],
  [GgmlType.Q4_0]: [32, 18],
  [GgmlType.Q4_1]: [32, 20],
  [GgmlType.Q5_0]: [32, 22],
  [GgmlType.Q5_1]: [32, 24],
  [GgmlType.Q8_0]: [32, 34],
  [GgmlType.Q8_1]: [32, 36],
  [GgmlType.Q2_K]: [256, 84],
  [GgmlType.Q3_K]: [256, 110],
  [GgmlType.Q4_K]: [256, 144],
  [GgmlType.Q5_K]: [256, 176],
  [GgmlType.Q6_K]: [256, 210],
  [GgmlType.Q8_K]: [256, 292],
  [GgmlType.IQ2_XXS]: [256, 66],
  [GgmlType.IQ2_XS]: [256, 74],
  [GgmlType.IQ2_S]: [256, 82],
  [GgmlType.IQ3_XXS]: [256, 98],
  [GgmlType.IQ3_S]: [256, 110],
  [GgmlType.IQ1_S]: [256, 50],
  [GgmlType.IQ1_M]: [256, 56],
  [GgmlType.IQ4_NL]: [32, 18],
  [GgmlType.IQ4_XS]: [256, 136],
  [GgmlType.TQ1_0]: [256, 54],
  [GgmlType.TQ2_0]: [256, 66],
};

function elementCount(dimensions: readonly (number | bigint)[]): number {
  let n = 1;
  for (const d of dimensions) n *= Number(d);
  return n;
}

function checkTensorBounds(filePath: string, sizeBytes: number, raw: GgufFileInfo): void {
  for (const t of raw.tensorInfo ?? []) {
    if (t.filePart !== 1) continue; // other parts of a split model live in other files
    const block = GGML_BLOCK[t.ggmlType];
    const start = Number(t.fileOffset);
    const end = block ? start + Math.ceil(elementCount(t.dimensions) / block[0]) * block[1] : start;
    if (end > sizeBytes) {
      throw new ModelError(
        'MODEL_INVALID',
        `Invalid GGUF file ${filePath}: truncated (tensor '${t.name}' ends at byte ${end}, the file has ${sizeBytes} bytes; incomplete download or copy?)`,
        filePath,
      );
    }
  }
}

function summarise(filePath: string, sizeBytes: number, architecture: string, raw: GgufFileInfo): GgufInfo {
  const general = raw.metadata.general as { name?: unknown; file_type?: unknown };
  const arch = (raw.architectureMetadata ?? {}) as {
    context_length?: unknown;
    block_count?: unknown;
    embedding_length?: unknown;
    vocab_size?: unknown;
  };
  const tokenizer = (raw.metadata as { tokenizer?: { chat_template?: unknown; ggml?: { tokens?: unknown } } })
    .tokenizer;
  const tensors = raw.fullTensorInfo ?? raw.tensorInfo;

  let parameters: number | undefined;
  const elementsByType = new Map<number, number>();
  if (tensors) {
    parameters = 0;
    for (const t of tensors) {
      const n = elementCount(t.dimensions);
      parameters += n;
      elementsByType.set(t.ggmlType, (elementsByType.get(t.ggmlType) ?? 0) + n);
    }
  }

  const fileTypeId = typeof general.file_type === 'number' ? general.file_type : undefined;
  let fileType = 'unknown';
  if (fileTypeId != null) {
    const enumName = (GgufFileType as unknown as Record<number, string | undefined>)[fileTypeId];
    fileType = enumName ? enumName.replace(/^(MOSTLY|ALL)_/, '') : `file_type ${fileTypeId}`;
  } else if (elementsByType.size > 0) {
    const [topType] = [...elementsByType.entries()].sort((a, b) => b[1] - a[1])[0]!;
    fileType = (GgmlType as unknown as Record<number, string | undefined>)[topType] ?? `ggml type ${topType}`;
  }

  const tokens = tokenizer?.ggml?.tokens;
  const vocabSize = Array.isArray(tokens) ? tokens.length : num(arch.vocab_size);
  const info: GgufInfo = {
    path: filePath,
    fileName: path.basename(filePath),
    sizeBytes,
    ggufVersion: Number(raw.version),
    architecture,
    tensorCount: Number(raw.totalTensorCount ?? raw.tensorCount),
    fileType,
    hasChatTemplate: typeof tokenizer?.chat_template === 'string' && tokenizer.chat_template.trim() !== '',
  };
  if (typeof general.name === 'string') info.name = general.name;
  if (parameters != null) info.parameters = parameters;
  if (fileTypeId != null) info.fileTypeId = fileTypeId;
  const contextLength = num(arch.context_length);
  if (contextLength != null) info.contextLength = contextLength;
  const blockCount = num(arch.block_count);
  if (blockCount != null) info.blockCount = blockCount;
  const embeddingLength = num(arch.embedding_length);
  if (embeddingLength != null) info.embeddingLength = embeddingLength;
  if (vocabSize != null) info.vocabSize = vocabSize;
  return info;
}

function num(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

function describe(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
