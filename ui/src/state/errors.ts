// What an error box says besides the backend's message: the message without the violations it
// repeats (they are listed once, with their codes), and what the user can do next.
import { t } from '../i18n';
import type { ApiError } from '../transport';

/** The message without the lines that repeat a violation listed below it. */
export function messageWithoutViolations(error: ApiError): string {
  if (!error.violations.length) return error.message;
  const repeated = (line: string) => error.violations.some((v) => v.message && line.includes(v.message));
  const kept = error.message.split('\n').filter((l) => !repeated(l));
  return kept.join('\n').trim();
}

/** Where the problem lies: the model provider (fix it in Settings), or elsewhere. */
export interface ErrorAdvice {
  hint: string | null;
  /** The provider's configuration or connection: point to Settings. */
  settings: boolean;
  /** Trying the same request again can succeed. */
  retry: boolean;
}

const PROVIDER_DOWN = new Set(['ERR_LLM_NETWORK', 'ERR_LLM_TIMEOUT', 'ERR_LLM_HTTP']);
const PROVIDER_CONFIG = new Set(['ERR_LLM_CONFIG', 'ERR_INVALID_CONFIG', 'ERR_MODEL_NOT_FOUND', 'ERR_MODEL_INVALID']);

export function adviceFor(code: string): ErrorAdvice {
  if (PROVIDER_DOWN.has(code)) {
    return {
      hint: t('hint.provider.down'),
      settings: true,
      retry: true,
    };
  }
  if (PROVIDER_CONFIG.has(code)) {
    return {
      hint: t('hint.provider.config'),
      settings: true,
      retry: true,
    };
  }
  if (code === 'ERR_LLM_BAD_RESPONSE') {
    return { hint: t('hint.bad.response'), settings: false, retry: true };
  }
  if (code === 'ERR_LOCKED') {
    return { hint: t('hint.locked'), settings: false, retry: true };
  }
  return { hint: null, settings: false, retry: false };
}

/** What to do when online research (the Trends tab) fails: off or without a search service is
 * fixed where papayu is started; a search service that fails may answer on a retry. */
export function researchAdvice(code: string): ErrorAdvice {
  if (code === 'ERR_INVALID_CONFIG') {
    return {
      hint: t('hint.research.off'),
      settings: true,
      retry: false,
    };
  }
  return { hint: t('hint.research.failed'), settings: false, retry: true };
}
