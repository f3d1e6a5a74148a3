import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { RunDesign } from '../../core/api/client.ts';
import { DESIGNS } from '../../core/api/designedRun.fixture.ts';
import { meanLadders, runLadders, validityMeaning } from '../lib/ladderBars.ts';
import { DesignPanel } from './DesignPanel.tsx';

const design: RunDesign = {
  nodeId: 'design', designer: 'designer', attempt: 1, notation: 'steps', text: JSON.stringify(DESIGNS[0]), document: DESIGNS[0], usable: true,
  issues: [
    { code: 'DANGLING_EDGE', path: ['steps', 1, 'inputs', 'expression'], message: 'input "expression" reads "c", which is no node', nodeId: 'b' },
    { code: 'SCHEMA', path: ['steps', 0, 'role'], message: 'a design-level note' },
  ],
};
const decode = (html: string) => html.replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&gt;/g, '>').replace(/&lt;/g, '<').replace(/&amp;/g, '&');
const render = (p: Partial<Parameters<typeof DesignPanel>[0]> = {}) =>
  decode(renderToStaticMarkup(<DesignPanel design={design} drawn={new Set(['design', 'a', 'b'])} selectedNode={null} selectedIssue={null} onSelectIssue={() => {}} {...p} />));

describe('the design panel', () => {
  it('lists each validation message with its code, path and node; the text is the compiled design', () => {
    const html = render();
    expect(html).toContain('data-testid="design-issue-0"');
    expect(html).toMatch(/<code>DANGLING_EDGE<\/code> at <code>steps\[1\]\.inputs\.expression<\/code><span class="muted small"> · node b<\/span>/);
    expect(html).toMatch(/<code>SCHEMA<\/code> at <code>steps\[0\]\.role<\/code><span class="muted small"> · the whole design<\/span>/);
    expect(html).toContain(JSON.stringify(DESIGNS[0], null, 2));
    expect(html).not.toContain('<mark');
  });

  it('marks the chosen message\'s place in the text', () => {
    const html = render({ selectedIssue: 0, selectedNode: 'b' });
    expect(html).toMatch(/<mark data-testid="design-mark">"expression": "c"<\/mark>/);
    expect(html).toMatch(/<li class="selected at-node"><button type="button" class="issue" data-testid="design-issue-0" aria-pressed="true">/);
  });

  it('says so when a message cannot be placed, and a SIMULATED fault is marked', () => {
    const html = render({ design: { ...design, document: undefined, text: '{"steps": [', fault: { kind: 'dangling_edge', nodeId: 'b', simulated: true } }, selectedIssue: 0 });
    expect(html).toContain('data-testid="design-unlocated"');
    expect(html).toContain('The completion did not parse as a design');
    expect(html).toMatch(/SIMULATED<\/span> a dangling_edge fault was put into node <code>b<\/code>/);
  });
});

describe('the designer on the ladder', () => {
  const rung = { format: 1, validity: 0.5, completion: 0, correctness: 0, credit: -0.5, weights: { format: 0.1, validity: 0.1, completion: 0.2, correctness: 0.6, credit: 0.5 }, reward: -0.1, highestRung: 1 };
  it('keeps nodes run and wired per role, and says what validity means for a role that wired nodes', () => {
    const run = { ladder: { designer: { role: 'designer' as never, ...rung, nodesRun: 1, nodesWired: 2 }, executor: { role: 'executor' as never, ...rung, nodesRun: 1, nodesWired: 0 } } };
    const [d, e] = runLadders(run);
    expect([d!.nodesRun, d!.nodesWired, e!.nodesWired]).toEqual([1, 2, 0]);
    expect(validityMeaning(d!)).toBe('its graph well-formed: every node it wired passed validation');
    expect(validityMeaning(e!)).toBe('its outputs valid: each node it ran met its contract');
    const mean = meanLadders([run, { ladder: { designer: { role: 'designer' as never, ...rung, nodesRun: 1, nodesWired: 1 } } }]);
    expect(mean.find((m) => m.role === 'designer')!.nodesWired).toBe(1.5);
  });
});
