import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, looksLikeSecret, toForm, validate } from './settings';

const form = (over = {}) => ({ ...toForm(DEFAULT_SETTINGS), ...over });

describe('settings validation', () => {
  it('empty fields mean "use the environment" (null)', () => {
    expect(validate(form())).toEqual({ ok: true, settings: DEFAULT_SETTINGS });
  });
  it('round-trips a full settings object', () => {
    const s = { provider: 'ollama', api_url: 'http://127.0.0.1:11434/v1', model: 'qwen', api_key_env: 'OLLAMA_KEY', protocol_version: 3, strict_json: false, temperature: 0.2, max_tokens: 4096, timeout_sec: 60, theme: 'dark' } as const;
    expect(validate(toForm(s))).toEqual({ ok: true, settings: s });
  });
  it('names every bad field', () => {
    const r = validate(form({ provider: 'gpt', api_url: 'ftp://x', protocol_version: '4', temperature: '3', max_tokens: '1.5', timeout_sec: '0', api_key_env: '1BAD' }));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(Object.keys(r.errors).sort()).toEqual(['api_key_env', 'api_url', 'max_tokens', 'protocol_version', 'provider', 'temperature', 'timeout_sec']);
  });
  it('refuses a pasted key where a variable name belongs', () => {
    const r = validate(form({ api_key_env: 'sk-proj-abcdef0123456789' }));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.api_key_env).toMatch(/NAME of the environment variable/);
    expect(looksLikeSecret('OPENAI_API_KEY')).toBe(false);
    expect(looksLikeSecret('a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8')).toBe(true);
  });
});
