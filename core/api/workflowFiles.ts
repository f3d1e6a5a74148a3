/**
 * The lab's API for workflow documents on disk (types only): the editor saves, lists and opens
 * YAML files in the host's workflows folder (`flowlab-workflows/` beside the database unless the
 * host names another; host/workflowFiles.ts). A request names a file by its bare name, never by
 * a path: anything else is refused before the disk is touched. Lab methods (`LAB_METHODS`), so
 * Electron's relay and the browser host serve them; zod payload schemas in contract.ts.
 * Imports nothing, so the renderer can use it.
 */

/**
 * The names a workflow file may have: a letter, digit or `_` first, then letters, digits, `_`,
 * `-`, `.` and spaces, ending `.yaml` or `.yml`; at most 120 characters; no `..`. A name is a
 * file in the workflows folder itself (no sub-folders, no separators).
 */
export const WORKFLOW_FILE_NAME = /^(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9_. -]{0,110}\.ya?ml$/;
/** Longest workflow file name, in characters. */
export const MAX_WORKFLOW_FILE_NAME = 120;

/** One workflow file of the folder. */
export interface WorkflowFileInfo {
  /** The bare file name, e.g. `my-team.yaml`. */
  name: string;
  sizeBytes: number;
  /** Last modification, epoch ms. */
  modifiedAt: number;
}

/** `listWorkflowFiles`' answer. */
export interface WorkflowFileList {
  /** The folder's absolute path (shown to the user; requests never send paths). */
  folder: string;
  /** Its workflow files, by name. */
  files: WorkflowFileInfo[];
}

/** `readWorkflowFile`'s payload. */
export interface ReadWorkflowFilePayload {
  name: string;
}

/** A workflow file's text. */
export interface WorkflowFileText extends WorkflowFileInfo {
  text: string;
}

/** `saveWorkflowFile`'s payload. */
export interface SaveWorkflowFilePayload {
  name: string;
  /** The document as edited (saved as is, valid or not), at most `MAX_WORKFLOW_CHARS`. */
  text: string;
  /** Replace a file of that name (Save); without it an existing name is refused (Save as). */
  overwrite?: boolean;
}

/** The methods (payload -> result). Errors are ApiErrors with the method and field. */
export interface WorkflowFilesApiAdditions {
  /** The workflows folder and its `*.yaml` / `*.yml` files (an absent folder lists none). */
  listWorkflowFiles(payload?: Record<string, never>): Promise<WorkflowFileList>;
  /**
   * One file's text. Errors: `BAD_REQUEST` (a name that is not a bare workflow file name; a file
   * over the size limit or not UTF-8), `NOT_FOUND`, `FORBIDDEN` (a link or not a regular file).
   */
  readWorkflowFile(payload: ReadWorkflowFilePayload): Promise<WorkflowFileText>;
  /**
   * Writes the text to a temporary file in the folder, then renames it over the name, so a
   * reader never sees half a file. Errors: `BAD_REQUEST` (the name), `BUSY` (the name exists
   * and `overwrite` is not set), `FORBIDDEN` (the name is a link or a folder).
   */
  saveWorkflowFile(payload: SaveWorkflowFilePayload): Promise<WorkflowFileInfo>;
}
