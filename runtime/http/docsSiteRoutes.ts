import { existsSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import type { Request, Response, Router } from 'express';
import { pages } from '../api/index.js';
import { ApiError } from '../errors/apiError.js';
import { packageRoot } from '../model/packageRoot.js';
import { DeclaredRouter } from './declaredRouter.js';
import { readStaticFile, type StaticFile, sendStaticFile } from './staticFile.js';

export const DOCS_SITE_PATH = pages.docsSite.path;

/**
 * The site's own policy. Its pages carry two small inline scripts of VitePress's (the colour
 * scheme before the first paint); everything else comes from this origin, and the pages are
 * entigen's, never the application's data.
 */
const SITE_CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Whether entigen's documentation site is built beside the package (`npm run docs:build`). */
export function docsSiteBuilt(folder = join(packageRoot, 'docs', '.vitepress', 'dist')): boolean {
  return existsSync(join(folder, 'index.html'));
}

/**
 * /docs: entigen's documentation site, when it is built (docs/.vitepress/dist: `npm run
 * docs:build`, which CI runs). Clean URLs: /docs/guide/deployment is guide/deployment.html.
 * Files are read from the site's folder only; a path that leaves it is a 404 like any other.
 */
export function docsSiteRoutes(folder = join(packageRoot, 'docs', '.vitepress', 'dist')): Router {
  const router = new DeclaredRouter(DOCS_SITE_PATH);
  const root = normalize(folder + sep);
  // Read once per build of the site: a file is read again when its size or time changes.
  const files = new Map<string, { stamp: string; file: StaticFile }>();
  const siteFile = (path: string, type: string) => {
    const stat = statSync(path);
    const stamp = `${stat.size}:${stat.mtimeMs}`;
    const known = files.get(path);
    if (known?.stamp === stamp) return known.file;
    const file = readStaticFile(path, type);
    files.set(path, { stamp, file });
    return file;
  };
  const send = (req: Request, res: Response) => {
    if (!docsSiteBuilt(folder))
      throw new ApiError('NOT_FOUND', 'The documentation site is not built (npm run docs:build)');
    const wanted = decodeURIComponent(req.path).replace(/^\/+/, '');
    const file = resolveFile(root, wanted);
    if (!file) throw new ApiError('NOT_FOUND', 'No such documentation page');
    const type = TYPES[extname(file)] ?? 'application/octet-stream';
    res.setHeader('Content-Security-Policy', SITE_CSP);
    // Assets have content-hashed names; pages change with each build.
    const cacheControl = file.includes(`${sep}assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache';
    sendStaticFile(req, res, siteFile(file, type), cacheControl);
  };
  router.raw(pages.docsSite, ({ req, res }) => send(req, res));
  router.raw(pages.docsSitePage, ({ req, res }) => send(req, res));
  // Any depth: a middleware, so the route table holds the one documented shape, /docs/{path}.
  router.router.use((req, res, next) => (req.method === 'GET' || req.method === 'HEAD' ? send(req, res) : next()));
  return router.router;
}

/** The file a clean URL names inside the site's folder, or undefined. */
function resolveFile(root: string, wanted: string): string | undefined {
  const candidates =
    wanted === '' || wanted.endsWith('/')
      ? [`${wanted}index.html`]
      : [wanted, `${wanted}.html`, `${wanted}/index.html`];
  for (const candidate of candidates) {
    const file = normalize(join(root, candidate));
    if (!file.startsWith(root)) return undefined;
    if (existsSync(file) && statSync(file).isFile()) return file;
  }
  return undefined;
}
