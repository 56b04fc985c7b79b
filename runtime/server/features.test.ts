import { describe, expect, it } from 'vitest';
import { registry } from '../../generated/index.js';
import { modelFromInputs } from '../../generator/build.js';
import { packageEntityFiles } from '../../generator/readInputs.js';
import { ALL_ROUTES } from '../api/index.js';
import { ENVIRONMENT_VARIABLES } from '../config/environment.js';
import type { RuntimeConfig } from '../config/runtimeConfig.js';
import { FEATURES, featureRules, featuresOf, serverJobs } from './features.js';

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

  it('read only environment variables the reference describes', () => {
    const described = new Set(ENVIRONMENT_VARIABLES.map((v) => v.name));
    for (const feature of FEATURES)
      for (const name of feature.env ?? []) expect(described, feature.name).toContain(name);
  });
});
