import { mkdirSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHandlers } from '../../core/api/index.ts';
import { createLabHost } from '../../host/labHost.ts';
import { hostOver, scratchDir, storeTracker } from '../../test/fixtures.ts';
import { createLabStore } from '../state.ts';
import { DRAFT_KEY, keepDraft, parseDraft, restoreDraft, type DraftStorage } from './draft.ts';
import { suggestedFileName, textHash, NEW_DOCUMENT } from './document.ts';

const TEAM = readFileSync(new URL('../../examples/gsm8k-team.yaml', import.meta.url), 'utf8');
const EXAMPLE = { file: 'examples/gsm8k-team.yaml', name: 'gsm8k-team', text: TEAM };
const scratch = scratchDir('doc-store');
const stores = storeTracker();
afterEach(() => stores.closeAll());
const settle = () => new Promise((r) => setTimeout(r, 0));

/** A view store over real handlers and a lab host whose workflows folder is fresh. */
function labStore(name: string) {
  const root = path.join(scratch(), name);
  mkdirSync(root, { recursive: true });
  const store = stores.open(path.join(root, 'lab.db'));
  const host = createLabHost({ store, dbFile: store.file, modelDir: root, examplesDir: root, emit: () => {} });
  return createLabStore(hostOver(createHandlers({ store, version: 't', lab: host })));
}

/** Timers run by hand. */
function manualDelay() {
  const timers: Array<() => void> = [];
  return { timers, delay: (fn: () => void) => (timers.push(fn), () => void timers.splice(timers.indexOf(fn), 1)) };
}

describe('the editor text as a document', () => {
  it('asks before an example replaces unsaved changes, and keeps them when told to', async () => {
    const lab = labStore('prompt');
    lab.getState().openExample(EXAMPLE);
    await settle();
    expect(lab.getState().documentDirty()).toBe(false);
    expect(lab.getState().pendingOpen).toBeNull();
    lab.getState().setText(`${TEAM}# my note\n`);
    expect(lab.getState().documentDirty()).toBe(true);

    lab.getState().openExample(EXAMPLE);
    expect(lab.getState().pendingOpen).toMatchObject({ origin: 'example', label: 'examples/gsm8k-team.yaml' });
    expect(lab.getState().editor.text).toBe(`${TEAM}# my note\n`); // nothing replaced yet
    lab.getState().cancelOpen();
    expect([lab.getState().pendingOpen, lab.getState().editor.text]).toEqual([null, `${TEAM}# my note\n`]);

    lab.getState().openExample(EXAMPLE);
    lab.getState().confirmOpen();
    expect([lab.getState().pendingOpen, lab.getState().editor.text, lab.getState().documentDirty()]).toEqual([null, TEAM, false]);
  });

  it('opens without asking when nothing is unsaved (typing a change back is clean)', () => {
    const lab = labStore('clean');
    lab.getState().openLocalFile('mine.yaml', 'name: a\n');
    lab.getState().setText('name: b\n');
    lab.getState().setText('name: a\n');
    expect(lab.getState().documentDirty()).toBe(false);
    lab.getState().openExample(EXAMPLE);
    expect(lab.getState().pendingOpen).toBeNull();
    expect(lab.getState().editor.text).toBe(TEAM);
  });

  it('Save asks for a name first, Save as refuses an existing one until told to replace it', async () => {
    const lab = labStore('save');
    lab.getState().openExample(EXAMPLE);
    lab.getState().setText(`${TEAM}# v1\n`);
    expect(await lab.getState().saveDocument()).toBe(false); // no name yet: the view asks for one
    expect(await lab.getState().saveDocumentAs('team.yaml')).toBe(true);
    expect(lab.getState().workflowDoc).toMatchObject({ name: 'team.yaml', origin: 'saved', savedHash: textHash(`${TEAM}# v1\n`) });
    expect(lab.getState().documentDirty()).toBe(false);
    expect(lab.getState().notice?.text).toBe('✓ Saved team.yaml in the workflows folder.');

    lab.getState().setText(`${TEAM}# v2\n`);
    expect(await lab.getState().saveDocument()).toBe(true); // its own name now: saved over
    expect(await lab.getState().saveDocumentAs('team.yaml')).toBe(false);
    expect(lab.getState().saveError).toEqual({ message: 'team.yaml already exists in the workflows folder; choose another name, or save over it', exists: 'team.yaml' });
    expect(await lab.getState().saveDocumentAs('team.yaml', true)).toBe(true);

    await lab.getState().loadWorkflowFiles();
    expect(lab.getState().workflowFiles).toMatchObject({ status: 'ready', data: { files: [{ name: 'team.yaml' }] } });
    lab.getState().openExample(EXAMPLE); // clean: opens at once
    await lab.getState().openSavedWorkflow('team.yaml');
    expect(lab.getState().editor.text).toBe(`${TEAM}# v2\n`);
    expect(lab.getState().workflowDoc).toMatchObject({ name: 'team.yaml', origin: 'saved' });
  });

  it('says in plain words why a name is refused', async () => {
    const lab = labStore('badname');
    lab.getState().openLocalFile('x.yaml', 'name: x\n');
    expect(await lab.getState().saveDocumentAs('../x.yaml')).toBe(false);
    expect(lab.getState().saveError?.message).toMatch(/^payload field "name": must be a file name, not a path/);
  });

  it('undoes and redoes typing and graph edits as diffs', async () => {
    const lab = labStore('undo');
    lab.getState().openExample(EXAMPLE);
    await settle();
    const typed = TEAM.replace('name: gsm8k-team', 'name: my-team');
    lab.getState().setText(typed);
    await lab.getState().validateNow(); // the typing pause: one history entry
    expect(lab.getState().editor.undo).toEqual([{ at: TEAM.split('\n').indexOf('name: gsm8k-team'), added: {}, updated: { [TEAM.split('\n').indexOf('name: gsm8k-team')]: ['name: gsm8k-team', 'name: my-team'] }, removed: {} }]);
    expect(lab.getState().editGraph({ op: 'setRole', id: 'answer', role: 'verifier' })).toBe(true);
    const edited = lab.getState().editor.text;
    expect(lab.getState().editor.undo).toHaveLength(2);
    expect(lab.getState().editor.undo[1]!.updated).toEqual({ [TEAM.split('\n').indexOf('    role: answerer')]: ['    role: answerer', '    role: verifier'] });
    lab.getState().undo();
    lab.getState().undo();
    expect(lab.getState().editor.text).toBe(TEAM);
    lab.getState().undo();
    expect(lab.getState().notice?.text).toBe('Nothing to undo.');
    lab.getState().redo();
    lab.getState().redo();
    expect(lab.getState().editor.text).toBe(edited);
    // A new edit after an undo drops what could be redone.
    lab.getState().undo();
    lab.getState().setText(`${TEAM}# other\n`);
    await lab.getState().validateNow();
    expect(lab.getState().editor.redo).toEqual([]);
  });

  it('suggests a file name from the document, the file or the workflow name', () => {
    expect(suggestedFileName('name: My Team!\n', NEW_DOCUMENT, null)).toBe('My Team-.yaml');
    expect(suggestedFileName('x: 1', NEW_DOCUMENT, 'examples/gsm8k-team.yaml')).toBe('gsm8k-team.yaml');
    expect(suggestedFileName('x: 1', { ...NEW_DOCUMENT, name: 'kept.yml' }, 'a.yaml')).toBe('kept.yml');
    expect(suggestedFileName('x: 1', NEW_DOCUMENT, null)).toBe('workflow.yaml');
  });
});

describe('the draft across reloads (store/draft.ts)', () => {
  it('writes text, document and history after a quiet time, and a new page restores them', async () => {
    const storage = new Map<string, string>();
    const mem: DraftStorage = { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => void storage.set(k, v) };
    const first = labStore('draft-a');
    const timers = manualDelay();
    keepDraft(first, mem, timers.delay, () => 42);
    expect(await first.getState().saveDocumentAs('x.yaml')).toBe(true); // an empty document saved as x.yaml
    first.getState().openExample(EXAMPLE);
    first.getState().setText(`${TEAM}# unsaved line\n`);
    await first.getState().validateNow();
    expect(storage.has(DRAFT_KEY)).toBe(false); // not before the quiet time
    timers.timers.splice(0).forEach((t) => t());
    const draft = parseDraft(storage.get(DRAFT_KEY)!);
    expect(draft).toMatchObject({ v: 1, text: `${TEAM}# unsaved line\n`, file: 'examples/gsm8k-team.yaml', doc: { origin: 'example', savedHash: textHash(TEAM) }, at: 42 });
    const last = TEAM.split('\n').length - 1; // the empty line after the final newline
    expect(draft!.undo).toEqual([{ at: last, added: { [last]: '# unsaved line' }, updated: {}, removed: {} }]);

    // "Reload": a new store restores the draft, still unsaved, still undoable.
    const second = labStore('draft-b');
    expect(restoreDraft(second, mem)).toBe(true);
    expect(second.getState().editor.text).toBe(`${TEAM}# unsaved line\n`);
    expect(second.getState().documentDirty()).toBe(true);
    second.getState().undo();
    expect(second.getState().editor.text).toBe(TEAM);
    expect(second.getState().documentDirty()).toBe(false);
  });

  it('a flush right after typing (page hidden before the text went quiet) keeps the burst undoable', async () => {
    const storage = new Map<string, string>();
    const mem: DraftStorage = { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => void storage.set(k, v) };
    const first = labStore('draft-burst');
    const draft = keepDraft(first, mem, manualDelay().delay);
    first.getState().openExample(EXAMPLE);
    await settle();
    expect(first.getState().editGraph({ op: 'setRole', id: 'answer', role: 'verifier' })).toBe(true);
    const edited = first.getState().editor.text;
    first.getState().setText(edited.replace('name: gsm8k-team', 'name: my-team')); // no quiet time yet
    expect(first.getState().editor.undo).toHaveLength(1); // the burst is still open
    draft.flush();
    const stored = parseDraft(storage.get(DRAFT_KEY)!)!;
    expect(stored.undo).toHaveLength(2);
    const second = labStore('draft-burst-b');
    expect(restoreDraft(second, mem)).toBe(true);
    second.getState().undo(); // takes back the typed rename, not the role change
    expect(second.getState().editor.text).toBe(edited);
    second.getState().undo();
    expect(second.getState().editor.text).toBe(TEAM);
  });

  it('ignores a damaged draft, and keeps the text when the history does not fit', () => {
    expect(parseDraft('{"v":1,"text":3}')).toBeNull();
    expect(parseDraft('not json')).toBeNull();
    expect(parseDraft(null)).toBeNull();
    const lab = labStore('draft-full');
    let writes = 0;
    const kept: string[] = [];
    const full: DraftStorage = {
      getItem: () => null,
      setItem: (_k, v) => {
        if (++writes === 1) throw new Error('QuotaExceededError');
        kept.push(v);
      },
    };
    const timers = manualDelay();
    const draft = keepDraft(lab, full, timers.delay);
    lab.getState().loadText('name: a\n', null, { undo: [{ at: 0, added: {}, updated: { 0: ['name: b', 'name: a'] }, removed: {} }], redo: [] });
    draft.flush();
    expect(kept.map((v) => parseDraft(v)?.undo.length)).toEqual([0]);
    expect(parseDraft(kept[0]!)?.text).toBe('name: a\n');
  });
});
