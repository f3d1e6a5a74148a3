import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, createHandlers } from '../core/api/index.ts';
import { rejectionOf, scratchDir, storeTracker } from '../test/fixtures.ts';
import { createLabHost } from './labHost.ts';
import { WorkflowFolder } from './workflowFiles.ts';

const scratch = scratchDir('wf-files');
const stores = storeTracker();
afterEach(() => stores.closeAll());

const rejection = (p: Promise<unknown>): Promise<ApiError> => rejectionOf(ApiError, p);

/** The API over a lab host whose workflows folder is a fresh folder under the scratch dir. */
function apiIn(name: string) {
  const root = path.join(scratch(), name);
  mkdirSync(root, { recursive: true });
  const store = stores.open(path.join(root, 'lab.db'));
  const lab = createLabHost({ store, dbFile: store.file, modelDir: root, examplesDir: root, emit: () => {} });
  return { api: createHandlers({ store, version: 't', lab }), folder: path.join(root, 'flowlab-workflows'), root };
}

describe('the workflows folder (host/workflowFiles.ts)', () => {
  it('saves beside the database, lists and reads back the same text', async () => {
    const { api, folder } = apiIn('roundtrip');
    expect(await api.listWorkflowFiles()).toEqual({ folder, files: [] });
    const text = 'name: mine\n# ünïcode stays\nroles: {}\n';
    const saved = await api.saveWorkflowFile({ name: 'my team.yaml', text });
    expect(saved).toMatchObject({ name: 'my team.yaml', sizeBytes: Buffer.byteLength(text) });
    expect(readFileSync(path.join(folder, 'my team.yaml'), 'utf8')).toBe(text);
    expect((await api.listWorkflowFiles()).files.map((f) => f.name)).toEqual(['my team.yaml']);
    await expect(api.readWorkflowFile({ name: 'my team.yaml' })).resolves.toMatchObject({ name: 'my team.yaml', text });
    // No temporary file is left behind.
    expect(readdirSync(folder)).toEqual(['my team.yaml']);
  });

  it('refuses to save over an existing name unless told to overwrite', async () => {
    const { api, folder } = apiIn('overwrite');
    await api.saveWorkflowFile({ name: 'a.yml', text: 'one' });
    const busy = await rejection(api.saveWorkflowFile({ name: 'a.yml', text: 'two' }));
    expect([busy.code, busy.field]).toEqual(['BUSY', 'name']);
    expect(busy.message).toMatch(/a\.yml already exists/);
    expect(readFileSync(path.join(folder, 'a.yml'), 'utf8')).toBe('one');
    await api.saveWorkflowFile({ name: 'a.yml', text: 'two', overwrite: true });
    expect(readFileSync(path.join(folder, 'a.yml'), 'utf8')).toBe('two');
  });

  it.each([
    ['../escape.yaml', /not a path|no \.\./],
    ['/etc/passwd.yaml', /not a path/],
    ['sub/x.yaml', /not a path/],
    ['..\\x.yaml', /not a path/],
    ['notes.txt', /must end in \.yaml or \.yml/],
    ['.hidden.yaml', /must end in \.yaml/],
    ['a..yaml', /no \.\./],
    ['', /must not be empty/],
  ])('refuses the name %j before touching the disk', async (name, message) => {
    const { api, root } = apiIn(`bad-${readdirSync(scratch()).length}`);
    for (const call of [api.saveWorkflowFile({ name, text: 'x' }), api.readWorkflowFile({ name })]) {
      const err = await rejection(call);
      expect([err.code, err.field]).toEqual(['BAD_REQUEST', 'name']);
      expect(err.message).toMatch(message);
    }
    expect(readdirSync(root).includes('flowlab-workflows')).toBe(false);
  });

  it('never follows a link out of the folder, for reading or for saving', async () => {
    const { api, folder, root } = apiIn('links');
    mkdirSync(folder);
    const outside = path.join(root, 'outside.yaml');
    writeFileSync(outside, 'secret: 1\n');
    symlinkSync(outside, path.join(folder, 'link.yaml'));
    const read = await rejection(api.readWorkflowFile({ name: 'link.yaml' }));
    expect([read.code, read.message]).toEqual(['FORBIDDEN', expect.stringContaining('link.yaml in') as unknown as string]);
    const save = await rejection(api.saveWorkflowFile({ name: 'link.yaml', text: 'overwritten', overwrite: true }));
    expect(save.code).toBe('FORBIDDEN');
    expect(readFileSync(outside, 'utf8')).toBe('secret: 1\n');
    // Links are not listed either.
    expect((await api.listWorkflowFiles()).files).toEqual([]);
  });

  it('says which file is missing, too large or not UTF-8', async () => {
    const { api, folder } = apiIn('reads');
    mkdirSync(folder);
    const missing = await rejection(api.readWorkflowFile({ name: 'nope.yaml' }));
    expect([missing.code, missing.message]).toEqual(['NOT_FOUND', `readWorkflowFile: there is no nope.yaml in the workflows folder ${folder}`]);
    writeFileSync(path.join(folder, 'latin1.yaml'), Buffer.from([0x6e, 0x3a, 0x20, 0xe9, 0x0a]));
    await expect(rejection(api.readWorkflowFile({ name: 'latin1.yaml' }))).resolves.toMatchObject({ code: 'BAD_REQUEST', message: 'readWorkflowFile: latin1.yaml is not UTF-8 text' });
    const tooLong = await rejection(api.saveWorkflowFile({ name: 'big.yaml', text: 'x'.repeat((1 << 20) + 1) }));
    expect([tooLong.code, tooLong.field]).toEqual(['BAD_REQUEST', 'text']);
  });

  it('puts the folder of an in-memory database in the temp folder', () => {
    expect(WorkflowFolder.beside(':memory:')).toBe(path.join(tmpdir(), 'flowlab-workflows'));
    expect(WorkflowFolder.beside('/data/lab.db')).toBe('/data/flowlab-workflows');
  });
});
