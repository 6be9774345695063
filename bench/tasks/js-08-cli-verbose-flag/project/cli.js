#!/usr/bin/env node
// linecount FILE... — print the total number of lines in the given files.

import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import { countLines } from './count.js';

export const USAGE = `usage: linecount [options] FILE...

options:
  -b, --skip-blank  do not count blank lines
  -h, --help        show this help`;

// Runs the command with injected I/O so it can be tested without a terminal or real files.
// Returns the process exit code.
export function main(argv, io) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'skip-blank': { type: 'boolean', short: 'b', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    io.stderr(`linecount: ${error.message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  if (positionals.length === 0) {
    io.stderr(`linecount: no files given\n${USAGE}`);
    return 2;
  }
  let total = 0;
  for (const file of positionals) {
    let text;
    try {
      text = io.readFile(file);
    } catch (error) {
      io.stderr(`linecount: ${file}: ${error.code ?? error.message}`);
      return 1;
    }
    total += countLines(text, { skipBlank: values['skip-blank'] });
  }
  io.stdout(`${total} total`);
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = main(process.argv.slice(2), {
    stdout: (line) => console.log(line),
    stderr: (line) => console.error(line),
    readFile: (file) => readFileSync(file, 'utf8'),
  });
}
