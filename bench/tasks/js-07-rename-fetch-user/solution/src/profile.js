import { fetchUser, listTeams } from './api.js';

// A profile card: the user plus the names of their teams, sorted.
export async function loadProfile(transport, id) {
  const [user, teams] = await Promise.all([fetchUser(transport, id), listTeams(transport, id)]);
  return { ...user, teams: teams.map((t) => t.name).sort() };
}

export function renderProfile(profile) {
  const email = profile.email ? ` <${profile.email}>` : '';
  const teams = profile.teams.length ? profile.teams.join(', ') : 'no teams';
  return `${profile.name}${email} (${teams})`;
}
