import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    alias: { 'entigen/runtime': fileURLToPath(new URL('./runtime/index.ts', import.meta.url)) },
  },
  test: {
    include: ['{bin,generator,runtime,test}/**/*.test.ts'],
    // The PostgreSQL conformance suite belongs to `npm run test:postgres`, which needs the server.
    exclude: process.env.TEST_STORE === 'postgres' ? ['**/node_modules/**'] : ['**/node_modules/**', 'test/conformance/postgres.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    globalSetup: ['test/support/globalSetup.ts'],
  },
});
