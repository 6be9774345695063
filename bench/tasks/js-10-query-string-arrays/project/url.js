import { parseQueryString, toQueryString } from './query.js';

// Append (or replace) query parameters on a path such as '/search?q=x#top'.
export function withParams(path, params) {
  const hashAt = path.indexOf('#');
  const hash = hashAt === -1 ? '' : path.slice(hashAt);
  const rest = hashAt === -1 ? path : path.slice(0, hashAt);
  const queryAt = rest.indexOf('?');
  const base = queryAt === -1 ? rest : rest.slice(0, queryAt);
  const existing = queryAt === -1 ? {} : parseQueryString(rest.slice(queryAt));
  const query = toQueryString({ ...existing, ...params });
  return `${base}${query ? `?${query}` : ''}${hash}`;
}
