export { formatDate, monthName, relativeDays } from './format.js';
export { parseDate } from './parse.js';
