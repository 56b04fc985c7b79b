import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Integration tests run the real CLI from dist/, so compile it once before any test (and bundle
 * TypeBox's type builder and write the shape validators, as the package's own build does). The
 * compile runs beside vitest's main process, not inside it: a synchronous one would block that
 * process, and workers of other projects already running would time out reporting to it
 * ("Timeout calling onTaskUpdate").
 */
export default async function setup(): Promise<void> {
  // A vitest a test starts itself (npm test's script, stopped) uses the dist/ its parent built:
  // compiling again would change the files under the parent's other tests.
  if (process.env.ENTIGEN_TEST_DIST_BUILT === '1') return;
  const root = fileURLToPath(new URL('../..', import.meta.url));
  await new Promise<void>((resolve, reject) => {
    // Incremental, with its record inside dist/: the suites after the first compile only what
    // changed, and a dist/ removed (npm ci's prepare does) takes its record with it.
    const tsc = spawn(
      process.execPath,
      [
        `${root}node_modules/typescript/bin/tsc`,
        '-p',
        'tsconfig.build.json',
        '--incremental',
        '--tsBuildInfoFile',
        'dist/.tsbuildinfo',
      ],
      { cwd: root, stdio: 'inherit' },
    );
    tsc.on('error', reject);
    tsc.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tsc -p tsconfig.build.json exited ${code}`))));
  });
  // What npm run build:ts and prepare do after the compile, so the tests run what ships.
  const bundler = (await import(`${root}scripts/bundleTypebox.mjs`)) as { bundleTypebox(): Promise<void> };
  await bundler.bundleTypebox();
  const shapes = (await import(`${root}scripts/compileShapeValidators.mjs`)) as {
    compileShapeValidators(): Promise<void>;
  };
  await shapes.compileShapeValidators();
}
