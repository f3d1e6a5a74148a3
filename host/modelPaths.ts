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
 */
import path from 'node:path';
import { ApiError } from '../core/api/index.ts';

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
}
