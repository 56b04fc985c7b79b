import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    alias: { 'entigen/runtime': fileURLToPath(new URL('./runtime/index.ts', import.meta.url)) },
  },
  test: {
    include: ['{bin,generator,runtime,test}/**/*.test.ts'],
    // The PostgreSQL conformance suite belongs to `npm run test:postgres`, which needs the server.
    // The packaging tests (npm pack, a git clone installed without dev dependencies) belong to `npm run test:package`.
    exclude: [
      '**/node_modules/**',
      ...(process.env.TEST_STORE === 'postgres' ? [] : ['test/conformance/postgres.test.ts']),
      ...(process.env.TEST_PACKAGE === '1' ? [] : ['test/package/**']),
    ],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    globalSetup: ['test/support/globalSetup.ts'],
  },
});
