import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResponse } from '../support/openApiCheck.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

let server: TestServer;
let admin: { id: string; token: string };
beforeAll(async () => {
  server = await startTestServer({}, { overrides: { rateLimit: GENEROUS_LIMITS } });
  admin = await server.user({ roles: ['ADMIN'] });
});
afterAll(() => server.close());

async function importFile(path: string, name: string, text: string, token = admin.token) {
  const form = new FormData();
  form.append('file', new Blob([text]), name);
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    body: form,
    headers: { authorization: `Bearer ${token}` },
  });
  const body = await response.json();
  const problems = checkResponse('POST', path, response.status, response.headers.get('content-type'), body);
  if (problems.length > 0) throw new Error(`does not match the OpenAPI document: ${problems.join('; ')}`);
  return { status: response.status, body: body as any };
}

describe('POST /api/v1/import/{entity}', () => {
  it('checks, then imports a CSV, owned records becoming the administrator’s', async () => {
    const csv = 'name,plan\nAcme,team\n,free\nGlobex,free\n';
    const check = await importFile('/api/v1/import/organizations?dryRun=true', 'orgs.csv', csv);
    expect(check.status).toBe(200);
    expect(check.body.data).toEqual({
      imported: 0,
      lines: 4,
      written: false,
      dryRun: true,
      errors: [{ line: 3, message: 'name: is required' }],
      moreErrors: 0,
    });
    const partial = await importFile('/api/v1/import/organizations?continueOnError=true', 'orgs.csv', csv);
    expect(partial.body.data).toMatchObject({ imported: 2, written: true, dryRun: false });
    const listed = await server.call('GET', '/api/v1/organizations?sort=name', { token: admin.token });
    expect(listed.body.data.items.map((o: { name: string; ownerId: string }) => [o.name, o.ownerId])).toEqual([
      ['Acme', admin.id],
      ['Globex', admin.id],
    ]);
  });

  it('lists at most 100 refused lines and counts the rest', async () => {
    const lines = Array.from({ length: 150 }, () => JSON.stringify({ plan: 'team' })).join('\n');
    const answer = await importFile('/api/v1/import/organizations', 'many.jsonl', lines);
    expect(answer.body.data.errors).toHaveLength(100);
    expect(answer.body.data.moreErrors).toBe(50);
    expect(answer.body.data.written).toBe(false);
  });

  it('is for administrators only, for entities that exist, with a readable file', async () => {
    const user = await server.user();
    expect((await importFile('/api/v1/import/organizations', 'a.jsonl', '{}', user.token)).status).toBe(403);
    expect((await importFile('/api/v1/import/users', 'a.jsonl', '{}')).status).toBe(404);
    expect((await importFile('/api/v1/import/nothing', 'a.jsonl', '{}')).status).toBe(404);
    const unnamed = await importFile('/api/v1/import/organizations', 'data.txt', '{}');
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.error.details).toEqual({ format: 'must be jsonl or csv (the file name does not say)' });
    expect((await importFile('/api/v1/import/organizations?format=xml', 'a.xml', '{}')).status).toBe(400);
    const json = await server.call('POST', '/api/v1/import/organizations', { token: admin.token, body: {} });
    expect(json.status).toBe(400);
  });
});
