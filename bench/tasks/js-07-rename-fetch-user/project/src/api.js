// A thin client over an injected transport: `transport(method, path)` resolves to
// `{ status, body }`. Keeping the transport injectable keeps tests off the network.

export class ApiError extends Error {
  constructor(status, path) {
    super(`request to ${path} failed with status ${status}`);
    this.status = status;
  }
}

async function request(transport, method, path) {
  const { status, body } = await transport(method, path);
  if (status < 200 || status >= 300) {
    throw new ApiError(status, path);
  }
  return body;
}

export async function getUser(transport, id) {
  const body = await request(transport, 'GET', `/users/${encodeURIComponent(id)}`);
  return { id: body.id, name: body.name, email: body.email ?? null };
}

export async function listTeams(transport, userId) {
  return request(transport, 'GET', `/users/${encodeURIComponent(userId)}/teams`);
}
