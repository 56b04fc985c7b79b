// Builds the admin console into admin/build/, which is committed and shipped in the package: a
// project that installs entigen serves /admin with no front-end build and no network.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/admin/',
  logLevel: 'warn',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: process.env.ADMIN_OUT_DIR ?? 'build',
    emptyOutDir: true,
    target: 'es2022',
    // One script and one stylesheet: the console is small, and a first view needs both.
    modulePreload: false,
    reportCompressedSize: false,
  },
});
