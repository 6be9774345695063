// Parse and compare MAJOR.MINOR.PATCH versions (an optional leading "v" is accepted).

const VERSION = /^v?(\d+)\.(\d+)\.(\d+)$/;

export function parseVersion(text) {
  const match = VERSION.exec(text.trim());
  if (!match) {
    throw new Error(`not a version: ${JSON.stringify(text)}`);
  }
  return match.slice(1, 4);
}

// Negative when a < b, zero when equal, positive when a > b.
export function compareVersions(a, b) {
  const left = parseVersion(a);
  const right = parseVersion(b);
  for (let i = 0; i < 3; i++) {
    if (left[i] !== right[i]) {
      return left[i] < right[i] ? -1 : 1;
    }
  }
  return 0;
}

export function latest(versions) {
  if (versions.length === 0) {
    return undefined;
  }
  return versions.reduce((best, v) => (compareVersions(v, best) > 0 ? v : best));
}

export function satisfiesCaret(version, base) {
  const [major] = parseVersion(version);
  const [baseMajor] = parseVersion(base);
  return major === baseMajor && compareVersions(version, base) >= 0;
}
