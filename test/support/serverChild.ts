// A server process for tests that kill it or run several: the example app with fast webhook
// settings, and a realtime poll so slow that events from other instances must come through Redis.
// Run as `node --import tsx test/support/serverChild.ts` with DATABASE_URL set; prints {"url": ...}.
import { pino } from 'pino';
import { registry, repositories } from '../../generated/index.js';
import { startServer } from '../../runtime/server/startServer.js';
import { GENEROUS_LIMITS } from './testServer.js';

const server = await startServer({
  registry,
  repositories,
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
      leaseMs: 1000,
    },
  },
  env: { SESSION_SECRET: 'webhook-child', APP_ENCRYPTION_KEY: 'webhook-child-key', ...process.env },
});
console.log(JSON.stringify({ url: server.url }));
