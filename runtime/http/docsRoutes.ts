import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Response, Router } from 'express';
import { pages } from '../api/index.js';
import type { OpenApiSource } from '../context/defineRegistry.js';
import { notFound } from '../errors/apiError.js';
import { packageRoot } from '../model/packageRoot.js';
import { DeclaredRouter } from './declaredRouter.js';
import { readStaticFile, type StaticFile, sendStaticFile, staticBody } from './staticFile.js';

export const DOCS_PATH = pages.referencePage.path;

// The reference page is swagger-ui from the swagger-ui-dist package, served from this server:
// nothing is fetched from the internet when the page opens.
const ASSETS: Record<string, string> = {
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};
const INIT_SCRIPT = `window.onload = () => {
  window.ui = SwaggerUIBundle({ url: '${DOCS_PATH}/openapi.json', dom_id: '#reference', deepLinking: true, withCredentials: true });
};
`;
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; frame-ancestors 'none'";

function assetsFolder(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

/** Where the package's build keeps the assets' .br and .gz copies (scripts/prepare.mjs). */
const COMPRESSED_FOLDER = join(packageRoot, 'dist', 'static', 'swagger-ui');

function page(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title.replace(/[<>&"]/g, '')} - API reference</title>
  <link rel="stylesheet" href="${DOCS_PATH}/assets/swagger-ui.css">
  <link rel="icon" href="${DOCS_PATH}/assets/favicon-32x32.png">
</head>
<body>
  <div id="reference"></div>
  <script src="${DOCS_PATH}/assets/swagger-ui-bundle.js"></script>
  <script src="${DOCS_PATH}/assets/init.js"></script>
</body>
</html>
`;
}

/**
 * /api/docs (reference page), /api/docs/openapi.json (the generated document), /api/docs/assets/*.
 * The document and the assets (some 2.7 MB) are read when first asked for: most servers never are.
 */
export function docsRoutes(openapi: OpenApiSource, title: string): Router {
  const router = new DeclaredRouter(DOCS_PATH);
  const folder = assetsFolder();
  const assets = new Map<string, StaticFile>();
  const assetOf = (name: string) => {
    const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!type) return undefined;
    const known = assets.get(name);
    if (known) return known;
    const asset = readStaticFile(join(folder, name), type, COMPRESSED_FOLDER);
    assets.set(name, asset);
    return asset;
  };
  // Serialized once; a load that failed is tried again by the next request.
  let document: Promise<StaticFile> | undefined;
  const documentFile = () =>
    (document ??= (async () => {
      const value = typeof openapi === 'function' ? await openapi() : openapi;
      return staticBody(Buffer.from(JSON.stringify(value)), 'application/json; charset=utf-8');
    })().catch((error: unknown) => {
      document = undefined;
      throw error;
    }));
  const cacheable = (res: Response) => res.setHeader('Cache-Control', 'public, max-age=3600');
  router.raw(pages.openApiDocument, async ({ req, res }) => sendStaticFile(req, res, await documentFile(), 'no-cache'));
  router.raw(pages.referencePage, ({ res }) => {
    res.setHeader('Content-Security-Policy', PAGE_CSP);
    res.type('html').send(page(title));
  });
  router.raw(pages.referenceAsset, ({ params, req, res }) => {
    const file = params.file;
    if (file === 'init.js') {
      cacheable(res);
      return void res.type('application/javascript; charset=utf-8').send(INIT_SCRIPT);
    }
    const asset = assetOf(file);
    if (!asset) throw notFound('Asset');
    sendStaticFile(req, res, asset, 'public, max-age=3600');
  });
  return router.router;
}
