// POSIX path helpers that work on strings only (no file system access).

export function normalize(path) {
  if (path === '') {
    return '.';
  }
  const absolute = path.startsWith('/');
  const out = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') {
      continue;
    }
    if (part === '..') {
      out.pop();
      continue;
    }
    out.push(part);
  }
  const joined = out.join('/');
  if (absolute) {
    return `/${joined}`;
  }
  return joined || '.';
}

export function join(...parts) {
  return normalize(parts.filter((p) => p !== '').join('/'));
}

export function dirname(path) {
  const normal = normalize(path);
  const cut = normal.lastIndexOf('/');
  if (cut === -1) return '.';
  if (cut === 0) return '/';
  return normal.slice(0, cut);
}

export function extname(path) {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot) : '';
}

export function relative(from, to) {
  const a = normalize(from).split('/').filter(Boolean);
  const b = normalize(to).split('/').filter(Boolean);
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  const up = a.slice(common).map(() => '..');
  return [...up, ...b.slice(common)].join('/') || '.';
}
