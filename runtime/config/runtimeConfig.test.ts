import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRuntimeConfig, parseDuration, trustProxy } from './runtimeConfig.js';

describe('runtime config', () => {
  const empty = () => mkdtempSync(join(tmpdir(), 'entigen-config-'));

  it('has the spec defaults without a config file', () => {
    const config = loadRuntimeConfig(empty(), {});
    expect(config.rateLimit).toEqual({
      auth: { limit: 20, window: 60 },
      api: { limit: 100, window: 60 },
      public: { limit: 60, window: 60 },
      mcp: { limit: 60, window: 60 },
    });
    expect(config.mcp).toEqual({ enabled: false, readOnly: true, allowDelete: false, allowedOrigins: [] });
    expect(config.sessionTtlMs).toBe(7 * 86_400_000);
    expect(config.server.port).toBe(3000);
  });

  it('fills a plain OAuth2 provider from its preset, its secret from the environment', () => {
    const dir = empty();
    writeFileSync(
      join(dir, 'entigen.config.yaml'),
      'version: 1\nauth:\n  oauth2:\n    - { name: github, preset: github, clientId: abc, roles: [USER, EDITOR] }\n',
    );
    expect(loadRuntimeConfig(dir, { OAUTH2_GITHUB_CLIENT_SECRET: 's3cret' }).oauth2).toEqual([
      {
        name: 'github',
        label: 'GitHub',
        authorizeUrl: 'https://github.com/login/oauth/authorize',
        tokenUrl: 'https://github.com/login/oauth/access_token',
        userinfoUrl: 'https://api.github.com/user',
        emailsUrl: 'https://api.github.com/user/emails',
        clientId: 'abc',
        clientSecret: 's3cret',
        scopes: ['read:user', 'user:email'],
        pkce: true,
        allowedDomains: undefined,
        roles: ['USER', 'EDITOR'],
      },
    ]);
    writeFileSync(
      join(dir, 'entigen.config.yaml'),
      'version: 1\nauth:\n  oauth2:\n    - { name: forge, clientId: abc, authorizeUrl: https://forge.test/a }\n',
    );
    expect(() => loadRuntimeConfig(dir, {})).toThrow(/auth.oauth2 forge: tokenUrl is required \(or a preset\)/);
    writeFileSync(
      join(dir, 'entigen.config.yaml'),
      'version: 1\nauth:\n  oidc: [{ name: github, issuer: https://id.test, clientId: x }]\n  oauth2: [{ name: github, preset: github, clientId: abc }]\n',
    );
    expect(() => loadRuntimeConfig(dir, {})).toThrow(/"github" is used twice/);
  });

  it('lets the environment override', () => {
    const config = loadRuntimeConfig(empty(), { RATE_LIMIT_API: '500/30', PORT: '8080', SESSION_TTL: '12h' });
    expect(config.rateLimit.api).toEqual({ limit: 500, window: 30 });
    expect(config.server.port).toBe(8080);
    expect(config.sessionTtlMs).toBe(12 * 3_600_000);
    expect(() => loadRuntimeConfig(empty(), { RATE_LIMIT_AUTH: 'lots' })).toThrow(
      /RATE_LIMIT_AUTH must look like 100\/60/,
    );
    expect(() => loadRuntimeConfig(empty(), { PORT: 'x' })).toThrow(/PORT/);
  });

  it('reads mail from the config and the environment, refusing what is not an SMTP or web URL', () => {
    const dir = empty();
    writeFileSync(
      join(dir, 'entigen.config.yaml'),
      'version: 1\nmail: { url: smtp://mail.example.test:587, from: App <a@example.test>, linkBase: https://app.example.test/, attempts: 3 }\n',
    );
    expect(loadRuntimeConfig(dir, {}).mail).toMatchObject({
      url: 'smtp://mail.example.test:587',
      from: 'App <a@example.test>',
      linkBase: 'https://app.example.test',
      attempts: 3,
      tls: { rejectUnauthorized: true, requireTLS: false },
    });
    const overridden = loadRuntimeConfig(dir, { MAIL_URL: 'smtps://u:p@other.test:465', MAIL_FROM: 'x@y.test' }).mail;
    expect(overridden).toMatchObject({ url: 'smtps://u:p@other.test:465', from: 'x@y.test' });
    expect(loadRuntimeConfig(empty(), {}).mail.url).toBeUndefined();
    expect(() => loadRuntimeConfig(empty(), { MAIL_URL: 'http://mail.test' })).toThrow(/MAIL_URL/);
    expect(() => loadRuntimeConfig(empty(), { MAIL_LINK_BASE: 'javascript:alert(1)' })).toThrow(/MAIL_LINK_BASE/);
    expect(() => loadRuntimeConfig(empty(), { MAIL_LINK_BASE: 'https://a.test/?x=1' })).toThrow(/MAIL_LINK_BASE/);
  });

  it('reads auth.emailVerification, off by default, and refuses other words', () => {
    expect(loadRuntimeConfig(empty(), {}).emailVerification).toBe('off');
    const dir = empty();
    writeFileSync(join(dir, 'entigen.config.yaml'), 'version: 1\nauth: { emailVerification: required }\n');
    expect(loadRuntimeConfig(dir, {}).emailVerification).toBe('required');
    expect(loadRuntimeConfig(dir, { EMAIL_VERIFICATION: 'optional' }).emailVerification).toBe('optional');
    expect(() => loadRuntimeConfig(empty(), { EMAIL_VERIFICATION: 'yes' })).toThrow(/EMAIL_VERIFICATION/);
  });

  it('reads the trusted proxies as a hop count or addresses, and refuses trusting everyone', () => {
    expect(trustProxy(undefined)).toBe(false);
    expect(trustProxy('false')).toBe(false);
    expect(trustProxy('0')).toBe(false);
    expect(trustProxy('2')).toBe(2);
    expect(trustProxy(1)).toBe(1);
    expect(trustProxy('10.0.0.0/8, loopback,::1')).toEqual(['10.0.0.0/8', 'loopback', '::1']);
    expect(trustProxy(['192.168.1.10', 'fd00::/8'])).toEqual(['192.168.1.10', 'fd00::/8']);
    for (const bad of [true, 'true', '10.0.0.0/33', 'proxy.example.test', '-1', '1.5', [], [3], '10.0.0.1/8/2'])
      expect(() => trustProxy(bad), String(bad)).toThrow(
        /TRUST_PROXY \(server\.trustProxy\) must be false, a hop count/,
      );
    expect(loadRuntimeConfig(empty(), { TRUST_PROXY: '1' }).server.trustProxy).toBe(1);
  });

  it('reads server.cookies.secure, auto by default', () => {
    expect(loadRuntimeConfig(empty(), {}).server.cookies.secure).toBe('auto');
    expect(loadRuntimeConfig(empty(), { COOKIE_SECURE: 'never' }).server.cookies.secure).toBe('never');
    expect(() => loadRuntimeConfig(empty(), { COOKIE_SECURE: 'yes' })).toThrow(
      /COOKIE_SECURE .* auto, always or never/,
    );
  });

  it('reads uploads: a folder by default, a bucket with UPLOADS_DRIVER=s3, and bounded thumbnail sizes', () => {
    const local = loadRuntimeConfig(empty(), {}).uploads;
    expect(local).toMatchObject({ driver: 'local', dir: 'data/uploads', maxBytes: 10 * 1024 * 1024 });
    expect(local.thumbnails.sizes).toEqual(['100x100', '200x200', '400x400', '800x800']);
    expect(local.s3).toBeUndefined();
    const s3 = loadRuntimeConfig(empty(), {
      UPLOADS_DRIVER: 's3',
      S3_BUCKET: 'media',
      S3_ENDPOINT: 'http://127.0.0.1:9000',
      S3_PREFIX: 'app/',
      S3_ACCESS_KEY_ID: 'key',
      S3_SECRET_ACCESS_KEY: 'secret',
    }).uploads;
    expect(s3).toMatchObject({
      driver: 's3',
      s3: {
        bucket: 'media',
        endpoint: 'http://127.0.0.1:9000',
        region: 'us-east-1',
        prefix: 'app/',
        forcePathStyle: true,
        accessKeyId: 'key',
        secretAccessKey: 'secret',
      },
    });
    expect(() => loadRuntimeConfig(empty(), { UPLOADS_DRIVER: 's3' })).toThrow(/needs a bucket/);
    expect(() => loadRuntimeConfig(empty(), { UPLOADS_DRIVER: 'ftp' })).toThrow(/local or s3/);
    expect(() => loadRuntimeConfig(empty(), { UPLOADS_DRIVER: 's3', S3_BUCKET: 'b', S3_PREFIX: '../x' })).toThrow(
      /S3_PREFIX/,
    );
    const dir = empty();
    writeFileSync(join(dir, 'entigen.config.yaml'), 'uploads:\n  thumbnails: { sizes: [10x10, 99999x1] }\n');
    expect(() => loadRuntimeConfig(dir, {})).toThrow(/uploads\.thumbnails\.sizes/);
  });

  it('reads backups: a cron or an interval, how many to keep and where', () => {
    const dir = empty();
    expect(loadRuntimeConfig(dir, {}).backups).toBeUndefined();
    writeFileSync(join(dir, 'entigen.config.yaml'), 'backups: { schedule: "0 3 * * *", to: s3://b/nightly/ }\n');
    expect(loadRuntimeConfig(dir, {}).backups).toEqual({
      schedule: '0 3 * * *',
      scheduleType: 'cron',
      keep: 7,
      to: 's3://b/nightly/',
      logical: false,
    });
    writeFileSync(join(dir, 'entigen.config.yaml'), 'backups: { schedule: 6h, keep: 2 }\n');
    expect(loadRuntimeConfig(dir, {}).backups).toMatchObject({ scheduleType: 'interval', keep: 2, to: 'backups/' });
    writeFileSync(join(dir, 'entigen.config.yaml'), 'backups: { schedule: "every night" }\n');
    expect(() => loadRuntimeConfig(dir, {})).toThrow(/backups\.schedule/);
  });

  it('parses durations', () => {
    expect(parseDuration('45s')).toBe(45_000);
    expect(() => parseDuration('7 days')).toThrow(/invalid duration/);
  });
});
