import { posix, sep } from 'node:path';
import { parse } from 'yaml';
import type { AppModel } from '../runtime/model/types.js';
import { BuildFailure, type Diagnostic, sortDiagnostics } from './diagnostics.js';
import { emitAll } from './emit/emitAll.js';
import type { HookModuleImport } from './emit/emitIndex.js';
import { startValidatorHelper } from './emit/emitValidatorsInParallel.js';
import { openValidatorCache } from './emit/validatorCache.js';
import { changeDiagnostics, coveredChanges, previousModel, uncoveredChanges } from './migrations.js';
import { buildModel, type EntitySource, type RawConfig } from './model/buildModel.js';
import { checkHookFiles } from './model/checkHookFiles.js';
import type { BreakingChange } from './model/diffModels.js';
import { scanExports } from './model/scanExports.js';
import { featureFolders, type HookFile, type Inputs, packageEntityFiles, readInputs } from './readInputs.js';
import { checkShape } from './schema/checkShape.js';
import { loadYaml, type SourceFile } from './schema/loadYaml.js';
import { ParsedYamlCache } from './schema/parsedYamlCache.js';
import type { OutputWriter } from './writeOutput.js';

export interface BuildOptions {
  /** Project folder; paths in messages are relative to it. */
  root: string;
  entitiesDir?: string;
  /** Output folder: its metadata.json is the previous model that breaking changes are measured against. */
  outDir?: string;
  /** Told each stage as it ends, with the milliseconds since the build began. */
  onProgress?: (stage: string, elapsedMs: number) => void;
  /**
   * Writes the files as soon as they are made, while the rest are still being made; the caller
   * finishes it. Nothing is written when the model has a problem.
   */
  writer?: OutputWriter;
  /** Where to keep what the files' texts read into, so a later build parses only the changed ones. */
  cacheDir?: string;
  /**
   * What the database holds, asked when a breaking change has no migration: the change passes
   * when the project was never served or its database holds no records of the app's entities,
   * and with `resetBaseline` when none of the changed entities holds records.
   */
  records?(plurals: readonly string[]): Promise<DatabaseRecords | undefined>;
  /** `entigen build --reset-baseline`: the current files become the baseline where no records are at stake. */
  resetBaseline?: boolean;
  /** Told of each breaking change let through without a migration, and why. */
  onAccepted?(message: string): void;
}

/** What the database holds of the app's entities (see BuildOptions.records). */
export type DatabaseRecords =
  | { served: false; where: string }
  | { served: true; where: string; counts: Map<string, number> };

export interface BuildOutput {
  model: AppModel;
  /** Output path (relative to the output folder) -> file text. */
  files: Map<string, string>;
}

/** Reads the project's entity files and returns every generated file; writes nothing. Rejects with BuildFailure. */
export async function build(options: BuildOptions): Promise<BuildOutput> {
  const entitiesDir = options.entitiesDir ?? 'entities';
  const started = performance.now();
  const progress = (stage: string) => options.onProgress?.(stage, Math.round(performance.now() - started));
  const inputs = readInputs(options.root, entitiesDir);
  if (options.cacheDir) {
    inputs.parsedYaml = ParsedYamlCache.open(options.cacheDir);
    inputs.validators = openValidatorCache(options.cacheDir);
  }
  progress(`read ${inputs.entityFiles.filter((f) => f.origin === 'app').length} entity files`);
  return buildFromInputs(inputs, progress, options.outDir ?? 'generated', {
    // Breaking changes without a migration are refused before any file is made, unless no
    // record is at stake (a project never served, an empty database, or --reset-baseline).
    async checkModel(model) {
      const previous = previousModel(options.root, options.outDir ?? 'generated');
      const uncovered = uncoveredChanges(previous, model, coveredChanges(options.root));
      if (uncovered.length === 0) return;
      const refused = await withoutRecords(uncovered, previous!, options);
      if (refused.length > 0)
        throw new BuildFailure(
          sortDiagnostics(changeDiagnostics(refused, (plural) => fileOfEntity(inputs, plural) ?? entitiesDir)),
        );
    },
    writer: options.writer,
  });
}

/** The changes that still need a migration once the database has said what it holds. */
async function withoutRecords(
  changes: BreakingChange[],
  previous: AppModel,
  options: BuildOptions,
): Promise<BreakingChange[]> {
  if (!options.records) return changes;
  const app = previous.entities.filter((entity) => !entity.internal).map((entity) => entity.plural);
  const held = await options.records(app);
  if (!held) return changes;
  const pass = (why: string, passed: BreakingChange[]) => {
    for (const change of passed) options.onAccepted?.(`${change.key}: no migration needed, ${why}`);
  };
  if (!held.served) {
    pass(`the database (${held.where}) was never served`, changes);
    return [];
  }
  if (app.every((plural) => (held.counts.get(plural) ?? 0) === 0)) {
    pass(`the database (${held.where}) holds no records`, changes);
    return [];
  }
  if (!options.resetBaseline) return changes;
  const atStake = (change: BreakingChange) => (held.counts.get(change.entity) ?? 0) > 0;
  pass(
    `--reset-baseline, and ${held.where} holds no records of its entity`,
    changes.filter((c) => !atStake(c)),
  );
  return changes.filter(atStake).map((change) => ({
    ...change,
    description: `${change.description} (--reset-baseline refused: ${held.where} holds ${held.counts.get(change.entity)} ${change.entity} records)`,
  }));
}

function fileOfEntity(inputs: Inputs, plural: string): string | undefined {
  return inputs.entityFiles.find(
    (f) => f.origin === 'app' && (parse(f.text) as { plural?: unknown } | null)?.plural === plural,
  )?.file;
}

export interface BuildStages {
  /** Runs on the finished model before anything is emitted; throws BuildFailure to stop the build. */
  checkModel?: (model: AppModel) => void | Promise<void>;
  writer?: OutputWriter;
}

export async function buildFromInputs(
  inputs: Inputs,
  progress: (stage: string) => void = () => undefined,
  outDir = 'generated',
  stages: BuildStages = {},
): Promise<BuildOutput> {
  const helper = startValidatorHelper(inputs.entityFiles.length);
  try {
    const model = checkedModel(inputs);
    await stages.checkModel?.(model);
    progress(`modelled ${model.entities.length} entities`);
    const extras = { hookModules: hookModules(inputs.hookFiles ?? [], outDir) };
    const files = await emitAll(model, helper, extras, stages.writer, inputs.validators);
    inputs.validators?.save();
    progress(`generated ${files.size} files`);
    return { model, files };
  } finally {
    helper?.stop();
  }
}

/** The model of the inputs, with the hook files checked against it. Rejects with BuildFailure. */
export function checkedModel(inputs: Inputs): AppModel {
  let model: AppModel;
  try {
    model = modelFromInputs(inputs);
  } finally {
    inputs.parsedYaml?.save();
  }
  const hookProblems = checkHookFiles(model, inputs.hookFiles ?? []);
  if (hookProblems.length > 0) throw new BuildFailure(sortDiagnostics(hookProblems));
  return model;
}

/** Each hook module's import path from the output folder (`../hooks/orders.js`), by entity. */
function hookModules(files: readonly HookFile[], outDir: string): HookModuleImport[] {
  return files.map(({ file, plural }) => {
    let path = posix.relative(posix.normalize(outDir.split(sep).join('/')), file).replace(/\.(m?)ts$/, '.$1js');
    if (!path.startsWith('.')) path = `./${path}`;
    return { plural, path };
  });
}

/**
 * Every handler `jobs.schedules` names must be exported by the module `jobs.handlers` names
 * (read, not run: a module whose exports cannot all be named is left to the server's start).
 */
function checkJobHandlers(model: AppModel, config: SourceFile, handlers: Inputs['jobHandlers']): Diagnostic[] {
  const schedules = model.jobSchedules ?? [];
  if (schedules.length === 0) return [];
  if (!handlers)
    return [config.diagnostic(['jobs', 'schedules'], 'needs jobs.handlers: the module that exports the handlers')];
  if (handlers.text === null) return [config.diagnostic(['jobs', 'handlers'], `${handlers.file} does not exist`)];
  const { names, complete } = scanExports(handlers.text);
  if (!complete) return [];
  return schedules
    .filter((job) => !names.has(job.handler))
    .map((job) =>
      config.diagnostic(
        ['jobs', 'schedules', job.name, 'handler'],
        `"${job.handler}" is not exported by ${handlers.file} (exports: ${[...names].sort().join(', ') || 'none'})`,
      ),
    );
}

/** load -> check shape -> model; every problem of every file is collected before failing. */
export function modelFromInputs(inputs: Inputs): AppModel {
  const diagnostics: Diagnostic[] = [];
  let raw: RawConfig = { version: 1 };
  let configSource: SourceFile | undefined;
  if (inputs.config) {
    const loaded = loadYaml(inputs.config.file, inputs.config.text, inputs.parsedYaml);
    diagnostics.push(...loaded.diagnostics);
    if (loaded.source) {
      const problems = checkShape(loaded.source, 'config');
      diagnostics.push(...problems);
      if (problems.length === 0) {
        configSource = loaded.source;
        raw = (loaded.source.data ?? { version: 1 }) as RawConfig;
      }
    }
  }
  const available = new Set(featureFolders());
  const featureFiles = (raw.features ?? [])
    .filter((feature) => available.has(feature))
    .flatMap((feature) => packageEntityFiles(`features/${feature}`, `feature:${feature}`));

  const sources: EntitySource[] = [];
  // The package's own entities first, so a clash with one of them is reported in the app's file.
  const ordered = [
    ...inputs.entityFiles.filter((f) => f.origin !== 'app'),
    ...featureFiles,
    ...inputs.entityFiles.filter((f) => f.origin === 'app'),
  ];
  for (const input of ordered) {
    const loaded = loadYaml(input.file, input.text, inputs.parsedYaml);
    diagnostics.push(...loaded.diagnostics);
    if (!loaded.source) continue;
    if (loaded.source.data === null || typeof loaded.source.data !== 'object' || Array.isArray(loaded.source.data)) {
      diagnostics.push(loaded.source.diagnostic([], 'must be a mapping with version, name, plural and fields'));
      continue;
    }
    const problems = checkShape(loaded.source, 'entity');
    diagnostics.push(...problems);
    const checkable = withoutBrokenParts(loaded.source.data as Record<string, unknown>, problems);
    sources.push({ source: loaded.source, origin: input.origin, valid: problems.length === 0, checkable });
  }
  const { model, diagnostics: modelProblems } = buildModel(sources, { source: configSource, raw });
  diagnostics.push(...modelProblems);
  if (configSource) diagnostics.push(...checkJobHandlers(model, configSource, inputs.jobHandlers));
  if (diagnostics.length > 0) throw new BuildFailure(causesFirst(diagnostics, unmodelled(ordered, model)));
  return model;
}

/** The entities an app's file declares (its `plural:` line) that did not make it into the model, by file. */
function unmodelled(
  files: readonly { file: string; text: string; origin: string }[],
  model: AppModel,
): Map<string, string> {
  const modelled = new Set(model.entities.map((entity) => entity.plural));
  const missing = new Map<string, string>();
  for (const { file, text, origin } of files) {
    if (origin !== 'app') continue;
    const plural = /^plural:\s*["']?([A-Za-z][A-Za-z0-9]*)/m.exec(text)?.[1];
    if (plural && !modelled.has(plural)) missing.set(plural, file);
  }
  return missing;
}

/**
 * The problems a build reports, causes first: the files whose entity could not be modelled lead,
 * and what other files say only because it is missing (an unknown entity, a permission naming
 * it, a filter on a field whose definition is broken) is left out, so the list starts where the
 * fix is. Each cause is still reported where it stands.
 */
function causesFirst(diagnostics: Diagnostic[], missing: Map<string, string>): Diagnostic[] {
  const brokenFields = new Set(
    diagnostics.flatMap((d) => {
      const field = /^fields\.([^.]+)/.exec(d.path)?.[1];
      return field ? [`${d.file}\u0000${field}`] : [];
    }),
  );
  const followOn = (d: Diagnostic) => {
    const field = /unknown field "([^"]+)"/.exec(d.message)?.[1];
    if (field && !d.path.startsWith('fields.') && brokenFields.has(`${d.file}\u0000${field}`)) return true;
    for (const [plural, file] of missing) {
      if (d.file === file) continue;
      if (
        new RegExp(`unknown entity "?${plural}"?(?![A-Za-z0-9])`).test(d.message) ||
        d.message.startsWith(`"${plural}:`)
      )
        return true;
    }
    return false;
  };
  const kept = sortDiagnostics(diagnostics.filter((d) => !followOn(d)));
  const causes = new Set(missing.values());
  return [...kept.filter((d) => causes.has(d.file)), ...kept.filter((d) => !causes.has(d.file))];
}

const SECTIONS = [
  'base',
  'ownership',
  'tenantScoped',
  'versioning',
  'history',
  'internal',
  'filters',
  'search',
  'permissions',
];

/**
 * The parts of a file that passed its shape check, so the semantic checks can still report
 * on them: every problem of a build shows at once. Undefined when the file is beyond that.
 */
function withoutBrokenParts(
  data: Record<string, unknown>,
  problems: Diagnostic[],
): Record<string, unknown> | undefined {
  if (problems.length === 0) return data;
  const broken = problems.map((p) => p.path.split('.'));
  if (
    broken.some(
      (path) =>
        path[0] === '' || path[0] === 'name' || path[0] === 'plural' || (path[0] === 'fields' && path.length === 1),
    )
  ) {
    return undefined;
  }
  if (
    typeof data.name !== 'string' ||
    typeof data.plural !== 'string' ||
    typeof data.fields !== 'object' ||
    data.fields === null
  ) {
    return undefined;
  }
  const fields = { ...(data.fields as Record<string, unknown>) };
  for (const path of broken) if (path[0] === 'fields') delete fields[path[1]];
  const copy: Record<string, unknown> = { ...data, fields };
  for (const path of broken) if (SECTIONS.includes(path[0])) delete copy[path[0]];
  return copy;
}
