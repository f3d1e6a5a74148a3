/** The repro_records table (migration 11): record, replace on resume, finish, errors. */
import { describe, expect, it } from 'vitest';
import { openStore } from './index.ts';

describe('store.repro', () => {
  it('records a fingerprint, keeps the output digest when the fingerprint is recorded again, and finishes', () => {
    const s = openStore(':memory:');
    try {
      expect(s.repro.find('exp-1')).toBeUndefined();
      s.repro.record({ id: 'exp-1', kind: 'experiment', fingerprint: { seed: 7 }, fingerprintDigest: 'f1', repeatability: 'exact' });
      expect(s.repro.find('exp-1')).toMatchObject({ id: 'exp-1', kind: 'experiment', fingerprint: { seed: 7 }, fingerprintDigest: 'f1', repeatability: 'exact' });
      expect(s.repro.find('exp-1')!.outputDigest).toBeUndefined();
      s.repro.finish('exp-1', 'd1');
      // A resume records the fingerprint again (another commit, say): the digest stays.
      s.repro.record({ id: 'exp-1', kind: 'experiment', fingerprint: { seed: 7, code: 'b' }, fingerprintDigest: 'f2', repeatability: 'exact' });
      expect(s.repro.find('exp-1')).toMatchObject({ fingerprintDigest: 'f2', outputDigest: 'd1' });
      expect(s.repro.find('exp-1')!.finishedAt).toBeGreaterThan(0);
      expect(() => s.repro.finish('nope', 'd')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
      expect(() => s.repro.record({ id: 'x', kind: 'experiment', fingerprint: { n: 1n } as never, fingerprintDigest: 'f', repeatability: 'exact' })).toThrow(expect.objectContaining({ code: 'INVALID_RECORD' }));
    } finally {
      s.close();
    }
  });
});
