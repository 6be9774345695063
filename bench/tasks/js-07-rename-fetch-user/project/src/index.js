export { ApiError, getUser, listTeams } from './api.js';
export { loadProfile, renderProfile } from './profile.js';
