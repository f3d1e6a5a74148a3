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

/**
 * A reader that closes the pipe before the results are written (`flowlab replay x --json | head
 * -c 0`) is not a failure of the command: everything was stored before the results are printed,
 * so the process ends quietly (status 0) instead of dying on an unhandled EPIPE. Other stdout
 * errors stay errors.
 */
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});
