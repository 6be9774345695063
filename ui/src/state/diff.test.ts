import { describe, expect, it } from 'vitest';
import { diffStat, parseDiff } from './diff';

const PATCH = '--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n pub fn answer() -> u32 {\n-    41\n+    42\n }\n';

describe('diff parsing', () => {
  it('classifies lines and numbers them old/new', () => {
    const d = parseDiff(PATCH);
    expect(d.lines.map((l) => l.kind)).toEqual(['meta', 'meta', 'hunk', 'ctx', 'del', 'add', 'ctx']);
    expect(d.lines[4]).toEqual({ kind: 'del', text: '    41', oldNo: 2, newNo: null });
    expect(d.lines[5]).toEqual({ kind: 'add', text: '    42', oldNo: null, newNo: 2 });
    expect(d.lines[6]).toMatchObject({ oldNo: 3, newNo: 3 });
    expect([d.added, d.removed]).toEqual([1, 1]);
  });
  it('does not count the ---/+++ headers as changes, and handles several hunks', () => {
    const two = PATCH + '@@ -10,2 +10,3 @@\n x\n+y\n z\n\\ No newline at end of file\n';
    const d = parseDiff(two);
    expect([d.added, d.removed]).toEqual([2, 1]);
    expect(d.lines.find((l) => l.text === 'y')).toMatchObject({ newNo: 11 });
    expect(d.lines.at(-1)!.kind).toBe('meta');
    expect(diffStat(two)).toEqual({ added: 2, removed: 1 });
  });
  it('a new file diff counts every line as added', () => {
    const d = '--- /dev/null\n+++ b/n.md\n@@ -0,0 +1,2 @@\n+# N\n+\n';
    expect(diffStat(d)).toEqual({ added: 2, removed: 0 });
    expect(parseDiff('').lines).toEqual([]);
  });
});
