import { describe, expect, it } from 'vitest';
import { datasetForWorkflow } from './datasetChoice.ts';

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
