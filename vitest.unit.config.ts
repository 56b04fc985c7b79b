import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// `npm run test:unit`: the tests beside the code and the architecture test, from the sources,
// without compiling dist/ first (no CLI, no server): the fast loop while editing.
export default defineConfig({
  resolve: {
    alias: { 'entigen/runtime': fileURLToPath(new URL('./runtime/index.ts', import.meta.url)) },
  },
  test: {
    include: ['{bin,generator,runtime}/**/*.test.ts', 'test/architecture/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    testTimeout: 30_000,
  },
});
