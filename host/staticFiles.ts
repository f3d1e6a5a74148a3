/**
 * Which URL paths of the browser host name which files of the built renderer. A request path is
 * percent-decoded once, refused when it holds a NUL, a backslash or an invalid escape, and
 * normalised (`.` and `..` segments resolved, repeated and trailing slashes dropped); the result
 * is then looked up, case and all, in an allowlist of the files the renderer folder really holds.
 * So `/%69ndex.html`, `/index%2ehtml`, `/index.html/` and `/assets/..%2findex.html` all normalise
 * to the page (`index.html`), which needs the session token like `/` does, and a spelling that
 * a case-insensitive disk would also find (`/INDEX.HTML`) matches nothing.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';

/** The page's name inside the renderer folder. */
export const PAGE = 'index.html';

/** Deepest folder level listed, and most files kept (the built renderer holds a few dozen). */
export const STATIC_LIMITS = { depth: 8, files: 10_000 } as const;

/**
 * `pathname` decoded and normalised to a path relative to the renderer folder (`''` for `/`),
 * or undefined when it cannot name a file there (bad escape, NUL, backslash, above the root).
 */
export function normaliseRequestPath(pathname: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return undefined;
  const normal = path.posix.normalize(`/${decoded}`);
  if (normal.split('/').includes('..')) return undefined;
  return normal.replace(/^\/+|\/+$/g, '');
}

/** Whether the normalised request path names the page (`/`, `/index.html`, in any spelling). */
export function isPagePath(rel: string): boolean {
  return rel === '' || rel === PAGE;
}

/**
 * The files of `root` (relative, `/`-separated), re-listed at most once a second when a lookup
 * misses (a rebuilt renderer is picked up; a flood of misses costs one listing a second).
 */
export class StaticFiles {
  private files = new Set<string>();
  private listedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly root: string) {}

  /** The absolute file for normalised path `rel` when the folder holds exactly that file (never the page). */
  lookup(rel: string): string | undefined {
    if (isPagePath(rel)) return undefined;
    if (!this.files.has(rel) && Date.now() - this.listedAt > 1000) this.relist();
    return this.files.has(rel) ? path.join(this.root, ...rel.split('/')) : undefined;
  }

  private relist(): void {
    this.listedAt = Date.now();
    const found = new Set<string>();
    const walk = (dir: string, prefix: string, depth: number) => {
      if (depth > STATIC_LIMITS.depth) return;
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        if (found.size >= STATIC_LIMITS.files) return;
        const rel = prefix ? `${prefix}/${e.name}` : e.name;
        if (e.isDirectory()) walk(path.join(dir, e.name), rel, depth + 1);
        else if (e.isFile()) found.add(rel);
      }
    };
    walk(this.root, '', 0);
    this.files = found;
  }
}
