import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { Request, Response, Router } from 'express';
import { pages } from '../api/index.js';
import { ApiError } from '../errors/apiError.js';
import { packageRoot } from '../model/packageRoot.js';
import { DeclaredRouter } from './declaredRouter.js';
import { readStaticFile, type StaticFile, sendStaticFile } from './staticFile.js';

export const ADMIN_PATH = pages.adminPage.path;

/** The console's own policy: its scripts, styles and API calls come from this origin only. */
export const ADMIN_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

/**
 * /admin: the admin console (admin/, built by Vite into admin/build/, committed and shipped in the
 * package). Its assets have content-hashed names and are cached for good; every other path under
 * /admin is the single page, which routes in the browser. Nothing is read from disk per request.
 */
export function adminRoutes(folder = join(packageRoot, 'admin', 'build')): Router {
  const router = new DeclaredRouter(ADMIN_PATH);
  const page = existsSync(join(folder, 'index.html')) ? readFileSync(join(folder, 'index.html')) : undefined;
  const assets = new Map<string, StaticFile>();
  const assetsFolder = join(folder, 'assets');
  if (existsSync(assetsFolder)) {
    for (const name of readdirSync(assetsFolder)) {
      const type = TYPES[extname(name)];
      // The build's .br and .gz copies are read with their file, not served by name.
      if (type) assets.set(name, readStaticFile(join(assetsFolder, name), type));
    }
  }
  router.raw(pages.adminAsset, ({ params, req, res }) => {
    const asset = assets.get(params.file);
    if (!asset) throw new ApiError('NOT_FOUND', 'No such console asset');
    sendStaticFile(req, res, asset, 'public, max-age=31536000, immutable');
  });
  const single = (_req: Request, res: Response) => {
    if (!page) throw new ApiError('NOT_FOUND', 'The admin console is not built (npm run build:admin)');
    res.setHeader('Content-Security-Policy', ADMIN_CSP);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(page);
  };
  router.raw(pages.adminPage, ({ req, res }) => single(req, res));
  router.raw(pages.adminRoute, ({ req, res }) => single(req, res));
  // Deeper paths (/admin/e/articles/...) are the same page: a middleware, so the route table
  // (405 answers, the OpenAPI document) holds the one documented shape, /admin/{path}.
  router.router.use((req, res, next) => (req.method === 'GET' || req.method === 'HEAD' ? single(req, res) : next()));
  return router.router;
}
