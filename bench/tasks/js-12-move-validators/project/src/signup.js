import { capitalize, isEmail, isUrl } from './helpers.js';

// Validate a signup form; returns { ok, errors, value } with the cleaned-up value.
export function validateSignup(form) {
  const errors = {};
  const name = (form.name ?? '').trim();
  if (name.length < 2) errors.name = 'name is too short';
  if (!isEmail(form.email ?? '')) errors.email = 'not an email address';
  if (form.website && !isUrl(form.website)) errors.website = 'not an http(s) URL';
  const ok = Object.keys(errors).length === 0;
  return {
    ok,
    errors,
    value: ok ? { name: capitalize(name), email: form.email.trim().toLowerCase(), website: form.website ?? null } : null,
  };
}
