import { describe, expect, it, vi } from 'vitest';
import { ApiError, createTransport, takeToken, toApiError, type Env } from './transport';

function env(over: Partial<Env> = {}): Env & { stored: Map<string, string>; urls: string[] } {
  const stored = new Map<string, string>();
  const urls: string[] = [];
  return {
    location: { hash: '', pathname: '/', search: '' },
    storage: { getItem: (k) => stored.get(k) ?? null, setItem: (k, v) => void stored.set(k, v) },
    replaceUrl: (u) => void urls.push(u),
    fetch: vi.fn() as unknown as typeof fetch,
    stored,
    urls,
    ...over,
  };
}

describe('token', () => {
  it('moves #token from the address into sessionStorage and strips the address', () => {
    const e = env({ location: { hash: '#token=abc123', pathname: '/app/', search: '?x=1' } });
    expect(takeToken(e)).toBe('abc123');
    expect(e.stored.get('papayu.token')).toBe('abc123');
    expect(e.urls).toEqual(['/app/?x=1']);
  });
  it('falls back to the stored token after a reload', () => {
    const e = env();
    e.stored.set('papayu.token', 'kept');
    expect(takeToken(e)).toBe('kept');
    expect(e.urls).toEqual([]);
  });
});

describe('http transport', () => {
  it('POSTs JSON args to /api/{cmd} with the bearer token and returns the result', async () => {
    const fetch = vi.fn(async () => new Response(JSON.stringify({ ok: 1 }), { status: 200 }));
    const e = env({ location: { hash: '#token=t0k', pathname: '/', search: '' }, fetch: fetch as unknown as typeof globalThis.fetch });
    const t = createTransport(e);
    expect(t.kind).toBe('http');
    await expect(t.call('history', { project: '/p' })).resolves.toEqual({ ok: 1 });
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('/api/history');
    expect(init.method).toBe('POST');
    expect((init.headers as Record<string, string>).Authorization).toBe('Bearer t0k');
    expect(JSON.parse(init.body as string)).toEqual({ project: '/p' });
  });
  it('throws a typed ApiError with every violation on an error body', async () => {
    const body = { code: 'ERR_INVALID_PATH', message: 'bad', violations: [{ code: 'ERR_INVALID_PATH', message: 'abs', path: '/etc/x' }] };
    const fetch = vi.fn(async () => new Response(JSON.stringify(body), { status: 422 }));
    const t = createTransport(env({ fetch: fetch as unknown as typeof globalThis.fetch }));
    const err = await t.call('start_plan').catch((x: unknown) => x);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('ERR_INVALID_PATH');
    expect((err as ApiError).violations).toHaveLength(1);
    expect((err as ApiError).status).toBe(422);
  });
  it('maps a 403 without a JSON body to ERR_UI_FORBIDDEN with a hint', async () => {
    const fetch = vi.fn(async () => new Response('nope', { status: 403 }));
    const t = createTransport(env({ fetch: fetch as unknown as typeof globalThis.fetch }));
    const err = (await t.call('app_info').catch((x: unknown) => x)) as ApiError;
    expect(err.code).toBe('ERR_UI_FORBIDDEN');
    expect(err.message).toMatch(/token/);
  });
  it('reports a network failure as an ApiError', async () => {
    const fetch = vi.fn(async () => {
      throw new TypeError('Failed to fetch');
    });
    const t = createTransport(env({ fetch: fetch as unknown as typeof globalThis.fetch }));
    const err = (await t.call('app_info').catch((x: unknown) => x)) as ApiError;
    expect(err.code).toBe('ERR_UI_NETWORK');
  });
});

describe('tauri transport', () => {
  it('uses invoke(cmd, { args }) when __TAURI_INTERNALS__ exists', async () => {
    const invoke = vi.fn(async () => 'r');
    const t = createTransport(env({ tauri: { invoke } }));
    expect(t.kind).toBe('tauri');
    await expect(t.call('undo', { project: '/p', force: false })).resolves.toBe('r');
    expect(invoke).toHaveBeenCalledWith('undo', { args: { project: '/p', force: false } });
  });
  it('turns a rejected error object (or JSON string) into ApiError', async () => {
    const t = createTransport(env({ tauri: { invoke: async () => Promise.reject({ code: 'ERR_UNDO_CONFLICT', message: 'changed' }) } }));
    const err = (await t.call('undo').catch((x: unknown) => x)) as ApiError;
    expect(err.code).toBe('ERR_UNDO_CONFLICT');
    expect(toApiError('{"code":"ERR_LOCKED","message":"m"}').code).toBe('ERR_LOCKED');
    expect(toApiError('boom').code).toBe('ERR_INTERNAL');
  });
});
