import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { datasetForWorkflow, trainDatasetForWorkflow } from './datasetChoice.ts';

const DATASETS = [{ name: 'bamboogle' }, { name: 'gsm8k' }, { name: 'humaneval' }];
const TEAM = '# A team.\n# Run it:  npm run flowlab -- run examples/gsm8k-team.yaml --dataset gsm8k --limit 10\nname: gsm8k-team\n';

describe('the dataset the Run form starts with for an opened workflow', () => {
  it('is the one the workflow was last run with', () => {
    const exps = [{ workflowName: 'gsm8k-team', dataset: 'bamboogle', createdAt: 2 }, { workflowName: 'gsm8k-team', dataset: 'humaneval', createdAt: 1 }, { workflowName: 'other', dataset: 'gsm8k', createdAt: 3 }];
    expect(datasetForWorkflow(TEAM, 'gsm8k-team', exps, DATASETS)).toBe('bamboogle');
  });

  it('else the one its comments name (not the first in the list), when the lab lists it', () => {
    expect(datasetForWorkflow(TEAM, 'gsm8k-team', [], DATASETS)).toBe('gsm8k');
    expect(datasetForWorkflow(TEAM, 'gsm8k-team', [{ workflowName: 'gsm8k-team', dataset: 'gone', createdAt: 1 }], DATASETS)).toBe('gsm8k');
    expect(datasetForWorkflow(TEAM, 'gsm8k-team', [], [{ name: 'bamboogle' }])).toBeUndefined();
    // Only comments count: a YAML value naming --dataset is not a hint.
    expect(datasetForWorkflow('name: x\nprompt: "--dataset humaneval"\n', 'x', [], DATASETS)).toBeUndefined();
  });
});

describe('the dataset the Learning form starts with for an opened workflow', () => {
  const read = (f: string) => readFileSync(new URL(`../../examples/${f}`, import.meta.url), 'utf8');
  const LISTED = [{ name: 'gsm8k', splits: ['test'] }, { name: 'learn-design', splits: ['train', 'heldout'] }, { name: 'learn-team', splits: ['train', 'heldout'] }, { name: 'learn-word', splits: ['train', 'heldout'] }];

  it('is the one its train-loop line names (workshop-learn trains on learn-team, not the form\'s learn-word)', () => {
    expect(trainDatasetForWorkflow(read('workshop-learn.yaml'), 'workshop-learn', [], LISTED, 'train')).toBe('learn-team');
    expect(trainDatasetForWorkflow(read('designer-team.yaml'), 'designer-team', [], LISTED, 'train')).toBe('learn-design');
    expect(trainDatasetForWorkflow(read('learn-word.yaml'), 'learn-word', [], LISTED, 'train')).toBe('learn-word');
  });

  it('else the Run form\'s dataset when it has the training split; else none (the form keeps its own)', () => {
    const text = '# Run it: flowlab run x.yaml --dataset learn-team\nname: x\n';
    expect(trainDatasetForWorkflow(text, 'x', [], LISTED, 'train')).toBe('learn-team');
    expect(trainDatasetForWorkflow(read('gsm8k-team.yaml'), 'gsm8k-team', [], LISTED, 'train')).toBeUndefined();
    expect(trainDatasetForWorkflow(text, 'x', [{ workflowName: 'x', dataset: 'gsm8k', createdAt: 1 }], LISTED, 'train')).toBeUndefined();
  });
});
