import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test/fixtures.ts';
import { cli } from '../test/cli.ts';

describe('flowlab train-optimizer: arguments (no model needed)', () => {
  it('refuses, before any model loads, a missing model, a family without an edit menu, bad numbers and too few tasks', async () => {
    const none = await cli(['train-optimizer', 'learn-design']);
    expect(none.code).toBe(2);
    expect(none.err).toContain('missing --model <file.gguf>');

    // The model path does not exist: each refusal comes before it would load.
    const tool = await cli(['train-optimizer', 'learn-tool', '--model', '/nowhere.gguf']);
    expect(tool.code).toBe(2);
    expect(tool.err).toContain('train-optimizer trains the edit optimizer: learn-tool has no edit menu (learn-design has one)');

    const gain = await cli(['train-optimizer', 'learn-design', '--model', '/nowhere.gguf', '--min-gain', '0']);
    expect(gain.code).toBe(2);
    expect(gain.err).toContain('--min-gain must be a number in (0, 1], got "0"');

    const temp = await cli(['train-optimizer', 'learn-design', '--model', '/nowhere.gguf', '--temperature', '0x2']);
    expect(temp.code).toBe(2);
    expect(temp.err).toContain('--temperature must be a number in (0, 4], got "0x2"');

    // learn-design's train split has 2,000 tasks: 8 from offset 1,995 are not there.
    const few = await cli(['train-optimizer', 'learn-design', '--model', '/nowhere.gguf', '--offset', '1995']);
    expect(few.code).toBe(2);
    expect(few.err).toContain('--tasks 16 from --offset 1995: learn-design/train has only 5 there');

    // --out checked before the collection (it was found wrong only after minutes): not the model itself, in a folder that exists.
    const self = await cli(['train-optimizer', 'learn-design', '--model', '/nowhere.gguf', '--out', '/nowhere.gguf']);
    expect([self.code, self.err.split('\n')[0]]).toEqual([2, 'flowlab train-optimizer: --out /nowhere.gguf is the --model file itself; write the trained weights to another file']);
    const dir = await cli(['train-optimizer', 'learn-design', '--model', '/nowhere.gguf', '--out', '/no/such/folder/o.gguf']);
    expect([dir.code, dir.err.split('\n')[0]]).toEqual([2, 'flowlab train-optimizer: --out /no/such/folder/o.gguf: the folder /no/such/folder does not exist']);
    // Nor the store it collects into (the weights would overwrite every stored step), nor a folder.
    const db = await cli(['train-optimizer', 'learn-design', '--model', '/nowhere.gguf', '--db', '/tmp/flowlab-rft-clash.db', '--out', '/tmp/flowlab-rft-clash.db']);
    expect([db.code, db.err.split('\n')[0]]).toEqual([2, 'flowlab train-optimizer: --out /tmp/flowlab-rft-clash.db is the --db store itself; write the trained weights to another file']);
    // A model that is not there: the store this command would have created is not left behind.
    const scratch = tempDir('rft-nomodel');
    const gone = await cli(['train-optimizer', 'learn-design', '--model', '/nowhere.gguf', '--db', path.join(scratch, 'new.db'), '--states', '1', '--samples', '1', '--tasks', '1']);
    expect([gone.code, gone.err.split('\n')[0]]).toEqual([1, 'flowlab train-optimizer: Model file not found: /nowhere.gguf [MODEL_NOT_FOUND]']);
    expect(readdirSync(scratch)).toEqual([]);
    const folder = await cli(['train-optimizer', 'learn-design', '--model', '/nowhere.gguf', '--out', '/tmp']);
    expect([folder.code, folder.err.split('\n')[0]]).toEqual([2, 'flowlab train-optimizer: --out /tmp is a folder; name the .gguf file to write (e.g. /tmp/optimizer.gguf)']);
  });
});
