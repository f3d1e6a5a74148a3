/** Where a command writes: stdout (results), stderr (progress, notes, errors). Tests pass a capture. */
export interface Io {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  /** True when stderr is a terminal (progress bar drawn in place). */
  isTTY: boolean;
}

export const processIo: Io = {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  isTTY: Boolean(process.stderr.isTTY),
};
