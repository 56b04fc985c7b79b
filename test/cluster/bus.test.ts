import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBus } from '../../runtime/cluster/redisBus.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';

const TOPICS = ['events', 'credentials', 'roles', 'counts'];
const logger = pino({ level: 'silent' });

let redisServer: PrivateRedis;
const clients: Redis[] = [];
const buses: RedisBus[] = [];
beforeAll(async () => {
  redisServer = await startPrivateRedis();
});
afterAll(async () => {
  for (const bus of buses) await bus.close();
  for (const client of clients) client.disconnect();
  await redisServer.stop();
});

/** A bus as startServer opens it: the limiter's client (no offline queue), the topics registered, then started. */
async function openBus(prefix: string, heard: string[] = [], maxStalenessMs = 400) {
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  redis.on('error', () => undefined);
  clients.push(redis);
  const bus = await RedisBus.connect(redis, prefix, logger, maxStalenessMs);
  buses.push(bus);
  for (const topic of TOPICS) await bus.on(topic, (message) => heard.push(`${topic}:${message}`));
  return bus;
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - started;
}

async function subscribers(prefix: string): Promise<number[]> {
  const probe = new Redis(redisServer.url);
  try {
    const answer = (await probe.pubsub('NUMSUB', ...TOPICS.map((topic) => `${prefix}:${topic}`))) as (
      | string
      | number
    )[];
    return answer.filter((_, i) => i % 2 === 1) as number[];
  } finally {
    probe.disconnect();
  }
}

describe('the bus between instances over Redis', () => {
  it('subscribes every channel even when asked while the connection is mid-handshake, and says so', async () => {
    const prefix = `bus-${randomUUID()}`;
    const bus = await openBus(prefix);
    const subscriber = (bus as unknown as { subscriber: Redis }).subscriber;
    // A topic added in the window between the TCP connect and ioredis's ready check.
    const connected = new Promise<void>((resolve) => subscriber.once('connect', () => resolve()));
    const starting = bus.start();
    await connected;
    expect(subscriber.status).toBe('connect');
    await bus.on('late', () => undefined);
    await starting;
    await until(() => bus.trusted);
    expect(await subscribers(prefix)).toEqual([1, 1, 1, 1]);
    const state = bus.state();
    expect(state.up).toBe(true);
    for (const topic of [...TOPICS, 'late', 'pulse']) expect(state.channels[topic]?.subscribed).toBe(true);
    expect(state.stalenessMs).toBeLessThanOrEqual(400);
  });

  it('delivers other instances notices, not its own, and proves the round trip with its pulse', async () => {
    const prefix = `bus-${randomUUID()}`;
    const heardByA: string[] = [];
    const heardByB: string[] = [];
    const a = await openBus(prefix, heardByA);
    const b = await openBus(prefix, heardByB);
    await Promise.all([a.start(), b.start()]);
    await until(() => a.trusted && b.trusted);
    a.publish('credentials', 'user-1');
    await until(() => heardByB.includes('credentials:user-1'));
    expect(heardByA).not.toContain('credentials:user-1');
    await until(() => a.state().peers === 1 && b.state().peers === 1);
    expect(b.state().channels.credentials.lastMessageAgeMs).not.toBeNull();
  });

  it('stops vouching within the bound when Redis goes, and resumes with every channel after its restart', async () => {
    const prefix = `bus-${randomUUID()}`;
    const heardByB: string[] = [];
    const a = await openBus(prefix);
    const b = await openBus(prefix, heardByB);
    let resumed = 0;
    b.onResume = () => resumed++;
    await Promise.all([a.start(), b.start()]);
    await until(() => a.trusted && b.trusted);

    await redisServer.stop();
    const lapse = await until(() => !b.trusted, 3000);
    expect(lapse).toBeLessThanOrEqual(400 + 100);
    expect(b.state().up).toBe(false);

    await redisServer.start();
    await until(() => a.trusted && b.trusted, 10_000);
    // Whatever was said meanwhile is gone: B starts its caches over once every channel is back.
    expect(resumed).toBe(1);
    expect(await subscribers(prefix)).toEqual([2, 2, 2, 2]);
    a.publish('counts', 'after');
    await until(() => heardByB.includes('counts:after'));
  });

  it('sends a notice that could not go out once its own connection is back', async () => {
    const prefix = `bus-${randomUUID()}`;
    const heardByB: string[] = [];
    const a = await openBus(prefix);
    const b = await openBus(prefix, heardByB);
    await Promise.all([a.start(), b.start()]);
    await until(() => a.trusted && b.trusted);
    // Only A's publishing connection drops; B keeps listening and would otherwise never hear.
    const publisher = clients.at(-2)!;
    const probe = new Redis(redisServer.url);
    await probe.client('KILL', 'ID', String(await publisher.client('ID')));
    probe.disconnect();
    await until(() => publisher.status !== 'ready');
    a.publish('roles', 'while-away');
    await until(() => heardByB.includes('roles:while-away'));
  });
});
