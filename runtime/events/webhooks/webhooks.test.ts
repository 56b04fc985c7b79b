import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { isPublicAddress, publicOnlyLookup, targetProblem } from './safeTarget.js';
import { newWebhookSecret, signatureHeaders } from './signature.js';
import { webhookWants } from './webhookDispatcher.js';

describe('webhook signatures', () => {
  it('verify with the Standard Webhooks reference library', () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({ id: 'msg_1', type: 'orders.created', data: { id: 'x' } });
    const headers = signatureHeaders(secret, 'msg_1', new Date(), body);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
  });

  it('match the library for the same id, time and body', () => {
    const secret = newWebhookSecret();
    const at = new Date('2026-11-24T00:00:00Z');
    const body = '{"a":1}';
    const ours = signatureHeaders(secret, 'msg_2', at, body)['webhook-signature'];
    expect(ours).toBe(new Webhook(secret).sign('msg_2', at, body));
  });
});

describe('webhook targets', () => {
  it('tell public addresses from loopback, private, link-local and mapped ones', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) expect(isPublicAddress(address)).toBe(true);
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.1.1.1',
      'not an address',
    ])
      expect(isPublicAddress(address), address).toBe(false);
  });

  it('judge an IPv6 address that carries an IPv4 one by that one (6to4, Teredo, NAT64, mapped, compatible)', () => {
    for (const address of [
      '2002:7f00:1::1', // 6to4 of 127.0.0.1
      '2002:a9fe:a9fe::', // 6to4 of 169.254.169.254
      '2002:c0a8:0101::5', // 6to4 of 192.168.1.1
      '2001:0:4136:e378:8000:63bf:80ff:fffe', // Teredo: client 127.0.0.1 (inverted)
      '2001:0:a00:1::1', // Teredo: server 10.0.0.1
      '64:ff9b::a9fe:a9fe', // NAT64 of 169.254.169.254
      '64:ff9b::8.8.8.8', // NAT64: never, whatever it carries
      '64:ff9b:1::1',
      '::ffff:7f00:1', // mapped, in hex
      '::ffff:0:7f00:1', // SIIT
      '::7f00:1', // IPv4-compatible
      '::127.0.0.1',
      '::ffff:169.254.169.254',
    ])
      expect(isPublicAddress(address), address).toBe(false);
    for (const address of ['2002:808:808::1', '::ffff:8.8.8.8', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'])
      expect(isPublicAddress(address), address).toBe(true);
    expect(targetProblem('http://[2002:7f00:1::1]:8080/hook', false)).toMatch(/private/);
  });

  it('refuse non-http URLs, credentials and private hosts unless allowed', () => {
    expect(targetProblem('https://hooks.example.com/x', false)).toBeUndefined();
    expect(targetProblem('ftp://example.com', false)).toMatch(/http/);
    expect(targetProblem('not a url', false)).toMatch(/absolute/);
    expect(targetProblem('https://a:b@example.com', false)).toMatch(/credentials/);
    expect(targetProblem('http://localhost:3000', false)).toMatch(/allowPrivateTargets/);
    expect(targetProblem('http://app.localhost', false)).toMatch(/allowPrivateTargets/);
    expect(targetProblem('http://[::1]:80', false)).toMatch(/allowPrivateTargets/);
    expect(targetProblem('http://127.0.0.1:3000', true)).toBeUndefined();
  });

  it('refuse at lookup time a name that resolves to a private address', async () => {
    const lookup = publicOnlyLookup();
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      lookup('localhost', { family: 0 }, (e) => resolve(e)),
    );
    expect(error?.code).toBe('ENOTPUBLIC');
  });
});

describe('webhook patterns', () => {
  const hook = (events: string[], entities: string[] = []) => ({ id: 'w', events, entities });
  it('match by entity and event, with * on either side', () => {
    const created = { entity: 'orders', event: 'created' } as const;
    expect(webhookWants(hook(['*']), created)).toBe(true);
    expect(webhookWants(hook(['orders.*']), created)).toBe(true);
    expect(webhookWants(hook(['*.created']), created)).toBe(true);
    expect(webhookWants(hook(['orders.created']), created)).toBe(true);
    expect(webhookWants(hook(['orders.deleted', 'comments.*']), created)).toBe(false);
    expect(webhookWants(hook(['*'], ['comments']), created)).toBe(false);
    expect(webhookWants(hook(['*'], ['orders']), created)).toBe(true);
  });
});
