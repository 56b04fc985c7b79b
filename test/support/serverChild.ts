// A server process for tests that kill it or run several: the example app with fast webhook
// settings, and a realtime poll so slow that events from other instances must come through Redis.
// Run as `node --import tsx test/support/serverChild.ts` with DATABASE_URL set; prints {"url": ...}.
// With AFTER_COMMIT_URL, an afterCommit hook on articles POSTs `{ seq, id, pid }` there, so a test
// can count how often each event's hook ran and on which process. CHILD_LEASE_MS sets the leases of
// the webhook and afterCommit cursors (default 1 s). SIGTERM stops it as `entigen serve` stops.
import { pino } from 'pino';
import { defineHooks } from '../../generated/hooks.js';
import { registry, repositories } from '../../generated/index.js';
import orderHooks from '../../hooks/orders.js';
import productHooks from '../../hooks/products.js';
import { startServer } from '../../runtime/server/startServer.js';
import { GENEROUS_LIMITS } from './testServer.js';

const afterCommitUrl = process.env.AFTER_COMMIT_URL;
const leaseMs = Number(process.env.CHILD_LEASE_MS ?? 1000);
const afterCommit = afterCommitUrl
  ? [
      orderHooks,
      productHooks,
      defineHooks('articles', {
        async afterCommit({ seq, id }) {
          const res = await fetch(afterCommitUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ seq, id, pid: process.pid }),
          });
          if (!res.ok) throw new Error(`the receiver answered ${res.status}`);
        },
      }),
    ]
  : undefined;

const server = await startServer({
  registry,
  repositories,
  hooks: afterCommit,
  root: process.cwd(),
  port: 0,
  host: '127.0.0.1',
  logger: pino({ level: 'warn' }),
  schedule: false,
  overrides: {
    rateLimit: GENEROUS_LIMITS,
    realtime: {
      maxStreamsPerUser: 200,
      maxStreams: 5000,
      eventsPerSecond: 10_000,
      heartbeatMs: 15_000,
      pollMs: 60_000,
      slowConsumerMs: 30_000,
    },
    webhooks: {
      attempts: 10,
      backoffMs: 400,
      maxBackoffMs: 400,
      timeoutMs: 2000,
      allowPrivateTargets: true,
      leaseMs,
    },
    hooks: { attempts: 5, backoffMs: 200, timeoutMs: 2000, leaseMs },
  },
  env: { SESSION_SECRET: 'webhook-child', APP_ENCRYPTION_KEY: 'webhook-child-key', ...process.env },
});
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
console.log(JSON.stringify({ url: server.url }));
