import { describe, expect, it } from 'vitest';
import { ApiError } from '../transport';
import { adviceFor, messageWithoutViolations, researchAdvice } from './errors';

describe('error advice', () => {
  it('lists a violation once: the message lines repeating one are left out', () => {
    const error = new ApiError('ERR_SCHEMA_VALIDATION', 'the plan was rejected (2 violations)\n- ERR_INVALID_PATH /etc/x: absolute path\n- ERR_PROTECTED_PATH .env: protected', [
      { code: 'ERR_INVALID_PATH', message: 'absolute path', path: '/etc/x' },
      { code: 'ERR_PROTECTED_PATH', message: 'protected', path: '.env' },
    ]);
    expect(messageWithoutViolations(error)).toBe('the plan was rejected (2 violations)');
    const plain = new ApiError('ERR_IO', 'disk full\nsecond line');
    expect(messageWithoutViolations(plain)).toBe('disk full\nsecond line');
  });
  it('points provider problems to Settings with a retry, and other errors nowhere', () => {
    for (const code of ['ERR_LLM_NETWORK', 'ERR_LLM_TIMEOUT', 'ERR_LLM_HTTP', 'ERR_LLM_CONFIG', 'ERR_INVALID_CONFIG']) {
      const a = adviceFor(code);
      expect(a.settings, code).toBe(true);
      expect(a.retry, code).toBe(true);
      expect(a.hint, code).toMatch(/Settings/);
      expect(a.hint, code).not.toMatch(/cargo|PAPAYU_/);
    }
    expect(adviceFor('ERR_LLM_BAD_RESPONSE')).toMatchObject({ settings: false, retry: true });
    expect(adviceFor('ERR_INVALID_PATH')).toEqual({ hint: null, settings: false, retry: false });
  });
  it('research that is not configured points to Settings and names what to set; a failing service is retried', () => {
    const off = researchAdvice('ERR_INVALID_CONFIG');
    expect(off).toMatchObject({ settings: true, retry: false });
    expect(off.hint).toMatch(/nothing was sent/);
    expect(off.hint).toMatch(/PAPAYU_RESEARCH=1/);
    expect(off.hint).toMatch(/Settings/);
    expect(researchAdvice('ERR_IO')).toMatchObject({ settings: false, retry: true });
  });
});
