// Builds the admin console into admin/build/, which is committed and shipped in the package: a
// project that installs entigen serves /admin with no front-end build and no network.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
// @ts-expect-error: a plain script of the repository's, without type declarations.
import { precompress } from '../scripts/precompress.mjs';

const outDir = process.env.ADMIN_OUT_DIR ?? 'build';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/admin/',
  logLevel: 'warn',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    // One script and one stylesheet: the console is small, and a first view needs both.
    modulePreload: false,
    reportCompressedSize: false,
  },
  // Brotli and gzip copies of the script and the stylesheet, served in their place (runtime/http/staticFile.ts).
  plugins: [
    {
      name: 'precompress',
      apply: 'build',
      writeBundle: (options) => void precompress(options.dir),
    },
  ],
});
