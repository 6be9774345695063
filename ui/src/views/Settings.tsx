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
    value !== null && value !== undefined && value !== '' ? `${variable}=${value} is set in the environment: it wins over this field.` : '';
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
        Saved to {info ? `${info.config_dir}/papayu/config.toml` : 'your config.toml'}, the file <code>papayu config</code> changes. As in the CLI, the project&apos;s <code>.papa-yu/config.toml</code> and <code>PAPAYU_*</code> environment variables win over these fields; an empty field leaves them (or the default). API keys are never stored: name the environment variable that holds yours.
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
          'Provider',
          envWins('PAPAYU_LLM_PROVIDER', env?.provider),
          <select id="s-provider" value={form.provider} onChange={(e) => set('provider', e.target.value)}>
            <option value="">(environment / default)</option>
            {PROVIDERS.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>,
        )}
        {field('api_url', 'API URL', envWins('PAPAYU_LLM_API_URL', env?.api_url), text('api_url', env?.api_url ?? 'https://api.openai.com/v1'))}
        {field('model', 'Model', envWins('PAPAYU_LLM_MODEL', env?.model), text('model', env?.model ?? 'gpt-4o-mini'))}
        {field('api_key_env', 'API key variable', 'The NAME of an environment variable, e.g. OPENAI_API_KEY.', text('api_key_env', 'OPENAI_API_KEY'))}
        {field(
          'protocol_version',
          'Protocol version',
          '',
          <select id="s-protocol_version" value={form.protocol_version} onChange={(e) => set('protocol_version', e.target.value)}>
            <option value="">(environment / default)</option>
            <option value="1">v1</option>
            <option value="2">v2</option>
            <option value="3">v3</option>
          </select>,
        )}
        {field(
          'strict_json',
          'Strict JSON',
          'Ask the provider for schema-constrained output (response_format json_schema).',
          <select id="s-strict_json" value={form.strict_json} onChange={(e) => set('strict_json', e.target.value as SettingsForm['strict_json'])}>
            <option value="default">(environment / default)</option>
            <option value="on">on</option>
            <option value="off">off</option>
          </select>,
        )}
        {field('temperature', 'Temperature', '0 to 2', text('temperature', ''))}
        {field('max_tokens', 'Max tokens', '', text('max_tokens', ''))}
        {field('timeout_sec', 'Timeout (s)', '', text('timeout_sec', ''))}
        {field(
          'theme',
          'Theme',
          '',
          <select id="s-theme" value={form.theme} onChange={(e) => set('theme', e.target.value as SettingsForm['theme'])}>
            <option value="system">system</option>
            <option value="light">light</option>
            <option value="dark">dark</option>
          </select>,
        )}
        <span />
        <div className="row">
          <button type="submit" className="primary">
            Save settings
          </button>
          <button type="button" onClick={() => void testConnection()} disabled={test.running}>
            {test.running ? 'Testing…' : 'Test connection'}
          </button>
          <span role="status" className="add">
            {saved ? 'Saved.' : ''}
          </span>
        </div>
      </form>
      <ConnectionResult result={test.result} />
      {apiErr && <ErrorBox error={apiErr} title="Not saved" />}
      {info && (
        <p data-testid="research-status" style={{ marginTop: 12, fontSize: 13.5 }}>
          Online research (Trends, web_search):{' '}
          {info.research.on ? (
            <span className="add">on ({info.research.backend})</span>
          ) : (
            <>
              <strong>off</strong> — {info.research.problem} (in the environment papayu starts with; see docs/INTEGRATIONS.md)
            </>
          )}
        </p>
      )}
      {info && (
        <p className="muted" style={{ marginTop: 12, fontSize: 13 }}>
          papayu {info.version} · transport {info.transport} · config <code>{info.config_dir}</code>
        </p>
      )}
    </section>
  );
}

/** What "Test connection" found: the provider and its latency, or its error with the code. */
function ConnectionResult({ result }: { result: ConnectionTest | null }) {
  if (!result) return null;
  const p = result.provider;
  const who = p ? `${p.model} via ${p.kind}${p.endpoint ? ` (${p.endpoint})` : ''}` : 'the provider';
  if (result.ok) {
    return (
      <p className="add" data-testid="connection-ok" role="status">
        Connected: {who}
        {result.latency_ms !== null ? `, answered in ${Math.round(result.latency_ms)} ms` : ''}.
      </p>
    );
  }
  const error = toApiError(result.error ?? { code: 'ERR_LLM_CONFIG', message: 'no provider' });
  return (
    <div data-testid="connection-failed">
      <ErrorBox error={error} title={`Cannot reach ${who}`} />
    </div>
  );
}
