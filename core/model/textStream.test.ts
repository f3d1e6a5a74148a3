import { describe, expect, it } from 'vitest';
import { textStream } from './textStream.ts';

describe('textStream', () => {
  const collect = () => {
    const pieces: string[] = [];
    return { pieces, stream: textStream((p) => pieces.push(p)) };
  };

  it('passes pieces on in order, holding trailing whitespace until text follows', () => {
    const { pieces, stream } = collect();
    for (const p of ['{"a"', ': ', '1', '}', '\n', ' ']) stream.push(p);
    expect(pieces).toEqual(['{"a"', ':', ' 1', '}']);
    stream.end('{"a": 1}'); // the runtime trimmed the whitespace off the end
    expect(pieces.join('')).toBe('{"a": 1}');
  });

  it('end sends what the final text has beyond the pieces (held whitespace that was kept, or all of it)', () => {
    const a = collect();
    a.stream.push('one ');
    a.stream.end('one two');
    expect(a.pieces).toEqual(['one', ' two']);
    const b = collect();
    b.stream.end('whole text');
    expect(b.pieces).toEqual(['whole text']);
    b.stream.push('late');
    b.stream.end('again');
    expect(b.pieces).toEqual(['whole text']);
  });

  it('sends nothing more when the final text disagrees with the pieces, and survives a hook that throws', () => {
    const a = collect();
    a.stream.push('abc');
    a.stream.end('xyz');
    expect(a.pieces).toEqual(['abc']);
    const b = textStream(() => {
      throw new Error('hook');
    });
    b.push('x');
    b.end('xy');
    expect(b.sent).toBe('xy');
  });
});
