/**
 * The workflows folder: where the editor's documents are saved, listed and opened from, for both
 * hosts (`flowlab serve` and the desktop app's utility process). Every request names a bare file
 * name (`WORKFLOW_FILE_NAME`, core/api/workflowFileName.ts); the name is checked again here, the
 * file is looked at with `lstat` (a link, even one pointing back inside, is refused, so nothing
 * outside the folder is ever read or replaced), and a save writes a temporary file in the same
 * folder and renames it over the name (atomic on one file system: a reader sees the old file or
 * the new one, never half of one).
 */
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ApiError, MAX_WORKFLOW_CHARS, WORKFLOW_FILE_NAME, type ReadWorkflowFilePayload, type SaveWorkflowFilePayload, type WorkflowFileInfo, type WorkflowFileList, type WorkflowFileText } from '../core/api/index.ts';
import { besideDatabase } from './dataFolder.ts';

/** Largest file `read` opens, in bytes (a 1 Mi-character document in UTF-8 fits). */
export const MAX_WORKFLOW_FILE_BYTES = 4 * MAX_WORKFLOW_CHARS;

/** The workflow files of one folder. The folder is made on the first save. */
export class WorkflowFolder {
  /** Absolute. */
  readonly dir: string;

  constructor(dir: string) {
    this.dir = path.resolve(dir);
  }

  /** The default folder of a host whose database is `dbFile`: `flowlab-workflows/` beside it (besideDatabase: the temporary folder for `:memory:`). */
  static beside(dbFile: string): string {
    return besideDatabase(dbFile, ['flowlab-workflows']);
  }

  /** The folder's regular `*.yaml` / `*.yml` files with valid names, sorted by name. */
  async list(): Promise<WorkflowFileList> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { folder: this.dir, files: [] };
      throw new ApiError('UNAVAILABLE', `listWorkflowFiles: cannot read the workflows folder ${this.dir} (${(err as Error).message})`, 'listWorkflowFiles');
    }
    const files: WorkflowFileInfo[] = [];
    for (const name of names.filter((n) => WORKFLOW_FILE_NAME.test(n)).sort()) {
      const st = await lstat(path.join(this.dir, name)).catch(() => null);
      if (st?.isFile()) files.push({ name, sizeBytes: st.size, modifiedAt: Math.round(st.mtimeMs) });
    }
    return { folder: this.dir, files };
  }

  /** One file's text (strict UTF-8). Errors: see `WorkflowsApi.readWorkflowFile`. */
  async read({ name }: ReadWorkflowFilePayload): Promise<WorkflowFileText> {
    const file = this.fileOf(name, 'readWorkflowFile');
    const st = await lstat(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') throw new ApiError('NOT_FOUND', `readWorkflowFile: there is no ${name} in the workflows folder ${this.dir}`, 'readWorkflowFile', 'name');
      throw err;
    });
    if (!st.isFile()) throw new ApiError('FORBIDDEN', `readWorkflowFile: ${name} in ${this.dir} is ${st.isSymbolicLink() ? 'a link' : 'not a regular file'}; only plain files in the workflows folder are opened`, 'readWorkflowFile', 'name');
    if (st.size > MAX_WORKFLOW_FILE_BYTES) throw new ApiError('BAD_REQUEST', `readWorkflowFile: ${name} is ${st.size} bytes, over the ${MAX_WORKFLOW_FILE_BYTES}-byte limit of a workflow document`, 'readWorkflowFile', 'name');
    const bytes = await readFile(file);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new ApiError('BAD_REQUEST', `readWorkflowFile: ${name} is not UTF-8 text`, 'readWorkflowFile', 'name');
    }
    if (text.length > MAX_WORKFLOW_CHARS) throw new ApiError('BAD_REQUEST', `readWorkflowFile: ${name} has ${text.length} characters, over the ${MAX_WORKFLOW_CHARS} of a workflow document`, 'readWorkflowFile', 'name');
    return { name, text, sizeBytes: st.size, modifiedAt: Math.round(st.mtimeMs) };
  }

  /** Saves through a temporary file and a rename. Errors: see `WorkflowsApi.saveWorkflowFile`. */
  async save({ name, text, overwrite }: SaveWorkflowFilePayload): Promise<WorkflowFileInfo> {
    const file = this.fileOf(name, 'saveWorkflowFile');
    if (text.length > MAX_WORKFLOW_CHARS) throw new ApiError('BAD_REQUEST', `saveWorkflowFile: the document has ${text.length} characters, over the ${MAX_WORKFLOW_CHARS} limit`, 'saveWorkflowFile', 'text');
    const existing = await lstat(file).catch(() => null);
    if (existing && !existing.isFile()) throw new ApiError('FORBIDDEN', `saveWorkflowFile: ${name} in ${this.dir} is ${existing.isSymbolicLink() ? 'a link' : 'not a regular file'}; it is not replaced`, 'saveWorkflowFile', 'name');
    if (existing && !overwrite) throw new ApiError('BUSY', `saveWorkflowFile: ${name} already exists in the workflows folder; choose another name, or save over it`, 'saveWorkflowFile', 'name');
    await mkdir(this.dir, { recursive: true });
    const tmp = path.join(this.dir, `.${name}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
    try {
      await writeFile(tmp, text, { encoding: 'utf8', flag: 'wx', flush: true });
      await rename(tmp, file);
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => {});
      throw new ApiError('UNAVAILABLE', `saveWorkflowFile: cannot write ${name} in ${this.dir} (${(err as Error).message})`, 'saveWorkflowFile', 'name');
    }
    const st = await lstat(file);
    return { name, sizeBytes: st.size, modifiedAt: Math.round(st.mtimeMs) };
  }

  /** The file of a checked bare name, inside the folder. */
  private fileOf(name: string, method: 'readWorkflowFile' | 'saveWorkflowFile'): string {
    if (typeof name !== 'string' || !WORKFLOW_FILE_NAME.test(name) || name !== path.basename(name)) {
      throw new ApiError('BAD_REQUEST', `${method}: "${String(name).slice(0, 120)}" is not a workflow file name (a bare name ending in .yaml or .yml, no folders)`, method, 'name');
    }
    const file = path.join(this.dir, name);
    if (path.dirname(file) !== this.dir) throw new ApiError('FORBIDDEN', `${method}: ${name} is outside the workflows folder`, method, 'name');
    return file;
  }
}
