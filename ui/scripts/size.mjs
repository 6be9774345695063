// Bundle budget (issue #7): the UI's built assets (the committed bundle papayu-app embeds), gzipped,
// must stay <= 500 KB.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET = 500 * 1024;
const dist = new URL('../../crates/papayu-app/ui-dist/', import.meta.url).pathname;

function walk(dir) {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

let files;
try {
  files = walk(dist);
} catch {
  console.error('crates/papayu-app/ui-dist is missing: run `npm run build` first');
  process.exit(1);
}
let raw = 0;
let gz = 0;
for (const f of files) {
  const bytes = readFileSync(f);
  const z = gzipSync(bytes, { level: 9 }).length;
  raw += bytes.length;
  gz += z;
  console.log(`${(z / 1024).toFixed(1).padStart(8)} KB gz  ${(bytes.length / 1024).toFixed(1).padStart(8)} KB  ${f.slice(dist.length)}`);
}
console.log(`total: ${(gz / 1024).toFixed(1)} KB gzipped (${(raw / 1024).toFixed(1)} KB raw), budget ${BUDGET / 1024} KB`);
if (gz > BUDGET) {
  console.error(`over budget by ${((gz - BUDGET) / 1024).toFixed(1)} KB`);
  process.exit(1);
}
