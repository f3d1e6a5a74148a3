import { describe, expect, it } from 'vitest';
import { rejectionOf } from '../../test/fixtures.ts';
import { openStore } from '../store/index.ts';
import { downloadFileNameProblem, downloadSourceProblem, isDownloadEvent, type DownloadEvent } from './downloads.ts';
import { ApiError, createHandlers, isLabEvent, type LabHost } from './index.ts';

describe('download file names', () => {
  it('accepts bare .gguf names', () => {
    for (const ok of ['tiny.gguf', 'Qwen2.5-0.5B-Instruct-Q8_0.GGUF', 'a b.gguf']) expect(downloadFileNameProblem(ok)).toBeUndefined();
  });
  it('refuses paths, hidden names, control characters, other extensions and overlong names', () => {
    expect(downloadFileNameProblem('../x.gguf')).toBe('must be a file name, not a path (no / or \\)');
    expect(downloadFileNameProblem('sub/x.gguf')).toBe('must be a file name, not a path (no / or \\)');
    expect(downloadFileNameProblem('C:\\m\\x.gguf')).toBe('must be a file name, not a path (no / or \\)');
    expect(downloadFileNameProblem('.hidden.gguf')).toBe('must not start with "."');
    expect(downloadFileNameProblem('x\u0000.gguf')).toBe('must not contain control characters');
    expect(downloadFileNameProblem('x.bin')).toBe('must be a .gguf file name');
    expect(downloadFileNameProblem('.gguf')).toBe('must not start with "."');
    expect(downloadFileNameProblem('x.gguf.part')).toBe('must be a .gguf file name');
    expect(downloadFileNameProblem(`${'a'.repeat(196)}.gguf`)).toBe('must be at most 200 characters');
  });
});

describe('download sources', () => {
  it('accepts hf: references and http(s) URLs', () => {
    for (const ok of ['hf:owner/repo/file.gguf', 'hf:owner/repo@v1/sub/file.gguf', 'https://example.org/m.gguf', 'http://127.0.0.1:8080/m.gguf']) expect(downloadSourceProblem(ok)).toBeUndefined();
  });
  it('refuses other schemes and malformed references', () => {
    expect(downloadSourceProblem('file:///etc/passwd')).toBe('must be an hf:<owner>/<repo>/<file.gguf> reference or an http(s) URL');
    expect(downloadSourceProblem('ftp://example.org/m.gguf')).toBe('must be an hf:<owner>/<repo>/<file.gguf> reference or an http(s) URL');
    expect(downloadSourceProblem('hf:owner/file.gguf')).toBe('must look like hf:<owner>/<repo>/<file.gguf>');
    expect(downloadSourceProblem('https://example.org/a b.gguf')).toBe('must not contain spaces');
    expect(downloadSourceProblem('https://')).toBe('must be a valid URL');
  });
});

describe('startDownload / cancelDownload payloads', () => {
  const calls: unknown[] = [];
  const lab = { startDownload: (p: unknown) => (calls.push(p), { downloadId: 'dl-1' }) } as unknown as LabHost;
  const api = createHandlers({ store: openStore(':memory:'), version: '1', lab });
  const bad = async (payload: unknown) => {
    const err = await rejectionOf(ApiError, api.startDownload(payload as never));
    return [err.code, err.field, err.message];
  };
  it('names the field at fault before the host is asked', async () => {
    await expect(bad({ source: 'file:///etc/passwd' })).resolves.toEqual(['BAD_REQUEST', 'source', 'startDownload: payload field "source": must be an hf:<owner>/<repo>/<file.gguf> reference or an http(s) URL']);
    await expect(bad({ source: 'hf:o/r/m.gguf', fileName: '../../etc/x.gguf' })).resolves.toEqual(['BAD_REQUEST', 'fileName', 'startDownload: payload field "fileName": must be a file name, not a path (no / or \\)']);
    await expect(bad({ source: 'hf:o/r/m.gguf', fileName: 'm.exe' })).resolves.toEqual(['BAD_REQUEST', 'fileName', 'startDownload: payload field "fileName": must be a .gguf file name']);
    await expect(bad({ source: 'hf:o/r/m.gguf', sha256: 'abc' })).resolves.toEqual(['BAD_REQUEST', 'sha256', 'startDownload: payload field "sha256": must be 64 hex digits']);
    await expect(bad({ source: 'hf:o/r/m.gguf', sizeBytes: 0 })).resolves.toEqual(['BAD_REQUEST', 'sizeBytes', 'startDownload: payload field "sizeBytes": must be at least 1']);
    await expect(bad({ source: 'hf:o/r/m.gguf', dir: '/tmp' })).resolves.toEqual(['BAD_REQUEST', 'dir', 'startDownload: payload: unknown field(s) "dir"']);
    expect(calls).toEqual([]);
    await expect(api.startDownload({ source: 'hf:o/r/m.gguf' })).resolves.toEqual({ downloadId: 'dl-1' });
    expect(calls).toEqual([{ source: 'hf:o/r/m.gguf' }]);
  });
  it('answers UNAVAILABLE where the host cannot download', async () => {
    const err = await rejectionOf(ApiError, api.cancelDownload({ downloadId: 'dl-1' }));
    expect([err.code, err.message]).toEqual(['UNAVAILABLE', 'cancelDownload: this host cannot download models']);
  });
});

describe('isDownloadEvent', () => {
  const good: DownloadEvent[] = [
    { type: 'download', downloadId: 'dl-1', fileName: 'm.gguf', status: 'running', bytes: 0 },
    { type: 'downloadProgress', downloadId: 'dl-1', bytes: 512, total: 1024 },
    { type: 'download', downloadId: 'dl-1', fileName: 'm.gguf', status: 'completed', bytes: 1024, total: 1024, path: '/m/m.gguf', sha256: 'a'.repeat(64) },
    { type: 'download', downloadId: 'dl-1', fileName: 'm.gguf', status: 'failed', bytes: 3, code: 'SHA256_MISMATCH', message: 'The downloaded file does not match' },
  ];
  it('accepts every well-formed event, also as a LabEvent', () => {
    for (const e of good) expect([isDownloadEvent(e), isLabEvent(e)]).toEqual([true, true]);
  });
  it('rejects near misses', () => {
    for (const e of [
      { ...good[0], status: 'paused' }, { ...good[1], bytes: -1 }, { ...good[1], total: 1.5 }, { ...good[2], sha256: 'xyz' },
      { ...good[3], code: 'NOPE' }, { ...good[0], downloadId: '' }, { type: 'downloadX', downloadId: 'd', bytes: 0 },
    ]) expect(isLabEvent(e)).toBe(false);
  });
});
