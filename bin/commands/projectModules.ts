import { existsSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, extname, join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import { packageRoot } from '../../runtime/model/packageRoot.js';
import { cacheDir, sha1 } from './cacheDir.js';

/**
 * The project's own modules (generated/, the hooks and endpoints it imports, the job handlers)
 * compiled once into plain JavaScript and kept in a cache, so a server imports them without a
 * TypeScript loader: no loader thread, no compiler in the process, and one copy of the runtime.
 * A later start whose sources are unchanged imports the cache without compiling anything.
 *
 * Compiling keeps what the sources would see under tsx: `import.meta.url` (and `dirname`,
 * `filename`) name the source file, packages stay separate modules (imported from where the
 * project resolves them), and `entigen/runtime` is the runtime this process runs. Sources the
 * bundle could not keep faithful (an `import()` of a computed path, `import.meta.resolve`), a
 * compile error, a cache nowhere writable, or ENTIGEN_LOADER=tsx load through tsx as before.
 */
export async function importProjectModules(
  root: string,
  entries: string[],
): Promise<{ modules: unknown[]; loaded: LoadedFrom }> {
  const compiled =
    process.env.ENTIGEN_LOADER === 'tsx'
      ? { reason: 'ENTIGEN_LOADER=tsx' }
      : await compiledEntries(root, entries).catch((error: Error) => ({ reason: error.message }));
  // Source maps are written beside: `NODE_OPTIONS=--enable-source-maps` turns stack traces
  // back to the sources (off by default: parsing them costs every process ~6 MB of heap).
  if ('files' in compiled)
    return {
      modules: await Promise.all(compiled.files.map((file) => import(pathToFileURL(file).href))),
      loaded: { loader: 'bundle', from: compiled.from, dir: dirname(compiled.files[0]) },
    };
  return {
    modules: await Promise.all(entries.map((entry) => tsImport(pathToFileURL(entry).href, import.meta.url))),
    loaded: { loader: 'tsx', reason: compiled.reason },
  };
}

/** How the project's modules were loaded, for the server's log. */
export type LoadedFrom =
  | { loader: 'bundle'; from: 'cache' | 'compiled'; dir: string }
  | { loader: 'tsx'; reason: string };

/** What a cached compile holds: the output for each entry and the sources it was made of. */
interface Manifest {
  format: number;
  entries: Record<string, string>;
  /** Every file written (entries, shared chunks, source maps). */
  outputs: string[];
  /** Every source read, by absolute path, with the sha1 of its text. */
  inputs: Record<string, string>;
}

/** Changes when the shape of the cache or the compile's options change. */
const FORMAT = 2;
/** Outputs no manifest names are removed after this long (another process may still import them). */
const STALE_MS = 10 * 60_000;
/** An `import()` of anything but a string literal: the bundle would resolve it from the cache, or guess. */
const COMPUTED_IMPORT = /\bimport\s*\(\s*(?!['"][^'"`]*['"]\s*[,)])/;
/** The runtime the compiled modules import as `entigen/runtime`: this process's own. */
const RUNTIME = new URL('../../runtime/index.js', import.meta.url).href;

/** The compiled file of each entry, from the cache when its sources are unchanged; else why tsx must load them. */
export async function compiledEntries(
  root: string,
  entries: string[],
): Promise<{ files: string[]; from: 'cache' | 'compiled' } | { reason: string }> {
  // The compile's own settings: entigen's package.json (its version, esbuild's range) and the project's tsconfig.
  const settings = [join(packageRoot, 'package.json'), join(root, 'tsconfig.json')].map((file) =>
    existsSync(file) ? sha1(readFileSync(file, 'utf8')) : '',
  );
  const key = sha1(JSON.stringify({ FORMAT, RUNTIME, entries, settings, node: process.versions.modules }));
  const dir = cacheDir(root, key.slice(0, 16));
  if (!dir) return { reason: 'no folder for the cache takes a file (set ENTIGEN_MODULE_CACHE)' };
  const manifestPath = join(dir, 'manifest.json');
  const cached = readManifest(manifestPath);
  if (cached && fresh(cached, dir))
    return { files: entries.map((entry) => join(dir, cached.entries[entry])), from: 'cache' };

  const made = await compile(root, entries, dir);
  if (typeof made === 'string') return { reason: made };
  for (const [name, text] of made.files) writeAtomically(join(dir, name), text);
  const manifest: Manifest = {
    format: FORMAT,
    entries: made.entries,
    outputs: [...made.files.keys()],
    inputs: made.inputs,
  };
  writeAtomically(manifestPath, JSON.stringify(manifest));
  removeStale(dir, new Set([...made.files.keys(), 'manifest.json']));
  return { files: entries.map((entry) => join(dir, made.entries[entry])), from: 'compiled' };
}

interface Compiled {
  files: Map<string, string>;
  entries: Record<string, string>;
  inputs: Record<string, string>;
}

/** One ESM bundle of the entries (shared modules in shared chunks), packages left to Node; else why not. */
async function compile(root: string, entries: string[], outdir: string): Promise<Compiled | string> {
  const esbuild = await import('esbuild');
  const inputs: Record<string, string> = {};
  let unfaithful: string | undefined;
  try {
    const result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: entries,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      // Packages resolve as Node resolves them (no "module" condition, no "module" field).
      conditions: [],
      mainFields: ['main'],
      target: `node${process.versions.node.split('.')[0]}`,
      outdir,
      entryNames: '[name]-[hash]',
      chunkNames: 'chunk-[hash]',
      outExtension: { '.js': '.mjs' },
      // A CommonJS source among them (a .cts hook) keeps a working require().
      banner: {
        js: "import { createRequire as __entigenRequire } from 'node:module';\nconst require = __entigenRequire(import.meta.url);",
      },
      sourcemap: 'linked',
      write: false,
      metafile: true,
      logLevel: 'silent',
      plugins: [
        {
          name: 'entigen-project',
          setup(build) {
            build.onResolve({ filter: /^entigen\/runtime$/ }, () => ({ path: RUNTIME, external: true }));
            // Packages stay modules of their own: imported by absolute address, so the bundle may live anywhere.
            build.onResolve({ filter: /^[^./]/ }, async (args) => {
              if (args.pluginData === 'inner') return undefined;
              if (isBuiltin(args.path)) return { path: args.path, external: true };
              const found = await build.resolve(args.path, {
                kind: args.kind,
                importer: args.importer,
                resolveDir: args.resolveDir,
                pluginData: 'inner',
              });
              if (found.errors.length > 0) return { errors: found.errors };
              // A path alias of the project's own (tsconfig paths) is bundled like any source.
              if (!found.path.split(sep).includes('node_modules')) return { path: found.path };
              // require() takes a path, import an address.
              const required = args.kind === 'require-call' || args.kind === 'require-resolve';
              return { path: required ? found.path : pathToFileURL(found.path).href, external: true };
            });
            build.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, (args) => {
              const text = readFileSync(args.path, 'utf8');
              inputs[args.path] = sha1(text);
              if (text.includes('import.meta.resolve') || COMPUTED_IMPORT.test(text))
                unfaithful = `${relative(root, args.path)} uses import.meta.resolve or an import() of a computed path`;
              return { contents: withSourceAddress(text, args.path), loader: loaderOf(args.path) };
            });
            build.onLoad({ filter: /\.json$/ }, (args) => {
              const text = readFileSync(args.path, 'utf8');
              inputs[args.path] = sha1(text);
              return { contents: text, loader: 'json' };
            });
          },
        },
      ],
    });
    if (unfaithful) return unfaithful;
    const dynamic = result.warnings.find((w) => w.id === 'unsupported-dynamic-import');
    if (dynamic) return `${dynamic.location?.file ?? 'a module'}: ${dynamic.text}`;
    const files = new Map<string, string>();
    for (const file of result.outputFiles) files.set(relative(outdir, file.path), file.text);
    const entryOf: Record<string, string> = {};
    for (const [output, meta] of Object.entries(result.metafile.outputs))
      if (meta.entryPoint) entryOf[join(root, meta.entryPoint)] = relative(outdir, join(root, output));
    const named = Object.fromEntries(entries.map((entry) => [entry, entryOf[entry]]));
    if (Object.values(named).some((name) => !name)) return 'the compile made no module for an entry';
    return { files, entries: named, inputs };
  } catch (error) {
    // A compile error: tsx loads the sources and reports it as it always did.
    return `the compile failed: ${(error as Error).message.split('\n')[0]}`;
  } finally {
    await esbuild.stop();
  }
}

/** The source's own address wherever it asks for it, as tsx would give it. */
function withSourceAddress(text: string, path: string): string {
  if (!text.includes('import.meta.')) return text;
  return text
    .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href))
    .replaceAll('import.meta.dirname', JSON.stringify(dirname(path)))
    .replaceAll('import.meta.filename', JSON.stringify(path));
}

function loaderOf(path: string): 'ts' | 'tsx' | 'js' | 'jsx' {
  const ext = extname(path);
  if (ext === '.tsx') return 'tsx';
  if (ext === '.jsx') return 'jsx';
  return ext.includes('t') ? 'ts' : 'js';
}

function readManifest(path: string): Manifest | undefined {
  try {
    const manifest = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
    return manifest.format === FORMAT ? manifest : undefined;
  } catch {
    return undefined;
  }
}

/** Every output still there, and every source unchanged. */
function fresh(manifest: Manifest, dir: string): boolean {
  if (!manifest.outputs.every((name) => existsSync(join(dir, name)))) return false;
  for (const [path, hash] of Object.entries(manifest.inputs)) {
    try {
      if (sha1(readFileSync(path, 'utf8')) !== hash) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** Written beside, then renamed: a process starting meanwhile sees the old file or the new, never half. */
function writeAtomically(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

function removeStale(dir: string, keep: Set<string>): void {
  const now = Date.now();
  for (const name of readdirSync(dir)) {
    if (keep.has(name)) continue;
    try {
      const path = join(dir, name);
      if (now - statSync(path).mtimeMs > STALE_MS) unlinkSync(path);
    } catch {
      // Removed by another process meanwhile.
    }
  }
}
