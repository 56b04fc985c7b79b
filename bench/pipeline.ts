// Per-request cost of the protection pipeline (rate limit, idempotency, authenticate), measured
// in-process with a real in-memory store, without Express or the network around it.

import { fileURLToPath } from 'node:url';
import type { Request, Response } from 'express';
import { pino } from 'pino';
import { loadRegistry } from '../bin/commands/serveCommand.js';
import { RoleTable } from '../runtime/access/roleTable.js';
import { signSession } from '../runtime/auth/sessionToken.js';
import { FieldCipher } from '../runtime/crypto/fieldCipher.js';
import { authenticate } from '../runtime/http/authenticate.js';
import { idempotency } from '../runtime/http/idempotency.js';
import { identifyCaller } from '../runtime/http/rateLimit/identifyCaller.js';
import { memoryLimiterStore } from '../runtime/http/rateLimit/limiterStore.js';
import { rateLimit } from '../runtime/http/rateLimit/rateLimit.js';
import { SqliteStore } from '../runtime/store/sqlite/sqliteStore.js';
import { newId } from '../runtime/write/prepareWrite.js';

const ROUNDS = 20_000;
const root = fileURLToPath(new URL('../..', import.meta.url));
const registry = await loadRegistry(root, 'generated');
const store = SqliteStore.open(':memory:');
await store.init(registry.model);
const userId = newId();
const now = new Date().toISOString();
await store.insert('users', {
  id: userId,
  email: 'b@example.test',
  displayName: 'B',
  roles: ['USER'],
  authSource: 'local',
  disabled: false,
  createdAt: now,
  updatedAt: now,
});
const secret = 'bench';
const token = signSession(secret, userId, Date.now());
const logger = pino({ level: 'silent' });
const clock = () => Date.now();
const roles = new RoleTable(registry.model, store);
const common = { store, secret, cookieName: 'entigen_uid', sessionTtlMs: 7 * 86_400_000 };

const limit = rateLimit({
  tiers: {
    auth: { limit: 1e9, window: 60 },
    api: { limit: 1e9, window: 60 },
    public: { limit: 1e9, window: 60 },
    mcp: { limit: 1e9, window: 60 },
  },
  store: memoryLimiterStore(),
  clock,
  identify: identifyCaller({ ...common, clock }),
  logger,
});
const idempotent = idempotency({ store, clock, logger, cipher: new FieldCipher('bench') });
const auth = authenticate({ ...common, roles, now: () => new Date() });

const fakeRes = () => {
  const res = {
    statusCode: 200,
    locals: {},
    setHeader() {},
    on() {},
    status(code: number) {
      res.statusCode = code;
      return res;
    },
    json() {
      return res;
    },
  };
  return res as unknown as Response;
};
const fakeReq = (method: string, headers: Record<string, string>) =>
  ({
    method,
    path: '/api/v1/articles',
    headers,
    ip: '127.0.0.1',
    socket: {},
    body: { title: 't', body: 'b' },
  }) as unknown as Request;

async function measure(name: string, run: (i: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < 2000; i++) await run(-i - 1); // warm-up
  const started = process.hrtime.bigint();
  for (let i = 0; i < ROUNDS; i++) await run(i);
  const micros = Number(process.hrtime.bigint() - started) / 1000 / ROUNDS;
  process.stdout.write(`  ${name.padEnd(44)} ${micros.toFixed(1).padStart(6)} µs/request\n`);
}

const next = () => undefined;
const bearer = { authorization: `Bearer ${token}` };
process.stdout.write(`pipeline overhead, ${ROUNDS} requests each (in-process, in-memory SQLite):\n`);
await measure('rate limit (session verified by HMAC)', async () => limit(fakeReq('GET', bearer), fakeRes(), next));
await measure('rate limit (anonymous)', async () => limit(fakeReq('GET', {}), fakeRes(), next));
await measure('authenticate (session: user + revocation)', async () => auth(fakeReq('GET', bearer), fakeRes(), next));
await measure('authenticate (anonymous)', async () => auth(fakeReq('GET', {}), fakeRes(), next));
await measure('idempotency (POST without a key)', async () => idempotent(fakeReq('POST', bearer), fakeRes(), next));
await measure('idempotency (POST, new key: record + answer)', async (i) => {
  const res = fakeRes();
  await idempotent(fakeReq('POST', { ...bearer, 'idempotency-key': `k${i}` }), res, next);
  res.status(201).json({ ok: true });
  await new Promise((resolve) => setImmediate(resolve));
});
await measure('all three, GET with a session', async () => {
  const req = fakeReq('GET', bearer);
  const res = fakeRes();
  await limit(req, res, next);
  await idempotent(req, res, next);
  await auth(req, res, next);
});
await store.close();
