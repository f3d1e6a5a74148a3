import { getDataset } from '../tasks/registry.ts';

/**
 * A dataset's class of a label text (e.g. learn-design's tool: `weather:today` → `weather`), for
 * the constant guard's class count (answers.ts); undefined for datasets without classes and for
 * names this build does not know (never throws: a guard must not fail the report it guards).
 */
export function labelClassOf(dataset: string): ((label: string) => string) | undefined {
  try {
    const classOf = getDataset(dataset).classOf;
    return classOf && ((label: string) => classOf({ expected: label }));
  } catch {
    return undefined;
  }
}
