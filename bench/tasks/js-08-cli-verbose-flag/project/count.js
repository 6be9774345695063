// Line counting that agrees with `wc -l` plus one for a last line without a newline.

export function countLines(text, { skipBlank = false } = {}) {
  if (text === '') {
    return 0;
  }
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') {
    lines.pop();
  }
  return skipBlank ? lines.filter((line) => line.trim() !== '').length : lines.length;
}
