import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { ExampleWorkflow } from '../core/api/index.ts';
import { MAX_WORKFLOW_CHARS } from '../core/api/index.ts';

/**
 * The example workflows shipped in `examplesDir` (`*.yaml` / `*.yml`, not recursive), sorted by
 * file name. `file` is `examples/<name>` (for display; the folder's real path is not exposed);
 * `name` is the document's `name:` (the file's base name when it has none or does not parse).
 * A missing folder gives `[]`; files over `MAX_WORKFLOW_CHARS` or unreadable are skipped.
 */
export function listExamples(examplesDir: string): ExampleWorkflow[] {
  let entries: string[];
  try {
    entries = readdirSync(examplesDir);
  } catch {
    return [];
  }
  const out: ExampleWorkflow[] = [];
  for (const entry of entries.filter((e) => /\.ya?ml$/i.test(e)).sort()) {
    const file = path.join(examplesDir, entry);
    try {
      const st = statSync(file);
      if (!st.isFile() || st.size > MAX_WORKFLOW_CHARS) continue;
      const text = readFileSync(file, 'utf8');
      out.push({ file: `examples/${entry}`, name: documentName(text) ?? entry.replace(/\.ya?ml$/i, ''), text });
    } catch {
      // unreadable: not listed
    }
  }
  return out;
}

function documentName(text: string): string | undefined {
  try {
    const doc = parseYaml(text) as unknown;
    const name = doc && typeof doc === 'object' ? (doc as { name?: unknown }).name : undefined;
    return typeof name === 'string' && name.trim() ? name : undefined;
  } catch {
    return undefined;
  }
}
