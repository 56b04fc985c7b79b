import { describe, expect, it } from 'vitest';
import { registry } from '../../generated/index.js';
import { modelFromInputs } from '../../generator/build.js';
import { packageEntityFiles } from '../../generator/readInputs.js';
import { ALL_ROUTES } from '../api/index.js';
import type { RuntimeConfig } from '../config/runtimeConfig.js';
import { SqliteStore } from '../store/sqlite/sqliteStore.js';
import { seeingTrash } from '../store/trashStore.js';
import type { Feature, FeatureWork, WorkDeps } from './feature.js';
import { FEATURES, FeatureWorks, featureRules, featureStore, featuresOf, serverJobs } from './features.js';

/** The built-in entities and one plain entity of an app's own: no tracked field, no search, no trash. */
const bare = modelFromInputs({
  entityFiles: [
    ...packageEntityFiles('builtin', 'builtin'),
    {
      file: 'notes.yaml',
      text: 'version: 1\nname: Note\nplural: notes\nbase: owned\nfields:\n  text: { type: string }\n',
      origin: 'app',
    },
  ],
});
const example = registry.model;
const config = (backups?: RuntimeConfig['backups']) =>
  ({ webhooks: { allowPrivateTargets: false }, backups }) as RuntimeConfig;

describe('the features', () => {
  it('are named once, and each route of the runtime belongs to at most one of them', () => {
    const names = FEATURES.map((f) => f.name);
    expect(new Set(names).size).toBe(names.length);
    const owned = FEATURES.flatMap((f) => f.routes ?? []);
    expect(new Set(owned).size).toBe(owned.length);
    for (const route of owned) expect(ALL_ROUTES).toContain(route);
  });

  it('are on exactly where their routes are declared: the document and the server agree', () => {
    for (const model of [bare, example]) {
      for (const feature of FEATURES) {
        for (const route of feature.routes ?? [])
          expect(route.when?.(model) ?? true, `${feature.name}: ${route.operationId}`).toBe(
            feature.enabled(model, config()),
          );
      }
    }
  });

  it('turn on with what the app has: its entities, its files, its config', () => {
    const on = (model: typeof bare, settings = config()) => featuresOf(model, settings).map((f) => f.name);
    expect(on(bare)).not.toContain('approvals');
    expect(on(bare)).not.toContain('search');
    expect(on(bare)).not.toContain('trash');
    expect(on(example)).toEqual(expect.arrayContaining(['approvals', 'search', 'trash', 'jobs', 'webhooks']));
    expect(on(bare)).not.toContain('backups');
    expect(on(example)).not.toContain('mcp');
    expect(on(bare, { ...config(), mcp: { enabled: true } } as RuntimeConfig)).toContain('mcp');
    expect(on(bare, config({ schedule: '1d', scheduleType: 'interval', keep: 3, to: 'b/', logical: false }))).toContain(
      'backups',
    );
  });

  it("give the server the jobs of the features that are on, each with its handler's name", () => {
    expect(serverJobs(bare, config())).toEqual([]);
    const handlers = serverJobs(example, config()).map((job) => job.schedule.handler);
    expect(handlers).toEqual(['entigenTrashPurge']);
  });

  it('compose the rules of the entities the model has, and only those', () => {
    const rules = featureRules(bare);
    expect([...rules.keys()].sort()).toEqual(['hookDeliveries', 'scheduledJobs', 'webhookDeliveries', 'webhooks']);
    expect([...featureRules(example).keys()]).toEqual(expect.arrayContaining(['webhooks', 'scheduledJobs']));
  });

  it('keep their records in collections the package ships, each collection with one feature', () => {
    const collections = FEATURES.flatMap((f) => f.entities ?? []);
    expect(new Set(collections).size).toBe(collections.length);
    for (const feature of FEATURES)
      for (const plural of feature.entities ?? [])
        expect(
          example.entities.some((e) => e.plural === plural) || bare.entities.some((e) => e.plural === plural),
          `${feature.name}: ${plural}`,
        ).toBe(true);
  });

  it('wrap the store as the model asks: the trash out of sight, locales folded, nothing for a plain app', async () => {
    const raw = SqliteStore.open(':memory:');
    try {
      expect(featureStore(raw, bare)).toBe(raw);
      const wrapped = featureStore(raw, example);
      expect(wrapped).not.toBe(raw);
      // The trash wraps outermost; behind it, the locales' folding, then the opened store.
      const seeing = seeingTrash(wrapped);
      expect(seeing).not.toBe(wrapped);
      expect(seeing).not.toBe(raw);
      expect(
        featuresOf(example)
          .filter((f) => f.store)
          .map((f) => f.name),
      ).toEqual(['locales', 'trash']);
    } finally {
      await raw.close();
    }
  });

  it("start, tell, stop and ask each feature's work, and hand each router its own", async () => {
    const calls: string[] = [];
    const work = (name: string, settled: number): FeatureWork => ({
      start: () => void calls.push(`${name} start`),
      stop: async () => void calls.push(`${name} stop`),
      notify: (entity) => void calls.push(`${name} heard ${entity}`),
      deliveredUpTo: async (upTo) => Math.min(upTo, settled),
    });
    const one: Feature = { name: 'one', enabled: () => true, work: () => work('one', 7) };
    const two: Feature = {
      name: 'two',
      enabled: () => true,
      work: () => work('two', 4),
      routers: (_deps, own) => (own ? [['/two', (() => undefined) as never]] : []),
    };
    const works = new FeatureWorks([one, two, { name: 'idle', enabled: () => true }], {} as WorkDeps);
    await works.start();
    works.notify('notes');
    expect(await works.deliveredUpTo(10)).toBe(4);
    expect(await works.deliveredUpTo(2)).toBe(2);
    expect(works.routers({} as never).map(([prefix]) => prefix)).toEqual(['/two']);
    expect(works.of(one)).toBeDefined();
    await works.stop();
    expect(calls).toEqual(['one start', 'two start', 'one heard notes', 'two heard notes', 'one stop', 'two stop']);
    // The built-in consumers of the event log are features' work.
    expect(
      featuresOf(example)
        .filter((f) => f.work)
        .map((f) => f.name),
    ).toEqual(['webhooks', 'hooks']);
  });

  it('describe their own environment variables, each with a group and a description', () => {
    for (const feature of FEATURES)
      for (const variable of feature.env ?? []) {
        expect(variable.description.length, `${feature.name}: ${variable.name}`).toBeGreaterThan(10);
        expect(variable.name).toMatch(/^[A-Z][A-Z0-9_]+$/);
      }
    expect(FEATURES.find((f) => f.name === 'media')?.env?.map((v) => v.name)).toContain('UPLOADS_DRIVER');
  });
});
