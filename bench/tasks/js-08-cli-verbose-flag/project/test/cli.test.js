import assert from 'node:assert/strict';
import { test } from 'node:test';

import { USAGE, main } from '../cli.js';
import { countLines } from '../count.js';

const FILES = { 'a.txt': 'one\ntwo\n\nfour\n', 'b.txt': 'x\ny' };

function run(argv) {
  const out = [];
  const err = [];
  const code = main(argv, {
    stdout: (line) => out.push(line),
    stderr: (line) => err.push(line),
    readFile: (file) => {
      if (!(file in FILES)) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
      return FILES[file];
    },
  });
  return { code, out, err };
}

test('countLines', () => {
  assert.equal(countLines(''), 0);
  assert.equal(countLines('a\nb'), 2);
  assert.equal(countLines('a\n\nb\n', { skipBlank: true }), 2);
});

test('prints the total', () => {
  assert.deepEqual(run(['a.txt', 'b.txt']), { code: 0, out: ['6 total'], err: [] });
  assert.deepEqual(run(['-b', 'a.txt']).out, ['3 total']);
});

test('--verbose prints each file first', () => {
  assert.deepEqual(run(['--verbose', 'a.txt', 'b.txt']).out, ['4 a.txt', '2 b.txt', '6 total']);
  assert.deepEqual(run(['-v', '-b', 'a.txt']).out, ['3 a.txt', '3 total']);
});

test('usage mentions every option', () => {
  assert.match(USAGE, /--skip-blank/);
  assert.match(USAGE, /-v, --verbose/);
});

test('errors', () => {
  assert.equal(run([]).code, 2);
  assert.equal(run(['--nope', 'a.txt']).code, 2);
  assert.deepEqual(run(['zzz.txt']), { code: 1, out: [], err: ['linecount: zzz.txt: ENOENT'] });
});
