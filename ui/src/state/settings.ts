// The settings form: text fields → a `Settings` object the backend accepts, or field errors.
// API keys are never entered here: `api_key_env` is the NAME of an environment variable.
import { t } from '../i18n';
import type { Provider, Settings } from '../types';

export const PROVIDERS: Provider[] = ['openai', 'openai-compatible', 'ollama', 'anthropic'];

export interface SettingsForm {
  provider: string;
  api_url: string;
  model: string;
  api_key_env: string;
  protocol_version: string;
  strict_json: 'default' | 'on' | 'off';
  temperature: string;
  max_tokens: string;
  timeout_sec: string;
  theme: Settings['theme'];
}

export const DEFAULT_SETTINGS: Settings = {
  provider: null, api_url: null, model: null, api_key_env: null, protocol_version: null,
  strict_json: null, temperature: null, max_tokens: null, timeout_sec: null, theme: 'system',
};

export function toForm(s: Settings): SettingsForm {
  const str = (v: unknown) => (v === null || v === undefined ? '' : String(v));
  return {
    provider: s.provider ?? '',
    api_url: str(s.api_url),
    model: str(s.model),
    api_key_env: str(s.api_key_env),
    protocol_version: str(s.protocol_version),
    strict_json: s.strict_json === null || s.strict_json === undefined ? 'default' : s.strict_json ? 'on' : 'off',
    temperature: str(s.temperature),
    max_tokens: str(s.max_tokens),
    timeout_sec: str(s.timeout_sec),
    theme: s.theme ?? 'system',
  };
}

export type FieldErrors = Partial<Record<keyof SettingsForm, string>>;

/** Looks like a secret rather than a variable name (someone pasted the key itself). */
export function looksLikeSecret(v: string): boolean {
  return /^(sk-|sk_|xox|ghp_|gho_|AIza|ant-)/i.test(v) || (v.length >= 32 && /[a-z]/.test(v) && /\d/.test(v) && !/_/.test(v));
}

export function validate(f: SettingsForm): { ok: true; settings: Settings } | { ok: false; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const tr = (v: string) => v.trim();
  if (tr(f.provider) && !PROVIDERS.includes(tr(f.provider) as Provider)) errors.provider = t('form.provider', { list: PROVIDERS.join(', ') });
  if (tr(f.api_url)) {
    try {
      const u = new URL(tr(f.api_url));
      if (u.protocol !== 'http:' && u.protocol !== 'https:') errors.api_url = t('form.url.scheme');
    } catch {
      errors.api_url = t('form.url');
    }
  }
  const keyEnv = tr(f.api_key_env);
  if (keyEnv) {
    if (looksLikeSecret(keyEnv)) errors.api_key_env = t('form.secret');
    else if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(keyEnv)) errors.api_key_env = t('form.env.name');
  }
  let protocol: Settings['protocol_version'] = null;
  if (tr(f.protocol_version)) {
    const n = Number(tr(f.protocol_version));
    if (n === 1 || n === 2 || n === 3) protocol = n;
    else errors.protocol_version = t('form.protocol');
  }
  const num = (key: 'temperature' | 'max_tokens' | 'timeout_sec', min: number, max: number, int: boolean, what: string): number | null => {
    const v = tr(f[key]);
    if (!v) return null;
    const n = Number(v);
    if (!Number.isFinite(n) || (int && !Number.isInteger(n)) || n < min || n > max) {
      errors[key] = t(int ? 'form.whole' : 'form.number', { what, min, max });
      return null;
    }
    return n;
  };
  const temperature = num('temperature', 0, 2, false, t('settings.temperature'));
  const max_tokens = num('max_tokens', 1, 1_000_000, true, t('settings.max.tokens'));
  const timeout_sec = num('timeout_sec', 1, 3600, true, t('form.timeout'));
  if (Object.keys(errors).length) return { ok: false, errors };
  return {
    ok: true,
    settings: {
      provider: (tr(f.provider) || null) as Provider | null,
      api_url: tr(f.api_url) || null,
      model: tr(f.model) || null,
      api_key_env: keyEnv || null,
      protocol_version: protocol,
      strict_json: f.strict_json === 'default' ? null : f.strict_json === 'on',
      temperature,
      max_tokens,
      timeout_sec,
      theme: f.theme,
    },
  };
}
