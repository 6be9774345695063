import { useEffect, useState } from 'react';
import { api } from '../api';
import { PROVIDERS, toForm, validate, type FieldErrors, type SettingsForm } from '../state/settings';
import { toApiError, type ApiError } from '../transport';
import type { AppInfo, ConnectionTest, Settings } from '../types';
import { ErrorBox } from './common';
import { t } from '../i18n';

export function SettingsView({ settings, info, onSaved }: { settings: Settings; info: AppInfo | null; onSaved: (s: Settings) => void }) {
  const [form, setForm] = useState<SettingsForm>(() => toForm(settings));
  const [errors, setErrors] = useState<FieldErrors>({});
  const [apiErr, setApiErr] = useState<ApiError | null>(null);
  const [saved, setSaved] = useState(false);
  const [test, setTest] = useState<{ running: boolean; result: ConnectionTest | null }>({ running: false, result: null });
  useEffect(() => setForm(toForm(settings)), [settings]);
  const set = <K extends keyof SettingsForm>(k: K, v: SettingsForm[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
    setSaved(false);
    setTest({ running: false, result: null });
  };
  const env = info?.env;
  // The layered configuration, as in the CLI: a PAPAYU_* variable wins over a saved field.
  const envWins = (variable: string, value: string | number | null | undefined) =>
    value !== null && value !== undefined && value !== '' ? t('settings.env.wins', { variable, value }) : '';
  const field = (k: keyof SettingsForm, label: string, hint: string, input: React.ReactNode) => (
    <>
      <label htmlFor={`s-${k}`}>{label}</label>
      {input}
      {errors[k] ? (
        <div className="err" id={`s-${k}-err`} role="alert">
          {errors[k]}
        </div>
      ) : hint ? (
        <div className="hint">{hint}</div>
      ) : null}
    </>
  );
  const text = (k: keyof SettingsForm, placeholder: string) => (
    <input id={`s-${k}`} value={form[k] as string} placeholder={placeholder} aria-invalid={!!errors[k]} aria-describedby={errors[k] ? `s-${k}-err` : undefined} onChange={(e) => set(k, e.target.value as never)} />
  );
  const save = async () => {
    const r = validate(form);
    if (!r.ok) {
      setErrors(r.errors);
      return;
    }
    setErrors({});
    try {
      const s = await api.saveSettings(r.settings);
      setApiErr(null);
      setSaved(true);
      onSaved(s);
    } catch (e) {
      setApiErr(toApiError(e));
    }
  };
  // The form as it is now (unsaved), sent to the provider as `papayu doctor` would.
  const testConnection = async () => {
    const r = validate(form);
    if (!r.ok) {
      setErrors(r.errors);
      return;
    }
    setErrors({});
    setTest({ running: true, result: null });
    try {
      setTest({ running: false, result: await api.testConnection(r.settings) });
      setApiErr(null);
    } catch (e) {
      setTest({ running: false, result: null });
      setApiErr(toApiError(e));
    }
  };
  return (
    <section className="panel" aria-labelledby="set-h">
      <h2 id="set-h">{t('settings.title')}</h2>
      <p className="muted">
        {t('settings.saved.to', { file: info ? `${info.config_dir}/papayu/config.toml` : t('settings.your.config') })} <code>papayu config</code>
        {t('settings.intro.mid')} <code>.papa-yu/config.toml</code> {t('settings.intro.and')}{' '}
        <code>PAPAYU_*</code> {t('settings.intro.end')}
      </p>
      <form
        className="settings"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        {field(
          'provider',
          t('settings.provider'),
          envWins('PAPAYU_LLM_PROVIDER', env?.provider),
          <select id="s-provider" value={form.provider} onChange={(e) => set('provider', e.target.value)}>
            <option value="">{t('settings.env.default')}</option>
            {PROVIDERS.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>,
        )}
        {field('api_url', t('settings.api.url'), envWins('PAPAYU_LLM_API_URL', env?.api_url), text('api_url', env?.api_url ?? 'https://api.openai.com/v1'))}
        {field('model', t('settings.model'), envWins('PAPAYU_LLM_MODEL', env?.model), text('model', env?.model ?? 'gpt-4o-mini'))}
        {field('api_key_env', t('settings.api.key'), t('settings.api.key.hint'), text('api_key_env', 'OPENAI_API_KEY'))}
        {field(
          'protocol_version',
          t('settings.protocol'),
          '',
          <select id="s-protocol_version" value={form.protocol_version} onChange={(e) => set('protocol_version', e.target.value)}>
            <option value="">{t('settings.env.default')}</option>
            <option value="1">v1</option>
            <option value="2">v2</option>
            <option value="3">v3</option>
          </select>,
        )}
        {field(
          'strict_json',
          t('settings.strict'),
          t('settings.strict.hint'),
          <select id="s-strict_json" value={form.strict_json} onChange={(e) => set('strict_json', e.target.value as SettingsForm['strict_json'])}>
            <option value="default">{t('settings.env.default')}</option>
            <option value="on">{t('settings.on')}</option>
            <option value="off">{t('settings.off')}</option>
          </select>,
        )}
        {field('temperature', t('settings.temperature'), t('settings.temperature.hint'), text('temperature', ''))}
        {field('max_tokens', t('settings.max.tokens'), '', text('max_tokens', ''))}
        {field('timeout_sec', t('settings.timeout'), '', text('timeout_sec', ''))}
        {field(
          'theme',
          t('settings.theme'),
          '',
          <select id="s-theme" value={form.theme} onChange={(e) => set('theme', e.target.value as SettingsForm['theme'])}>
            <option value="system">{t('theme.system')}</option>
            <option value="light">{t('theme.light')}</option>
            <option value="dark">{t('theme.dark')}</option>
          </select>,
        )}
        <span />
        <div className="row">
          <button type="submit" className="primary">
            {t('settings.save')}
          </button>
          <button type="button" onClick={() => void testConnection()} disabled={test.running}>
            {test.running ? t('settings.testing') : t('settings.test')}
          </button>
          <span role="status" className="add">
            {saved ? t('settings.saved') : ''}
          </span>
        </div>
      </form>
      <ConnectionResult result={test.result} />
      {apiErr && <ErrorBox error={apiErr} title={t('settings.not.saved')} />}
      {info && (
        <p data-testid="research-status" style={{ marginTop: 12, fontSize: 13.5 }}>
          {t('settings.research')}{' '}
          {info.research.on ? (
            <span className="add">{t('settings.research.on', { backend: info.research.backend ?? '' })}</span>
          ) : (
            <>
              <strong>{t('settings.research.off')}</strong> — {info.research.problem} {t('settings.research.where')}
            </>
          )}
        </p>
      )}
      {info && (
        <p className="muted" style={{ marginTop: 12, fontSize: 13 }}>
          {t('settings.footer', { version: info.version, transport: info.transport })} <code>{info.config_dir}</code>
        </p>
      )}
    </section>
  );
}

/** What "Test connection" found: the provider and its latency, or its error with the code. */
function ConnectionResult({ result }: { result: ConnectionTest | null }) {
  if (!result) return null;
  const p = result.provider;
  const who = p ? `${t('settings.via', { model: p.model, kind: p.kind })}${p.endpoint ? ` (${p.endpoint})` : ''}` : t('settings.the.provider');
  if (result.ok) {
    return (
      <p className="add" data-testid="connection-ok" role="status">
        {t('settings.connected', { who })}
        {result.latency_ms !== null ? t('settings.answered', { ms: Math.round(result.latency_ms) }) : ''}.
      </p>
    );
  }
  const error = toApiError(result.error ?? { code: 'ERR_LLM_CONFIG', message: t('settings.no.provider') });
  return (
    <div data-testid="connection-failed">
      <ErrorBox error={error} title={t('settings.cannot.reach', { who })} />
    </div>
  );
}
