/**
 * Commands the views print (pure), as they work when pasted in the repository after `npm ci`:
 * `npm run flowlab -- <command> … --db <the served database>` (the `flowlab` script of
 * package.json; `flowlab` alone is not on PATH), each argument quoted for a POSIX shell where it
 * needs it.
 */

/** `word` as one POSIX shell word: unchanged when it is safe (or a `<placeholder>`), else single-quoted. */
export function shellWord(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word) || /^<[a-z][a-z0-9.-]*>$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command line of `flowlab <args…>` through npm, with `--db <dbFile>` appended when the
 * database is known (a placeholder like `<file.gguf>` is kept as written, for the user to fill in).
 */
export function flowlabCommand(args: readonly string[], dbFile?: string | null): string {
  const words = [...args, ...(dbFile ? ['--db', dbFile] : [])];
  return ['npm', 'run', 'flowlab', '--', ...words.map(shellWord)].join(' ');
}
