/**
 * The rule for a workflow file's name in the host's workflows folder (features/workflows.ts):
 * used by the payload schema, the host (host/workflowFiles.ts) and the editor. Imports nothing,
 * so the renderer can use it.
 */

/**
 * The names a workflow file may have: a letter, digit or `_` first, then letters, digits, `_`,
 * `-`, `.` and spaces, ending `.yaml` or `.yml`; at most 120 characters; no `..`. A name is a
 * file in the workflows folder itself (no sub-folders, no separators).
 */
export const WORKFLOW_FILE_NAME = /^(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9_. -]{0,110}\.ya?ml$/;
/** Longest workflow file name, in characters. */
export const MAX_WORKFLOW_FILE_NAME = 120;
