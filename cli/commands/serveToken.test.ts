import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/fixtures.ts';
import { UsageError } from '../args.ts';
import { startServe } from './serve.ts';

const saved = process.env.FLOWLAB_TOKEN;
afterEach(() => {
  if (saved === undefined) delete process.env.FLOWLAB_TOKEN;
  else process.env.FLOWLAB_TOKEN = saved;
});

function options() {
  const dir = tempDir('serve-token');
  return { port: 0, host: '127.0.0.1', db: path.join(dir, 'lab.db'), models: dir, renderer: path.join(dir, 'no-renderer') };
}

describe('flowlab serve keeps one token across restarts with FLOWLAB_TOKEN', () => {
  it('serves with the token it is given, so a restarted server takes the open page back', async () => {
    const token = 'ab'.repeat(16);
    process.env.FLOWLAB_TOKEN = token;
    const running = await startServe(options());
    try {
      expect(running.server.token).toBe(token);
      expect(running.server.url).toMatch(new RegExp(`/\\?token=${token}$`));
    } finally {
      await running.stop();
    }
  });

  it('refuses a short or non-hex token before opening anything', async () => {
    process.env.FLOWLAB_TOKEN = 'secret';
    await expect(startServe(options())).rejects.toThrow(UsageError);
    await expect(startServe(options())).rejects.toThrow('FLOWLAB_TOKEN must be 32 to 128 lowercase hex digits');
  });

  it('makes a random token when none is set', async () => {
    delete process.env.FLOWLAB_TOKEN;
    const running = await startServe(options());
    try {
      expect(running.server.token).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await running.stop();
    }
  });
});
