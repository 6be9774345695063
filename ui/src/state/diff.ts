// Unified diffs (FileDiff.diff) → rows for rendering, with line numbers and +/- counts.
export type DiffLineKind = 'add' | 'del' | 'ctx' | 'hunk' | 'meta';

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
  oldNo: number | null;
  newNo: number | null;
}

export interface ParsedDiff {
  lines: DiffLine[];
  added: number;
  removed: number;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

export function parseDiff(diff: string): ParsedDiff {
  const lines: DiffLine[] = [];
  let added = 0;
  let removed = 0;
  let oldNo = 0;
  let newNo = 0;
  let inHunk = false;
  const raw = diff.split('\n');
  if (raw.length && raw[raw.length - 1] === '') raw.pop();
  for (const text of raw) {
    const h = HUNK.exec(text);
    if (h) {
      oldNo = Number(h[1]);
      newNo = Number(h[2]);
      inHunk = true;
      lines.push({ kind: 'hunk', text, oldNo: null, newNo: null });
    } else if (!inHunk || text.startsWith('--- ') || text.startsWith('+++ ')) {
      if (text.startsWith('--- ') || text.startsWith('+++ ')) inHunk = false;
      lines.push({ kind: 'meta', text, oldNo: null, newNo: null });
    } else if (text.startsWith('+')) {
      added++;
      lines.push({ kind: 'add', text: text.slice(1), oldNo: null, newNo: newNo++ });
    } else if (text.startsWith('-')) {
      removed++;
      lines.push({ kind: 'del', text: text.slice(1), oldNo: oldNo++, newNo: null });
    } else if (text.startsWith('\\')) {
      lines.push({ kind: 'meta', text, oldNo: null, newNo: null });
    } else {
      lines.push({ kind: 'ctx', text: text.startsWith(' ') ? text.slice(1) : text, oldNo: oldNo++, newNo: newNo++ });
    }
  }
  return { lines, added, removed };
}

/** Count +/- lines without building rows (for collapsed file headers). */
export function diffStat(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  let inHunk = false;
  let start = 0;
  while (start <= diff.length) {
    let end = diff.indexOf('\n', start);
    if (end < 0) end = diff.length;
    const c = diff.charCodeAt(start);
    if (c === 64 /* @ */ && diff.startsWith('@@', start)) inHunk = true;
    else if (diff.startsWith('--- ', start) || diff.startsWith('+++ ', start)) inHunk = false;
    else if (inHunk && c === 43 /* + */) added++;
    else if (inHunk && c === 45 /* - */) removed++;
    start = end + 1;
  }
  return { added, removed };
}
