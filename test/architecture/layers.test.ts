import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.js';
import { folderGraph, importCycles, importGraph, sourceFiles } from './importGraph.js';

// The picture of ARCHITECTURE.md as a test: the source files of runtime/, generator/ and bin/ (tests
// aside) and their relative imports, type-only ones included.
const graph = importGraph(repoRoot, ['runtime', 'generator', 'bin']);
const edges = [...graph].flatMap(([from, targets]) => targets.map((to) => ({ from, to })));

/** What the generator may use of the runtime: the shared vocabulary, nothing that runs a server. */
const GENERATOR_MAY_IMPORT = [
  /^runtime\/model\//,
  /^runtime\/api\//,
  /^runtime\/errors\//,
  /^runtime\/access\/(parsePermission|permissionCondition)\.ts$/,
];

/**
 * The folders of runtime/ from the ground up, as ARCHITECTURE.md draws them: a folder imports
 * only folders of the layers below its own, never one beside it or above.
 */
const RUNTIME_LAYERS = [
  ['errors/', 'model/', 'telemetry/'],
  ['config/', 'crypto/', 'store/'],
  ['cluster/', 'files/', 'query/', 'repository.ts'],
  ['context/'],
  ['access/', 'health/', 'media/'],
  ['api/', 'write/'],
  ['entities/', 'mail/', 'migrations/'],
  ['auth/', 'events/', 'features/', 'history/', 'jobs/', 'mcp/', 'transfer/'],
  ['backup/', 'http/'],
  ['server/'],
  ['index.ts'],
];
const folders = folderGraph(graph, 'runtime');

describe('layers', () => {
  it('reads the whole source tree', () => {
    expect(graph.size).toBeGreaterThan(150);
    expect(graph.get('runtime/http/createApp.ts')).toContain('runtime/http/authRoutes.ts');
  });

  it('load the image library and the AWS SDK only when a thumbnail or a bucket needs them', () => {
    // A server keeping files on disk and never asked for a thumbnail holds neither in memory.
    const eager = /^\s*import\s+(?!type\s)[^;]*?from\s+['"](sharp|@aws-sdk\/[^'"]+)['"]/m;
    const loading = sourceFiles(repoRoot, ['runtime', 'bin']).filter((file) =>
      eager.test(readFileSync(join(repoRoot, file), 'utf8')),
    );
    expect(loading).toEqual([]);
  });

  it('load the MCP SDK only when the MCP server answers its first request', () => {
    // A server with /mcp off (the default) holds neither the SDK nor what it brings (zod, hono).
    const eager = /^\s*import\s+(?!type\s)[^;]*?from\s+['"]@modelcontextprotocol\/[^'"]+['"]/m;
    const loading = sourceFiles(repoRoot, ['runtime', 'bin']).filter((file) =>
      eager.test(readFileSync(join(repoRoot, file), 'utf8')),
    );
    expect(loading).toEqual(['runtime/mcp/mcpServer.ts']);
    // And nothing imports that file but by import(), when the first request comes.
    const importsServer = /^\s*import\s+(?!type\s)[^;]*?from\s+['"][^'"]*\/mcpServer\.js['"]/m;
    const importers = sourceFiles(repoRoot, ['runtime', 'bin']).filter((file) =>
      importsServer.test(readFileSync(join(repoRoot, file), 'utf8')),
    );
    expect(importers).toEqual([]);
    expect(readFileSync(join(repoRoot, 'runtime/http/mcpRoutes.ts'), 'utf8')).toContain(
      "import('../mcp/mcpServer.js')",
    );
  });

  it('load the OpenTelemetry SDK only at a start with traces on, and nothing but its API elsewhere', () => {
    // Every span is made through the API (runtime/telemetry/tracing.ts). The SDK, the exporters
    // and entigen's own span recorder are loaded by startTracing.ts alone, by import(), once an
    // exporter endpoint is configured: the recorder's files may import the SDK's packages.
    // The export thread's entry (exportThread.ts) runs in a worker of its own.
    const loadedOnStart = ['runtime/telemetry/recordedSpan.ts', 'runtime/telemetry/startRecording.ts'];
    const sdk = /^\s*import\s+(?!type\s)[^;]*?from\s+['"]@opentelemetry\/(?!api['"])[^'"]+['"]/m;
    const files = sourceFiles(repoRoot, ['runtime', 'bin']).filter((file) => !file.endsWith('.test.ts'));
    expect(files.filter((file) => sdk.test(readFileSync(join(repoRoot, file), 'utf8')))).toEqual([
      'runtime/telemetry/exportThread.ts',
      ...loadedOnStart,
    ]);
    const api = /^\s*import\s+(?!type\s)[^;]*?from\s+['"]@opentelemetry\/api['"]/m;
    expect(files.filter((file) => api.test(readFileSync(join(repoRoot, file), 'utf8')))).toEqual([
      ...loadedOnStart,
      'runtime/telemetry/tracing.ts',
    ]);
    // The recorder's files are imported by nothing but each other, and startRecording.ts by import().
    const importsRecorder =
      /^\s*import\s+(?!type\s)[^;]*?from\s+['"][^'"]*\/(recordedSpan|startRecording|spanExporter|exportThread)\.js['"]/m;
    expect(
      files.filter(
        (file) => !loadedOnStart.includes(file) && importsRecorder.test(readFileSync(join(repoRoot, file), 'utf8')),
      ),
    ).toEqual([]);
    const starter = readFileSync(join(repoRoot, 'runtime/telemetry/startTracing.ts'), 'utf8');
    expect(starter).toContain("import('@opentelemetry/sdk-trace-node')");
    expect(starter).toContain("import('./startRecording.js')");
    expect(readFileSync(join(repoRoot, 'runtime/telemetry/spanExporter.ts'), 'utf8')).toContain(
      "new URL('./exportThread.js', import.meta.url)",
    );
  });

  it('have no import cycle among runtime, generator and bin', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it('have no import cycle between the folders of runtime/', () => {
    const arrows = new Map([...folders].map(([folder, targets]) => [folder, [...targets.keys()]]));
    expect(importCycles(arrows)).toEqual([]);
  });

  it('stack the folders of runtime/ in layers: each imports only the layers below it', () => {
    const layerOf = new Map(RUNTIME_LAYERS.flatMap((layer, index) => layer.map((folder) => [folder, index])));
    expect([...folders.keys()].filter((folder) => !layerOf.has(folder)).sort()).toEqual([]);
    const upward = [...folders].flatMap(([folder, targets]) =>
      [...targets].filter(([target]) => layerOf.get(target)! >= layerOf.get(folder)!).map(([, example]) => example),
    );
    expect(upward).toEqual([]);
  });

  it('leave the admin console without an import cycle: shared types sit below the views', () => {
    const admin = importGraph(repoRoot, ['admin/src']);
    expect(admin.size).toBeGreaterThan(20);
    expect(admin.get('admin/src/views/Users.tsx')).toContain('admin/src/apiTypes.ts');
    expect(importCycles(admin)).toEqual([]);
  });

  it('write through one pipeline: outside write/, nothing runs a write stage itself', () => {
    const stage = /^runtime\/write\/(runHooks|storeWrite|checkReferences|referentialActions)\.ts$/;
    const crossing = edges.filter(({ from, to }) => !from.startsWith('runtime/write/') && stage.test(to));
    expect(crossing.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
    const writing = sourceFiles(repoRoot, ['runtime', 'bin'])
      .filter((file) => !file.startsWith('runtime/write/'))
      .filter((file) => /\b(appendEvents|recordChange)\(/.test(readFileSync(join(repoRoot, file), 'utf8')));
    expect(writing).toEqual([]);
  });

  it('keep HTTP on top: only http/ and server/ import http/ (the generator reads the route declarations in api/)', () => {
    const crossing = edges.filter(
      ({ from, to }) => to.startsWith('runtime/http/') && !/^runtime\/(http|server)\//.test(from),
    );
    expect(crossing.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it("give each feature one home: the server's steps and the app reach its routers, rules and jobs through the feature table", () => {
    const featureParts =
      /^runtime\/(http\/(fieldChangeRoutes|searchRoutes|jobRoutes|mediaRoutes|webhookRoutes)|backup\/backupJob|jobs\/(trashPurge|jobRules)|media\/mediaRules|events\/webhooks\/webhookRules|features\/.*)\.ts$/;
    const crossing = edges.filter(
      ({ from, to }) =>
        (from.startsWith('runtime/server/') || from === 'runtime/http/createApp.ts') &&
        from !== 'runtime/server/features.ts' &&
        featureParts.test(to),
    );
    expect(crossing.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('keep the runtime free of the generator', () => {
    const crossing = edges.filter(({ from, to }) => from.startsWith('runtime/') && to.startsWith('generator/'));
    expect(crossing.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('keep features out of the operations: entities/ imports no feature folder and no feature rules', () => {
    const feature = /^runtime\/(features|jobs|media)\//;
    const crossing = edges.filter(({ from, to }) => from.startsWith('runtime/entities/') && feature.test(to));
    expect(crossing.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('keep the route declarations to the shared vocabulary: the model, the errors, the account permissions', () => {
    const allowed = /^runtime\/(model\/|errors\/|api\/|access\/accountPermissions\.ts$)/;
    const crossing = edges.filter(({ from, to }) => from.startsWith('runtime/api/') && !allowed.test(to));
    expect(crossing.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('let the generator use only the model, the errors and the permission and schedule grammars of the runtime', () => {
    const crossing = edges.filter(
      ({ from, to }) =>
        from.startsWith('generator/') &&
        to.startsWith('runtime/') &&
        !GENERATOR_MAY_IMPORT.some((allowed) => allowed.test(to)),
    );
    expect(crossing.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });
});
