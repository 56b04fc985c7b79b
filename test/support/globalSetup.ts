import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Integration tests run the real CLI from dist/, so compile it once before any test. */
export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
}
