import { describe, expect, it } from 'vitest';
import { inlineSegments } from './markdown';

describe('inline markdown', () => {
  it('renders backtick spans as code and double stars as strong', () => {
    expect(inlineSegments('make `answer()` return **42** now')).toEqual([
      { kind: 'text', text: 'make ' },
      { kind: 'code', text: 'answer()' },
      { kind: 'text', text: ' return ' },
      { kind: 'strong', text: '42' },
      { kind: 'text', text: ' now' },
    ]);
  });
  it('keeps double-backtick spans with a backtick inside, trimming one space each side', () => {
    expect(inlineSegments('use `` `x` `` here')).toEqual([
      { kind: 'text', text: 'use ' },
      { kind: 'code', text: '`x`' },
      { kind: 'text', text: ' here' },
    ]);
  });
  it('leaves unclosed markers and plain text as they are', () => {
    expect(inlineSegments('a ` b ** c')).toEqual([{ kind: 'text', text: 'a ` b ** c' }]);
    expect(inlineSegments('')).toEqual([]);
    expect(inlineSegments('<b>not html</b>')).toEqual([{ kind: 'text', text: '<b>not html</b>' }]);
  });
});
