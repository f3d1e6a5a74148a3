/**
 * The model files the lab's jobs hold: one job per model file at a time (a second job naming a
 * held file is refused with `BUSY`, naming the holder), each file confined to a served host's
 * model folders (`FORBIDDEN`) and checked before anything loads (`BAD_REQUEST` naming the request
 * field that chose it). An endpoint reference (`openai:...`) is no file: it goes through the same
 * host rule (host/modelPaths.ts `checkModel`: a served lab refuses one with `key=`/`keychain=`) and
 * has no GGUF header to check. Shared by every job family of the runner: experiments, train loops, MASS
 * jobs, studies, distillation and forks.
 */
import { ApiError } from '../core/api/index.ts';
import { errorMessage } from '../core/errors.ts';
import { isEndpointRef, type ModelConfig, type ModelRequestField } from '../core/model/index.ts';
import type { ModelPaths } from './modelPaths.ts';
import { apiFieldOf } from './request.ts';

/** Options of {@link ModelFiles}. */
export interface ModelFilesOptions {
  /** Throws an Error naming the file when it is not a loadable model. */
  checkModel: (file: string) => Promise<unknown>;
  /** Where request model paths may point (undefined: unconfined). */
  modelPaths?: ModelPaths;
  /** True once the lab is shutting down (checks then answer `UNAVAILABLE`). */
  disposed: () => boolean;
}

/** The held model files of one lab (see the module comment). */
export class ModelFiles {
  /** File -> holder label (`experiment <id>`, `train loop <id>`; '' while starting). */
  private readonly claimed = new Map<string, string>();

  constructor(private readonly o: ModelFilesOptions) {}

  /** Holds `files` for `holder`. @throws ApiError `BUSY` (field `models`) naming the file and its holder; nothing is held then. */
  claim(files: readonly string[], method: string, holder = ''): void {
    for (const file of files) {
      const by = this.claimed.get(file);
      if (by !== undefined) {
        throw new ApiError('BUSY', `${method}: model ${file} is in use by ${by === '' ? 'an experiment being started' : by}; wait for it or cancel it`, method, 'models');
      }
    }
    for (const file of files) this.claimed.set(file, holder);
  }

  /** Names the holder of files claimed while it started (an experiment gets its id once created). */
  relabel(files: readonly string[], holder: string): void {
    for (const file of files) this.claimed.set(file, holder);
  }

  release(files: readonly string[]): void {
    for (const file of files) this.claimed.delete(file);
  }

  /**
   * The host's rule for a model reference a job will use (a file or an endpoint), reading
   * nothing: host/modelPaths.ts `checkModel`. @throws ApiError `FORBIDDEN` / `BAD_REQUEST` naming `field`.
   */
  confine(ref: string, method: string, field: string): void {
    this.o.modelPaths?.checkModel(ref, method, field);
  }

  /**
   * One model a job names (a file or an endpoint reference), confined, and a file checked before it loads.
   * @throws ApiError `UNAVAILABLE` (shutting down), `FORBIDDEN` or `BAD_REQUEST` naming `field`.
   */
  async checkOne(file: string, method: string, field: string): Promise<void> {
    if (this.o.disposed()) throw new ApiError('UNAVAILABLE', `${method}: the lab is shutting down`, method);
    this.confine(file, method, field);
    if (isEndpointRef(file)) return;
    await this.o.checkModel(file).catch((err: unknown) => {
      throw new ApiError('BAD_REQUEST', `${method}: ${errorMessage(err)}`, method, field, { cause: err });
    });
  }

  /**
   * The distinct model files of `config`, each confined (adapters too) and checked before
   * anything loads. @throws ApiError `FORBIDDEN` / `BAD_REQUEST` of `method`, naming the request
   * field that chose the bad file.
   */
  async checkConfig(config: ModelConfig, fieldOf: ReadonlyMap<string, { field: ModelRequestField; role?: string }>, method: string): Promise<string[]> {
    const files = [...new Set(Object.values(config.models))];
    const paths = this.o.modelPaths;
    if (paths) {
      for (const file of files) {
        const at = fieldOf.get(file);
        if (at?.field === 'roleVersions') continue; // a version's file comes from the store, not the request
        paths.checkModel(file, method, at ? apiFieldOf(at.field, at.role) : 'models');
      }
      for (const [ref, adapters] of Object.entries(config.loras ?? {})) {
        const role = Object.entries(config.roleModels ?? {}).find(([, r]) => r === ref)?.[0];
        for (const a of adapters) paths.check(a.path, method, role ? `roleLora.${role}` : 'roleLora');
      }
    }
    for (const file of files) {
      if (isEndpointRef(file)) continue; // a server: no file to read
      try {
        await this.o.checkModel(file);
      } catch (err) {
        const at = fieldOf.get(file);
        throw new ApiError('BAD_REQUEST', `${method}: ${errorMessage(err)}`, method, at && apiFieldOf(at.field, at.role), { cause: err });
      }
    }
    return files;
  }
}
