/**
 * `flowlab serve` for a new user: FLOWLAB_SHARED unset, no ../shared beside the working
 * directory, a fresh folder for the database. The lab lists every dataset: the procedural
 * families ready, each public set with how to get it into `datasets/` beside the database.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { getDataset } from '../../core/tasks/index.ts';
import { lonelyDir, tempDir } from '../../test/fixtures.ts';
import { startServe } from './serve.ts';

const saved = { cwd: process.cwd(), shared: process.env['FLOWLAB_SHARED'] };
afterEach(() => {
  process.chdir(saved.cwd);
  if (saved.shared === undefined) delete process.env['FLOWLAB_SHARED'];
  else process.env['FLOWLAB_SHARED'] = saved.shared;
});

describe('flowlab serve on a fresh data folder, no shared folder', () => {
  it('shows the datasets a user can get and how; the procedural families are ready', async () => {
    delete process.env['FLOWLAB_SHARED'];
    process.chdir(lonelyDir('serve-lonely'));
    const userData = tempDir('serve-user');
    const running = await startServe({ port: 0, host: '127.0.0.1', db: path.join(userData, 'flowlab.db'), models: path.join(userData, 'models'), renderer: path.join(userData, 'no-renderer') });
    try {
      const list = await running.lab.listDatasets();
      const ready = list.filter((d) => d.available).map((d) => d.name);
      expect(ready).toEqual(['learn', 'learn-design', 'learn-design-judge', 'learn-design-ood', 'learn-errand', 'learn-json', 'learn-judge', 'learn-team', 'learn-tool', 'learn-unit', 'learn-word']);
      const toGet = list.filter((d) => !d.available);
      expect(toGet.map((d) => d.name)).toEqual(['2wikimultihopqa', 'bamboogle', 'bamtwoogle', 'gsm8k', 'hotpotqa', 'humaneval', 'mbpp', 'musique']);
      for (const d of toGet) {
        expect(d.get?.command, d.name).toBe(`flowlab datasets fetch ${d.name}`);
        expect(d.get?.folder, d.name).toBe(path.join(userData, 'datasets'));
      }
      expect(toGet.find((d) => d.name === 'humaneval')!.get).toMatchObject({ bytes: 214438, licence: 'MIT (OpenAI)' });
      // The missing-file message names the folder it looked in.
      expect(toGet.find((d) => d.name === 'gsm8k')!.message).toContain(path.join(userData, 'datasets'));
      expect(getDataset('learn-word', { userDataDir: userData }).load({ split: 'train', limit: 2 })).toHaveLength(2);
    } finally {
      await running.stop();
    }
  });
});
