#!/usr/bin/env node
// Writes `<file>.br` and `<file>.gz` beside every text asset of a folder (scripts, styles, pages,
// JSON, SVG), at the strongest settings: once at build, so the server sends the smaller file with
// no work per request (runtime/http/staticFile.ts). Files under 1 KB are left alone, as are
// compressed copies that are already newer than their source.
//   node scripts/precompress.mjs <folder>...
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const TEXT = new Set(['.js', '.mjs', '.css', '.html', '.json', '.svg', '.txt', '.map', '.xml']);
const MIN_BYTES = 1024;

function fresh(copy, source) {
  try {
    return statSync(copy).mtimeMs >= statSync(source).mtimeMs;
  } catch {
    return false;
  }
}

/** Compresses the text assets of `folder` (recursively); answers how many files it wrote. */
export function precompress(folder) {
  let written = 0;
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    const stat = statSync(path);
    if (stat.isDirectory()) {
      written += precompress(path);
      continue;
    }
    if (!TEXT.has(extname(name)) || stat.size < MIN_BYTES) continue;
    const body = readFileSync(path);
    if (!fresh(`${path}.br`, path)) {
      writeFileSync(
        `${path}.br`,
        brotliCompressSync(body, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
            [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
          },
        }),
      );
      written++;
    }
    if (!fresh(`${path}.gz`, path)) {
      writeFileSync(`${path}.gz`, gzipSync(body, { level: constants.Z_BEST_COMPRESSION }));
      written++;
    }
  }
  return written;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const folder of process.argv.slice(2)) {
    const written = precompress(folder);
    process.stdout.write(`precompress: ${folder}: ${written} compressed copies written\n`);
  }
}
