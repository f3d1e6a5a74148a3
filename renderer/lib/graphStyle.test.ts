import { describe, expect, it } from 'vitest';
import { graphStyle, KIND_SHAPE } from './graphStyle.ts';

type Block = { selector: string; style: Record<string, unknown> };

describe('graphStyle', () => {
  it('gives each node kind its own shape, and each trace state its own border style or width', () => {
    expect(new Set(Object.values(KIND_SHAPE)).size).toBe(3);
    const sheet = graphStyle('light') as Block[];
    const border = (sel: string) => {
      const s = sheet.find((b) => b.selector === sel)!.style;
      return `${s['border-style']}/${s['border-width']}`;
    };
    const looks = ['ok', 'root', 'cascade', 'skipped', 'silent'].map((st) => border(`node.st-${st}`));
    expect(new Set(looks).size).toBe(5);
    expect(sheet.find((b) => b.selector === 'edge.type-control')!.style['line-style']).toBe('dashed');
  });

  it('drops text properties from large graphs until labels are asked for', () => {
    const lean = graphStyle('dark', true) as Block[];
    const node = lean.find((b) => b.selector === 'node')!.style;
    expect(node.label).toBeUndefined();
    expect(lean.find((b) => b.selector === 'edge')!.style['curve-style']).toBe('haystack');
    const labelled = graphStyle('dark', true, true) as Block[];
    expect(labelled.find((b) => b.selector === 'node')!.style.label).toBe('data(label)');
  });
});
