// The typed client of generated/client.ts against a running server: `npm run client-example` (.mts: an ES module whatever package.json says).
// Start the server first (npm start), create the administrator at /setup, then:
//   ENTIGEN_EMAIL=you@example.org ENTIGEN_PASSWORD='your password' npm run client-example
// or with an API key: ENTIGEN_API_KEY=egk_... npm run client-example
import { ApiRequestError, createClient } from './generated/client.js';

const baseUrl = process.env.BASE_URL ?? 'http://localhost:3000';
const api = createClient({ baseUrl, apiKey: process.env.ENTIGEN_API_KEY });

try {
  if (!process.env.ENTIGEN_API_KEY) {
    const email = process.env.ENTIGEN_EMAIL;
    const password = process.env.ENTIGEN_PASSWORD;
    if (!email || !password) throw new Error('set ENTIGEN_EMAIL and ENTIGEN_PASSWORD (or ENTIGEN_API_KEY)');
    await api.auth.login({ authType: 'password', email, password });
  }
  const note = await api.notes.create({ title: 'Written by the typed client', priority: 'high' });
  console.log(`created note ${note.id}: ${note.title}`);
  await api.notes.pin(note.id); // a custom endpoint (entities/notes.yaml, hooks/notes.ts)
  const { items, totalCount } = await api.notes.list({ pinned: true, sort: '-createdAt', limit: 5 });
  console.log(`${totalCount} pinned note(s); newest: ${items.map((n) => n.title).join(', ')}`);
} catch (error) {
  if (error instanceof ApiRequestError) console.error(`${error.status} ${error.code}: ${error.message}`, error.details ?? '');
  else console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
