import { describe, expect, it } from 'vitest';
import { datasetNames, getDataset } from '../tasks/index.ts';
import { labelClassOf } from './classOf.ts';
import { knownLabelClassOf } from './labelClass.ts';

describe('knownLabelClassOf: the window\'s class of a label, without the dataset registry', () => {
  it('gives the tool of a learn-design label and nothing for datasets without classes', () => {
    expect(knownLabelClassOf('learn-design')!('weather:today')).toBe('weather');
    expect(knownLabelClassOf('learn-errand')!('math:multiply')).toBe('math');
    expect(knownLabelClassOf('gsm8k')).toBeUndefined();
    expect(knownLabelClassOf('nope')).toBeUndefined();
  });

  it('agrees with Dataset.classOf (labelClassOf) on every registered dataset: same datasets with classes, same class of every label', () => {
    for (const name of datasetNames()) {
      const server = labelClassOf(name);
      const window = knownLabelClassOf(name);
      expect(Boolean(window), `${name}: classes in the registry ${Boolean(server)}, in the window ${Boolean(window)}`).toBe(Boolean(server));
      if (!server) continue;
      const ds = getDataset(name);
      for (const split of ds.splits) {
        for (const t of ds.load({ split, limit: 24 })) expect(window!(t.expected), `${name}/${split} ${t.id}`).toBe(server(t.expected));
      }
    }
  });
});
