import type { ReactNode } from 'react';

/** One column heading: its text, or the text with `num` (right-aligned numbers) and a `title` tooltip. */
export type Column = string | { label: ReactNode; num?: boolean; title?: string; key?: string };

/**
 * A table's `<thead>`: one `<th scope="col">` per column, in order. `false` entries are left out
 * (for columns shown only sometimes).
 */
export function TableHead({ columns }: { columns: Array<Column | false> }) {
  return (
    <thead>
      <tr>
        {columns.map((c, i) => {
          if (c === false) return null;
          const col = typeof c === 'string' ? { label: c } : c;
          return (
            <th key={col.key ?? i} scope="col" className={col.num ? 'num' : undefined} title={col.title}>
              {col.label}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}
