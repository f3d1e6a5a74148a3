/**
 * Where a lab host may read model files from. A browser host (`flowlab serve`) is reached by
 * anyone with the page's token, so a model path in a request (`addModel`, `testModel`,
 * `startRun`'s `models.*` and `roleLora`, a workflow's `models.<ref>.path`, `resumeRun`'s
 * `models`) must not let them read or probe other files of the server's disk. A confined host
 * accepts a path only when, written out absolute with every `.` and `..` resolved, it lies inside
 * one of its model folders or is one of the files it was given at start. The check is on the
 * path alone, so a path outside is refused before anything touches the disk, with the same
 * message whether or not something exists there: the answer reveals neither contents nor
 * existence. A symbolic link inside a model folder is followed (whoever runs the host put it
 * there: linking models into the folder is a normal set-up); requests cannot create files.
 *
 * A model may also be an endpoint reference (`openai:<base-url>#<model>`, core/model/endpoint.ts),
 * which is no path. One rule covers every way a request names one, directly or through a document
 * it sends or a record it points at (a workflow's `models:`, a study plan, a stored run being
 * resumed or forked, a train loop's plan): {@link ModelPaths.checkModel}. A confined host refuses an
 * endpoint that carries `key=` or `keychain=` (`FORBIDDEN`, naming the field): the host would read
 * that key from its own environment or keychain and send it to the server the reference names, so
 * a page could have the host hand its keys to a server of the page's choosing. A plain endpoint
 * (no key) is allowed: the host sends no credential, and the page could already reach it through
 * the playground. An unconfined host (the desktop app, the CLI) takes both.
 */
import path from 'node:path';
import { ApiError } from '../core/api/index.ts';
import { EndpointRefError, isEndpointRef, parseEndpointRef } from '../core/model/index.ts';

/** The folders and files a confined host reads models from. */
export interface ModelPathRoots {
  /** Folders: any file below one of them is allowed. */
  folders: readonly string[];
  /** Single files allowed wherever they are (given at start, e.g. `flowlab serve --allow-model`). */
  files?: readonly string[];
}

function inside(file: string, folder: string): boolean {
  const rel = path.relative(folder, file);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * The path policy of one lab host: unconfined (any path; the desktop app's own window) or
 * confined to {@link ModelPathRoots}.
 */
export class ModelPaths {
  private readonly folders: string[];
  private readonly files: Set<string>;

  /** @param roots the allowed folders and files; undefined: every path is allowed. */
  constructor(private readonly roots?: ModelPathRoots) {
    this.folders = (roots?.folders ?? []).map((f) => path.resolve(f));
    this.files = new Set((roots?.files ?? []).map((f) => path.resolve(f)));
  }

  /** Whether paths are checked. */
  get confined(): boolean {
    return this.roots !== undefined;
  }

  /** Whether `file` (absolute, or relative to the working folder) is allowed; reads nothing from disk. */
  allows(file: string): boolean {
    if (!this.roots) return true;
    const abs = path.resolve(file);
    return this.files.has(abs) || this.folders.some((f) => inside(abs, f));
  }

  /**
   * Checks `file` for request `method`, field `field`.
   * @throws ApiError `FORBIDDEN` naming the path as given, the field and the allowed folders,
   *   never whether the path exists or what it holds.
   */
  check(file: string, method: string, field: string): void {
    if (this.allows(file)) return;
    const folders = this.folders;
    throw new ApiError(
      'FORBIDDEN',
      `${method}: ${field} ${JSON.stringify(file)} is outside the lab's model folders (${folders.join(', ') || 'none'}); this lab only reads models there (or files given at start with --allow-model)`,
      method,
      field,
    );
  }

  /**
   * Checks a model reference a request leads the host to use, for request `method`, field
   * `field`: a file as {@link check}; an endpoint reference (`openai:...`) refused on a confined
   * host when one of its endpoints carries `key=` or `keychain=` (see the module comment). Reads
   * nothing, from disk or the environment.
   * @throws ApiError `FORBIDDEN` naming `field` (a file outside the model folders; a keyed endpoint
   *   on a confined host, named by its base URL, never by its key's value); `BAD_REQUEST` naming
   *   `field` for an endpoint reference that does not parse (on a confined host).
   */
  checkModel(ref: string, method: string, field: string): void {
    if (!isEndpointRef(ref)) return this.check(ref, method, field);
    if (!this.roots) return;
    let specs;
    try {
      specs = parseEndpointRef(ref);
    } catch (err) {
      if (err instanceof EndpointRefError) throw new ApiError('BAD_REQUEST', `${method}: ${field}: ${err.message}`, method, field, { cause: err });
      throw err;
    }
    const keyed = specs.filter((s) => s.keyEnv !== undefined || s.keychain !== undefined);
    if (!keyed.length) return;
    throw new ApiError(
      'FORBIDDEN',
      `${method}: ${field} names an endpoint (${keyed.map((s) => s.baseUrl).join(', ')}) with key= or keychain=: this served lab does not send API keys from its environment or keychain at a page's request; use an endpoint without a key, or the desktop app or the CLI`,
      method,
      field,
    );
  }
}
