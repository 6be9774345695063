// The ONE module that talks to the backend (docs/UI-API.md "Transports"): Tauri `invoke` when
// `window.__TAURI_INTERNALS__` exists, otherwise `POST /api/{command}` with the per-launch token.
import type { ApiErrorBody, Violation } from './types';

/** A backend error: a stable papayu error code, the actionable message, every violation. */
export class ApiError extends Error implements ApiErrorBody {
  readonly code: string;
  readonly violations: Violation[];
  readonly status: number | undefined;
  constructor(code: string, message: string, violations: Violation[] = [], status?: number) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.violations = violations;
    this.status = status;
  }
}

/** Turn anything a transport rejected with into an [`ApiError`]. */
export function toApiError(e: unknown, status?: number): ApiError {
  if (e instanceof ApiError) return e;
  if (e && typeof e === 'object' && typeof (e as ApiErrorBody).code === 'string') {
    const b = e as ApiErrorBody;
    const violations = Array.isArray(b.violations) ? b.violations : [];
    return new ApiError(b.code, String(b.message ?? b.code), violations, status);
  }
  if (typeof e === 'string') {
    // Tauri may reject with a JSON string.
    try {
      const parsed: unknown = JSON.parse(e);
      if (parsed && typeof parsed === 'object') return toApiError(parsed, status);
    } catch {
      /* plain text */
    }
    return new ApiError('ERR_INTERNAL', e, [], status);
  }
  const message = e instanceof Error ? e.message : String(e);
  return new ApiError('ERR_INTERNAL', message, [], status);
}

interface TauriInternals {
  invoke: (cmd: string, args?: Record<string, unknown>) => Promise<unknown>;
}

/** What the transport needs from the page (injectable for tests). */
export interface Env {
  tauri?: TauriInternals;
  location: { hash: string; pathname: string; search: string; origin?: string };
  storage: Pick<Storage, 'getItem' | 'setItem'>;
  replaceUrl: (url: string) => void;
  fetch: typeof fetch;
  baseUrl?: string;
}

export const TOKEN_KEY = 'papayu.token';

/** Read `#token=…` from the address, keep it in sessionStorage, remove it from the address. */
export function takeToken(env: Env): string | null {
  const m = /(?:^#|&)token=([^&]+)/.exec(env.location.hash);
  if (m) {
    const token = decodeURIComponent(m[1]);
    env.storage.setItem(TOKEN_KEY, token);
    env.replaceUrl(env.location.pathname + env.location.search);
    return token;
  }
  return env.storage.getItem(TOKEN_KEY);
}

export type Call = <T>(command: string, args?: Record<string, unknown>) => Promise<T>;

export interface Transport {
  kind: 'tauri' | 'http';
  call: Call;
}

export function createTransport(env: Env): Transport {
  if (env.tauri && typeof env.tauri.invoke === 'function') {
    const tauri = env.tauri;
    return {
      kind: 'tauri',
      call: async <T,>(command: string, args: Record<string, unknown> = {}) => {
        try {
          return (await tauri.invoke(command, { args })) as T;
        } catch (e) {
          throw toApiError(e);
        }
      },
    };
  }
  const token = takeToken(env);
  const base = env.baseUrl ?? '';
  return {
    kind: 'http',
    call: async <T,>(command: string, args: Record<string, unknown> = {}) => {
      let res: Response;
      try {
        res = await env.fetch(`${base}/api/${encodeURIComponent(command)}`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            ...(token ? { Authorization: `Bearer ${token}` } : {}),
          },
          body: JSON.stringify(args),
        });
      } catch (e) {
        throw new ApiError(
          'ERR_UI_NETWORK',
          `Cannot reach the papayu server (${e instanceof Error ? e.message : String(e)}). Is \`papayu ui\` still running?`,
        );
      }
      const text = await res.text();
      let body: unknown = null;
      if (text) {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      if (!res.ok) {
        if (body && typeof body === 'object') throw toApiError(body, res.status);
        const hint =
          res.status === 403 || res.status === 401
            ? ' Open the URL `papayu ui` printed (it carries the session token).'
            : '';
        throw new ApiError(
          res.status === 403 || res.status === 401 ? 'ERR_UI_FORBIDDEN' : 'ERR_INTERNAL',
          `HTTP ${res.status}${typeof body === 'string' && body ? `: ${body}` : ''}.${hint}`,
          [],
          res.status,
        );
      }
      return body as T;
    },
  };
}

let current: Transport | null = null;

/** The transport of this page (created on first use). */
export function transport(): Transport {
  if (!current) {
    const w = window as unknown as { __TAURI_INTERNALS__?: TauriInternals };
    current = createTransport({
      tauri: w.__TAURI_INTERNALS__,
      location: window.location,
      storage: window.sessionStorage,
      replaceUrl: (url) => window.history.replaceState(null, '', url),
      fetch: window.fetch.bind(window),
    });
  }
  return current;
}

/** Replace the transport (dev fixture backend, tests). */
export function setTransport(t: Transport): void {
  current = t;
}

export const call: Call = (command, args) => transport().call(command, args);
