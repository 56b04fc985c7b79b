import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTITY_VERSIONS } from '../../runtime/model/collections.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe('localized fields: one value per locale, read through the fallback chain', () => {
  let server: TestServer;
  let alice: { id: string; token: string };
  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    server.call(method, path, { token: alice.token, body, headers });
  const faq = async (body: Record<string, unknown>, query = '') => {
    const res = await call('POST', `/api/v1/faqs${query}`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as { id: string; [key: string]: unknown };
  };

  beforeAll(async () => {
    server = await startTestServer();
    alice = await server.user();
  });
  afterAll(() => server.close());

  it('writes one locale or several, and reads one through its fallbacks, naming where each value came from', async () => {
    const made = await faq({
      question: { en: 'How do I sign in?', de: 'Wie melde ich mich an?' },
      answer: 'With your address.',
    });
    // A plain value without ?locale is the default locale's; the answer is in the default locale.
    expect(made).toMatchObject({
      question: 'How do I sign in?',
      answer: 'With your address.',
      _locales: { question: 'en', answer: 'en' },
    });
    const de = await call('GET', `/api/v1/faqs/${made.id}?locale=de`);
    expect(de.status).toBe(200);
    expect(de.headers.get('content-language')).toBe('de');
    expect(de.headers.get('vary')).toMatch(/Accept-Language/);
    expect(de.body.data).toMatchObject({
      question: 'Wie melde ich mich an?',
      answer: 'With your address.',
      _locales: { question: 'de', answer: 'en' },
    });
    // French falls back to German, then to English.
    const fr = await call('GET', `/api/v1/faqs/${made.id}`, undefined, { 'accept-language': 'fr-CH, en;q=0.5' });
    expect(fr.headers.get('content-language')).toBe('fr');
    expect(fr.body.data).toMatchObject({ question: 'Wie melde ich mich an?', _locales: { question: 'de' } });

    const changed = await call('PATCH', `/api/v1/faqs/${made.id}?locale=fr`, { question: 'Comment me connecter ?' });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.data).toMatchObject({ question: 'Comment me connecter ?', _locales: { question: 'fr' } });
    const all = await call('GET', `/api/v1/faqs/${made.id}?locale=*`);
    expect(all.body.data.question).toEqual({
      en: 'How do I sign in?',
      de: 'Wie melde ich mich an?',
      fr: 'Comment me connecter ?',
    });
    expect(all.body.data.answer).toEqual({ en: 'With your address.' });
    expect(all.body.data._locales).toBeUndefined();
    expect(all.headers.get('content-language')).toBeNull();

    // null clears one locale; the others stay.
    await call('PATCH', `/api/v1/faqs/${made.id}`, { question: { fr: null } });
    const after = await call('GET', `/api/v1/faqs/${made.id}?locale=*`);
    expect(Object.keys(after.body.data.question).sort()).toEqual(['de', 'en']);
  });

  it('validates each locale, requires the default locale only, and keeps unique values per locale', async () => {
    const missing = await call('POST', '/api/v1/faqs?locale=de', { question: 'Nur Deutsch?' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details).toHaveProperty('question.en');
    const tooLong = await call('POST', '/api/v1/faqs', { question: { en: 'ok', de: 'x'.repeat(301) } });
    expect(tooLong.status).toBe(400);
    expect(Object.keys(tooLong.body.error.details)).toEqual(['question.de']);
    const unknownLocale = await call('POST', '/api/v1/faqs', { question: { en: 'ok', it: 'ciao' } });
    expect(unknownLocale.status).toBe(400);
    const badParameter = await call('GET', '/api/v1/faqs?locale=xx');
    expect(badParameter.status).toBe(400);
    expect(badParameter.body.error.details.locale).toMatch(/en, de, fr/);
    const clearDefault = await faq({ question: 'Kept?' });
    const cleared = await call('PATCH', `/api/v1/faqs/${clearDefault.id}`, { question: { en: null } });
    expect(cleared.status).toBe(400);

    await faq({ question: 'Unique one', slug: { en: 'same-slug', de: 'gleich' } });
    // The same slug in another locale is another value.
    await faq({ question: 'Unique two', slug: { de: 'same-slug' } });
    const clash = await call('POST', '/api/v1/faqs?locale=de', { question: { en: 'Unique three' }, slug: 'gleich' });
    expect(clash.status).toBe(409);
    expect(JSON.stringify(clash.body.error)).toMatch(/slug/);
  });

  it('filters, sorts, searches and aggregates in the requested locale', async () => {
    const a = await faq({
      question: { en: 'Alpha billing', de: 'Zahlung Alpha' },
      topic: 'billing',
      position: { en: 1, de: 9 },
    });
    const b = await faq({
      question: { en: 'Zulu billing', de: 'Abrechnung Zulu' },
      topic: 'billing',
      position: { en: 2, de: 3 },
    });
    const ids = (res: { body: { data: { items: { id: string }[] } } }) => res.body.data.items.map((r) => r.id);

    const byDe = await call('GET', '/api/v1/faqs?topic=billing&locale=de&sort=question');
    expect(byDe.status, JSON.stringify(byDe.body)).toBe(200);
    expect(ids(byDe)).toEqual([b.id, a.id]);
    expect(byDe.body.data.items[0].question).toBe('Abrechnung Zulu');
    const byEn = await call('GET', '/api/v1/faqs?topic=billing&sort=question');
    expect(ids(byEn)).toEqual([a.id, b.id]);
    const selected = await call('GET', '/api/v1/faqs?topic=billing&locale=de&select=topic');
    expect(selected.body.data.items[0]).toEqual({ id: expect.any(String), topic: 'billing' });
    const byPosition = await call('GET', '/api/v1/faqs?topic=billing&locale=de&sort=-position');
    expect(ids(byPosition)).toEqual([a.id, b.id]);

    const filtered = await call('GET', `/api/v1/faqs?locale=de&question=${encodeURIComponent('Zahlung Alpha')}`);
    expect(ids(filtered)).toEqual([a.id]);
    expect((await call('GET', `/api/v1/faqs?question=${encodeURIComponent('Zahlung Alpha')}`)).body.data.items).toEqual(
      [],
    );

    const searched = await call('GET', '/api/v1/faqs?q=Abrechnung&locale=de');
    expect(ids(searched)).toEqual([b.id]);
    // A search in one locale looks at that locale's words only.
    expect(ids(await call('GET', '/api/v1/faqs?q=abrech'))).toEqual([]);
    expect(ids(await call('GET', '/api/v1/faqs?q=zulu%20bill&locale=en'))).toEqual([b.id]);
    expect(ids(await call('GET', '/api/v1/faqs?q=abrech&locale=*'))).toEqual([b.id]);
    const counted = await call('GET', '/api/v1/faqs/aggregate?q=zahlung&locale=de');
    expect(counted.body.data.groups).toEqual([{ key: {}, count: 1 }]);
    expect((await call('GET', '/api/v1/faqs/aggregate?q=zahlung&locale=en')).body.data.groups).toEqual([
      { key: {}, count: 0 },
    ]);

    const sums = await call('GET', '/api/v1/faqs/aggregate?topic=billing&groupBy=topic&sum=position&locale=de');
    expect(sums.status, JSON.stringify(sums.body)).toBe(200);
    expect(sums.body.data.groups).toEqual([{ key: { topic: 'billing' }, count: 2, sum: { position: 12 } }]);
    const sumsEn = await call('GET', '/api/v1/faqs/aggregate?topic=billing&groupBy=topic&sum=position');
    expect(sumsEn.body.data.groups[0].sum.position).toBe(3);
  });

  it('keeps history per locale and reverts every locale', async () => {
    const made = await faq({ question: { en: 'Versioned', de: 'Versioniert' } });
    await call('PATCH', `/api/v1/faqs/${made.id}?locale=de`, { question: 'Geändert' });
    const versions = await call('GET', `/api/v1/faqs/${made.id}/versions`);
    expect(versions.status).toBe(200);
    expect(versions.body.items[0].changedFields).toEqual(['question.de']);
    const compared = await call('GET', `/api/v1/faqs/${made.id}/versions/compare?a=1&b=2`);
    expect(
      compared.body.changes.filter((c: { field: string; changed: boolean }) => c.changed && c.field !== 'updatedAt'),
    ).toEqual([{ field: 'question.de', oldValue: 'Versioniert', newValue: 'Geändert', changed: true }]);
    await call('PATCH', `/api/v1/faqs/${made.id}?locale=fr`, { question: 'Nouveau' });
    const reverted = await call('POST', `/api/v1/faqs/${made.id}/revert/1`, {});
    expect(reverted.status, JSON.stringify(reverted.body)).toBe(200);
    const now = await call('GET', `/api/v1/faqs/${made.id}?locale=*`);
    expect(now.body.data.question).toEqual({ en: 'Versioned', de: 'Versioniert' });
  });

  it("reads a version taken before the field was localized as the default locale's value", async () => {
    const made = await faq({ question: { en: 'Now', de: 'Jetzt' } });
    // As a version written while `question` was a plain field holds it.
    const [first] = await server.ctx.store.find(ENTITY_VERSIONS, {
      where: { field: 'entityId', op: 'eq', value: made.id },
    });
    await server.ctx.store.update(ENTITY_VERSIONS, first.id, {
      snapshot: { ...(first.snapshot as object), question: 'Before' },
    });
    await call('PATCH', `/api/v1/faqs/${made.id}`, { question: { en: 'Later' } });
    const compared = await call('GET', `/api/v1/faqs/${made.id}/versions/compare?a=1&b=2`);
    expect(compared.body.changes.find((c: { field: string }) => c.field === 'question.en')).toMatchObject({
      oldValue: 'Before',
      newValue: 'Later',
    });
    expect((await call('POST', `/api/v1/faqs/${made.id}/revert/1`, {})).status).toBe(200);
    const now = await call('GET', `/api/v1/faqs/${made.id}?locale=*`);
    expect(now.body.data.question).toEqual({ en: 'Before' });
  });

  it('answers batched records and lists in the requested locale', async () => {
    const batch = await call('POST', '/api/v1/batch', {
      operations: [
        { op: 'create', entity: 'faqs', body: { question: 'Batched' } },
        { op: 'update', entity: 'faqs', id: '$0.id', body: { question: { de: 'Gebündelt' } } },
      ],
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    expect(batch.body.data.results[1].body.data.question).toEqual({ en: 'Batched', de: 'Gebündelt' });
    const list = await call('GET', '/api/v1/faqs?locale=de&limit=100');
    expect(
      list.body.data.items.find((r: { id: string }) => r.id === batch.body.data.results[0].body.data.id),
    ).toMatchObject({
      question: 'Gebündelt',
      _locales: { question: 'de' },
    });
  });

  it('leaves answers without localized values alone: no Content-Language, no Vary on Accept-Language', async () => {
    const made = await call('POST', '/api/v1/articles', { title: 'Plain', body: 'Not localized' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const read = await call('GET', `/api/v1/articles/${made.body.data.id}`, undefined, { 'accept-language': 'de' });
    expect(read.status).toBe(200);
    expect(read.headers.get('content-language')).toBeNull();
    expect(read.headers.get('vary') ?? '').not.toMatch(/Accept-Language/);
    expect(read.body.data._locales).toBeUndefined();
    // ?locale is still checked the same way everywhere.
    expect((await call('GET', `/api/v1/articles/${made.body.data.id}?locale=de`)).status).toBe(200);
    const unknown = await call('GET', `/api/v1/articles/${made.body.data.id}?locale=xx`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details).toHaveProperty('locale');
  });
});
