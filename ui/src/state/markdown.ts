// The inline Markdown a model writes in summaries, steps and risks: `code` and **bold**. Anything
// else stays text (no HTML is ever produced from model output, so nothing here can inject).

export type Segment = { kind: 'text' | 'code' | 'strong'; text: string };

/** Split `text` into plain, `code` and **strong** runs; an unclosed marker stays literal. */
export function inlineSegments(text: string): Segment[] {
  const out: Segment[] = [];
  const push = (kind: Segment['kind'], t: string) => {
    if (!t) return;
    const last = out[out.length - 1];
    if (last && last.kind === 'text' && kind === 'text') last.text += t;
    else out.push({ kind, text: t });
  };
  let i = 0;
  while (i < text.length) {
    if (text[i] === '`') {
      // A run of n backticks closes at the next run of exactly n (CommonMark code spans).
      let n = 1;
      while (text[i + n] === '`') n++;
      const fence = '`'.repeat(n);
      let j = text.indexOf(fence, i + n);
      while (j !== -1 && text[j + n] === '`') {
        let k = j;
        while (text[k] === '`') k++;
        j = text.indexOf(fence, k);
      }
      if (j === -1) {
        push('text', fence);
        i += n;
        continue;
      }
      let code = text.slice(i + n, j);
      if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ') && code.trim()) code = code.slice(1, -1);
      push('code', code);
      i = j + n;
    } else if (text.startsWith('**', i)) {
      const j = text.indexOf('**', i + 2);
      if (j === -1 || j === i + 2) {
        push('text', '**');
        i += 2;
        continue;
      }
      push('strong', text.slice(i + 2, j));
      i = j + 2;
    } else {
      let j = i;
      while (j < text.length && text[j] !== '`' && !text.startsWith('**', j)) j++;
      push('text', text.slice(i, j));
      i = j;
    }
  }
  return out;
}
