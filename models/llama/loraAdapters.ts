/**
 * LoRA adapters of model refs: the checks made before node-llama-cpp sees an adapter file, and
 * the identity of a context (model file + adapters) that refs share.
 */
import { realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { ModelError } from '../../core/model/index.ts';
import { checkGgufFile, type CheckedGguf, type GgufInfo } from './ggufInfo.ts';
import type { LlamaLoraAdapter } from './config.ts';

/** A resolved LoRA adapter: its real path and scale. */
export interface ResolvedLora {
  path: string;
  scale: number;
}

/** `realpath` of a path (resolved against the working directory), or undefined when it does not exist. */
export function realpathOrUndefined(file: string): string | undefined {
  try {
    return realpathSync(path.resolve(file));
  } catch {
    return undefined;
  }
}

/** The identity of a context: the real model file plus its adapters (real paths and scales, in order). */
export function contextKey(realFile: string, adapters: readonly ResolvedLora[]): string {
  return [realFile, ...adapters.map((a) => `${a.path}@${a.scale}`)].join('\u0000');
}

/** {@link contextKey} from a ref's configured adapters (unresolvable paths keep their given form). */
export function contextKeySync(realFile: string, lora: readonly LlamaLoraAdapter[]): string {
  return contextKey(
    realFile,
    lora.map((a) => ({ path: realpathOrUndefined(a.path) ?? path.resolve(a.path), scale: a.scale ?? 1 })),
  );
}

/**
 * Checks a ref's LoRA adapter files before the runtime sees them: present, a GGUF, a LoRA
 * adapter, for the base model's architecture. Shape mismatches (an adapter for another base of
 * the same architecture) are left to llama.cpp, whose message the provider wraps.
 */
export async function checkAdapters(
  ref: string,
  lora: readonly LlamaLoraAdapter[],
  baseFile: string,
  base: GgufInfo,
): Promise<ResolvedLora[]> {
  const out: ResolvedLora[] = [];
  for (const a of lora) {
    const file = path.resolve(a.path);
    const scale = a.scale ?? 1;
    if (typeof scale !== 'number' || !Number.isFinite(scale)) {
      throw new ModelError('MODEL_INVALID', `LoRA adapter ${file} (ref "${ref}"): scale must be a finite number, got ${String(a.scale)}`, ref);
    }
    let checked: CheckedGguf;
    try {
      checked = await checkGgufFile(file);
    } catch (err) {
      if (!(err instanceof ModelError)) throw err;
      throw new ModelError(
        err.code,
        err.code === 'MODEL_NOT_FOUND'
          ? `LoRA adapter file not found: ${file} (ref "${ref}")`
          : `Invalid LoRA adapter for ref "${ref}": ${err.message}`,
        file,
        { cause: err },
      );
    }
    const meta = checked.raw.metadata as { general?: { type?: unknown }; adapter?: { type?: unknown } };
    const generalType = meta.general?.type;
    const adapterType = meta.adapter?.type;
    if (generalType !== 'adapter' || adapterType !== 'lora') {
      const looksLikeModel = generalType === undefined || generalType === 'model';
      throw new ModelError(
        'MODEL_INVALID',
        `Not a LoRA adapter: ${file} (ref "${ref}") has general.type ${JSON.stringify(generalType ?? null)} and adapter.type ${JSON.stringify(adapterType ?? null)}; a LoRA adapter GGUF (llama.cpp's convert_lora_to_gguf.py) has general.type "adapter" and adapter.type "lora"${looksLikeModel ? ' (is this a full model rather than an adapter?)' : ''}`,
        file,
      );
    }
    if (checked.info.architecture !== base.architecture) {
      throw new ModelError(
        'MODEL_LOAD_FAILED',
        `LoRA adapter ${file} (ref "${ref}") is for architecture "${checked.info.architecture}", but its base model ${baseFile} is "${base.architecture}"`,
        file,
      );
    }
    out.push({ path: await realpath(file), scale });
  }
  return out;
}
