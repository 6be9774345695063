// Parse "YYYY-MM-DD" or "YYYY-MM-DD HH:mm" as a UTC date.

const PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}))?$/;

export function parseDate(text) {
  const match = PATTERN.exec(text.trim());
  if (!match) {
    throw new Error(`unrecognised date: ${text}`);
  }
  const [year, month, day, hour = 0, minute = 0] = match.slice(1).map((v) => Number(v ?? 0));
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute));
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    throw new Error(`no such day: ${text}`);
  }
  return date;
}
