import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import type { S3Settings, UploadsConfig } from '../../runtime/config/runtimeConfig.js';

/**
 * A real S3-protocol server for the test: s3rver on a free port over a folder of its own, or,
 * when S3_TEST_URL names one (`http://ACCESS_KEY:SECRET@host:port/bucket`), that server. Each
 * server of a test gets a prefix of its own, so tests never see each other's files.
 */
export interface S3Target {
  settings: S3Settings;
  /** The same bucket under another prefix (another app sharing it). */
  withPrefix(prefix: string): S3Settings;
  /** uploads config of the s3 driver on this server. */
  uploads(maxBytes?: number, sizes?: string[]): UploadsConfig;
  /** Environment variables that select it (UPLOADS_DRIVER, S3_*). */
  env: Record<string, string>;
  /** Stops s3rver (a storage outage); start() brings it back on the same port and folder. Not for S3_TEST_URL. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

const BUCKET = 'entigen-test';

export async function startS3(): Promise<S3Target> {
  const prefix = `t-${randomUUID().slice(0, 8)}/`;
  const external = process.env.S3_TEST_URL;
  let server: S3rver | undefined;
  let settings: S3Settings;
  let port = 0;
  const directory = mkdtempSync(join(tmpdir(), 'entigen-s3-'));
  const run = async () => {
    server = new S3rver({
      address: '127.0.0.1',
      port,
      silent: true,
      directory,
      configureBuckets: [{ name: BUCKET, configs: [] }],
    });
    port = ((await server.run()) as AddressInfo).port;
  };
  if (external) {
    const url = new URL(external);
    settings = {
      bucket: url.pathname.replace(/^\/|\/$/g, ''),
      endpoint: `${url.protocol}//${url.host}`,
      region: process.env.S3_TEST_REGION ?? 'us-east-1',
      prefix,
      forcePathStyle: true,
      accessKeyId: decodeURIComponent(url.username),
      secretAccessKey: decodeURIComponent(url.password),
    };
  } else {
    await run();
    settings = {
      bucket: BUCKET,
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      prefix,
      forcePathStyle: true,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
    };
  }
  return {
    settings,
    withPrefix: (other) => ({ ...settings, prefix: other }),
    uploads: (maxBytes = 10 * 1024 * 1024, sizes = ['200x200', '100x100']) => ({
      driver: 's3',
      dir: directory,
      maxBytes,
      s3: settings,
      thumbnails: { sizes },
    }),
    env: {
      UPLOADS_DRIVER: 's3',
      S3_BUCKET: settings.bucket,
      S3_ENDPOINT: settings.endpoint!,
      S3_PREFIX: settings.prefix,
      S3_ACCESS_KEY_ID: settings.accessKeyId!,
      S3_SECRET_ACCESS_KEY: settings.secretAccessKey!,
    },
    async stop() {
      if (!server) throw new Error('an S3_TEST_URL server is not the test’s to stop');
      await server.close();
    },
    start: run,
    async close() {
      await server?.close();
    },
  };
}
