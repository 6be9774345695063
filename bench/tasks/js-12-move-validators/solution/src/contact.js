import { truncate } from './helpers.js';
import { isEmail } from './validators.js';

// A one-line summary of a contact message, or an error when the reply address is invalid.
export function summarizeMessage({ from, subject, body }) {
  if (!isEmail(from)) {
    throw new Error(`cannot reply to '${from}'`);
  }
  return `${from}: ${truncate(subject || body, 30)}`;
}
