/** The CLI's output streams, injectable so tests capture what a command prints. */
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
