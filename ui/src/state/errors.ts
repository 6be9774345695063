// What an error box says besides the backend's message: the message without the violations it
// repeats (they are listed once, with their codes), and what the user can do next.
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
      hint: 'The model provider did not answer. Check that it is running and that the API URL and model in Settings are right (Settings → Test connection), then retry.',
      settings: true,
      retry: true,
    };
  }
  if (PROVIDER_CONFIG.has(code)) {
    return {
      hint: 'No usable model is configured. Choose a provider, API URL, model and API key variable in Settings and test the connection there.',
      settings: true,
      retry: true,
    };
  }
  if (code === 'ERR_LLM_BAD_RESPONSE') {
    return { hint: 'The model answered with something papayu could not use. Retrying often helps; a larger model helps more.', settings: false, retry: true };
  }
  if (code === 'ERR_LOCKED') {
    return { hint: 'Another papayu is working on this project. Retry when it is done.', settings: false, retry: true };
  }
  return { hint: null, settings: false, retry: false };
}

/** What to do when online research (the Trends tab) fails: off or without a search service is
 * fixed where papayu is started; a search service that fails may answer on a retry. */
export function researchAdvice(code: string): ErrorAdvice {
  if (code === 'ERR_INVALID_CONFIG') {
    return {
      hint: 'Online research is not configured, so nothing was sent. Start papayu with PAPAYU_RESEARCH=1 and a search service (TAVILY_API_KEY for Tavily, or PAPAYU_SEARXNG_URL for SearXNG); Settings shows what research lacks (docs/INTEGRATIONS.md).',
      settings: true,
      retry: false,
    };
  }
  return { hint: 'The search service did not answer as expected. Check that it is reachable, then retry.', settings: false, retry: true };
}
