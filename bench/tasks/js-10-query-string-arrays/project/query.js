// Build and parse URL query strings. Keys are emitted in insertion order; null and undefined
// values are left out; everything is percent-encoded.

const encode = (value) => encodeURIComponent(String(value));
const decode = (text) => decodeURIComponent(text.replace(/\+/g, ' '));

export function toQueryString(params) {
  const parts = [];
  for (const [key, value] of Object.entries(params)) {
    if (value === null || value === undefined) {
      continue;
    }
    parts.push(`${encode(key)}=${encode(value)}`);
  }
  return parts.join('&');
}

export function parseQueryString(query) {
  const params = {};
  const text = query.startsWith('?') ? query.slice(1) : query;
  for (const pair of text.split('&')) {
    if (pair === '') {
      continue;
    }
    const eq = pair.indexOf('=');
    const key = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
    params[key] = value;
  }
  return params;
}
