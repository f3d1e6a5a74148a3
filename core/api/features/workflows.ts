/**
 * The workflows feature: a workflow document checked (`validateWorkflow`, in-process, never
 * throwing for a bad document) and the YAML files of the host's workflows folder
 * (`flowlab-workflows/` beside the database unless the host names another; host/workflowFiles.ts)
 * listed, opened and saved by the editor. A request names a file by its bare name, never by a
 * path: anything else is refused before the disk is touched. The file methods are lab methods,
 * so Electron's relay and the browser host serve them.
 */
import * as z from 'zod';
import { defaultTools } from '../../tools/index.ts';
import { parseWorkflow, SpecError, type EdgeType, type NodeKind, type SpecIssue, type ToolLookup } from '../../workflow/index.ts';
import { defineFeature, labMethod, type Awaitable } from '../feature.ts';
import { MAX_WORKFLOW_CHARS } from '../fields.ts';
import { MAX_WORKFLOW_FILE_NAME, WORKFLOW_FILE_NAME } from '../workflowFileName.ts';

/** The shape of a valid workflow, enough to draw it. */
export interface WorkflowSummary {
  name: string;
  notation: 'graph' | 'steps' | 'agents' | 'states' | 'code';
  nodes: { id: string; kind: NodeKind; role?: string }[];
  edges: { from: string; to: string; type: EdgeType }[];
}

/** `validateWorkflow`'s answer: the graph's outline, or every located issue. Never throws for a bad document. */
export type ValidateWorkflowResult = { ok: true; summary: WorkflowSummary } | { ok: false; issues: SpecIssue[] };

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

/** `validateWorkflow`'s payload: the document and, for issue locations only, a file name. */
export interface ValidateWorkflowPayload {
  text: string;
  file?: string;
}

/** The workflows methods. The file methods are lab methods; errors are ApiErrors with the method and field. */
export interface WorkflowsApi {
  /** Parses and validates a workflow document with the built-in tools; reports issues as data. */
  validateWorkflow(payload: ValidateWorkflowPayload): ValidateWorkflowResult;
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

/** What a lab host implements of them (optional: hosts without them answer the file methods with UNAVAILABLE). */
export interface WorkflowsHost {
  listWorkflowFiles?(): Awaitable<WorkflowFileList>;
  readWorkflowFile?(payload: ReadWorkflowFilePayload): Awaitable<WorkflowFileText>;
  saveWorkflowFile?(payload: SaveWorkflowFilePayload): Awaitable<WorkflowFileInfo>;
}

/** A bare workflow file name in the host's workflows folder, never a path. */
function WorkflowFileName() {
  return z
    .string()
    .min(1, 'must not be empty')
    .max(MAX_WORKFLOW_FILE_NAME, `must be at most ${MAX_WORKFLOW_FILE_NAME} characters`)
    .refine((n) => !/[\\/]/.test(n), 'must be a file name, not a path (no / or \\)')
    .refine((n) => WORKFLOW_FILE_NAME.test(n), 'must end in .yaml or .yml and use only letters, digits, spaces, _, - and . (no ..), starting with a letter, digit or _');
}

const NO_FOLDER = 'this host keeps no workflows folder';

export const workflowsFeature = defineFeature<WorkflowsApi>()({
  name: 'workflows',
  payloads: {
    validateWorkflow: z.strictObject({
      /** The workflow document, YAML or JSON. */
      text: z.string().max(MAX_WORKFLOW_CHARS, `must be at most ${MAX_WORKFLOW_CHARS} characters`),
      /** A file name used only in issue locations (nothing is read from disk). */
      file: z.string().min(1).max(4096).optional(),
    }),
    listWorkflowFiles: z.strictObject({}).optional(),
    readWorkflowFile: z.strictObject({ name: WorkflowFileName() }),
    saveWorkflowFile: z.strictObject({
      name: WorkflowFileName(),
      text: z.string().max(MAX_WORKFLOW_CHARS, `must be at most ${MAX_WORKFLOW_CHARS} characters`).refine((t) => !t.includes('\0'), { error: (iss) => `must not contain a NUL character (U+0000; the first is at character ${String(iss.input).indexOf('\0')}): a workflow is text` }),
      overwrite: z.boolean().optional(),
    }),
  },
  lab: ['listWorkflowFiles', 'readWorkflowFile', 'saveWorkflowFile'],
  handlers: (deps: { tools?: ToolLookup | undefined; lab?: WorkflowsHost | undefined }) => {
    const tools = deps.tools ?? defaultTools();
    return {
      validateWorkflow: ({ text, file }) => validateWorkflowText(text, file, tools),
      listWorkflowFiles: async () => labMethod(deps, 'listWorkflowFiles', NO_FOLDER)(),
      readWorkflowFile: async (payload) => labMethod(deps, 'readWorkflowFile', NO_FOLDER)(payload),
      saveWorkflowFile: async (payload) => labMethod(deps, 'saveWorkflowFile', NO_FOLDER)(payload),
    };
  },
});

/**
 * `validateWorkflow`'s answer for a document: the graph's outline, or every located issue (a
 * SpecError's). Pure and synchronous, so a host may run it in a worker (host/workflowValidator.ts).
 * @throws what parseWorkflow throws besides SpecError (a bug).
 */
export function validateWorkflowText(text: string, file: string | undefined, tools: ToolLookup = defaultTools()): ValidateWorkflowResult {
  try {
    const { graph } = parseWorkflow(text, { tools, ...(file === undefined ? {} : { file }) });
    const summary: WorkflowSummary = {
      name: graph.name,
      notation: graph.notation,
      nodes: graph.nodes.map((n) => (n.role === undefined ? { id: n.id, kind: n.kind } : { id: n.id, kind: n.kind, role: n.role })),
      edges: graph.edges.map((e) => ({ from: e.from, to: e.to, type: e.type })),
    };
    return { ok: true, summary };
  } catch (err) {
    if (err instanceof SpecError) return { ok: false, issues: err.issues.map((i) => ({ ...i, path: [...i.path] })) };
    throw err;
  }
}

