export { ApiError, fetchUser, listTeams } from './api.js';
export { loadProfile, renderProfile } from './profile.js';
