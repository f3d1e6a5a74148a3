import { describe, expect, it } from 'vitest';
import { foldDownload } from './DownloadModel.tsx';

describe('foldDownload', () => {
  it('follows a download from running through progress to its end', () => {
    let v = foldDownload(undefined, { type: 'download', downloadId: 'd', fileName: 'm.gguf', status: 'running', bytes: 0 });
    expect(v).toEqual({ fileName: 'm.gguf', status: 'running', bytes: 0 });
    v = foldDownload(v, { type: 'downloadProgress', downloadId: 'd', bytes: 10, total: 40 });
    expect(v).toEqual({ fileName: 'm.gguf', status: 'running', bytes: 10, total: 40 });
    v = foldDownload(v, { type: 'download', downloadId: 'd', fileName: 'm.gguf', status: 'failed', bytes: 40, code: 'SHA256_MISMATCH', message: 'The downloaded file does not match' });
    expect(v).toEqual({ fileName: 'm.gguf', status: 'failed', bytes: 40, total: 40, message: 'The downloaded file does not match' });
    // A progress event that arrives late does not reopen a closed download.
    expect(foldDownload(v, { type: 'downloadProgress', downloadId: 'd', bytes: 20, total: 40 })).toBe(v);
  });
  it('starts from a progress event that arrived before the opening one', () => {
    expect(foldDownload(undefined, { type: 'downloadProgress', downloadId: 'd', bytes: 5 })).toEqual({ status: 'running', bytes: 5 });
  });
});
