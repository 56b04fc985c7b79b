#!/usr/bin/env node
// Checks every internal link of the built documentation site (docs/.vitepress/dist): the page it
// names exists, and so does the anchor after `#`. VitePress itself refuses links to missing
// pages at build time but not missing anchors. Also checks that the relative links of the
// repository's own Markdown (README.md, CONTRIBUTING.md) name files that exist.
// Exits 1 listing each broken link with the page it is on.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'docs', '.vitepress', 'dist');
/** Where the site is served (VitePress's `base`): entigen serves it at /docs. */
const BASE = '/docs';

const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" };
const decode = (text) => text.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_, name) => ENTITIES[name]);

function htmlFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'assets' ? [] : htmlFiles(path);
    return name.endsWith('.html') ? [path] : [];
  });
}

/** The URL path a built file is served at (clean URLs: no `.html`, `index` is the folder). */
function urlOf(file) {
  const path = `${BASE}/${relative(dist, file).split('\\').join('/')}`.replace(/\.html$/, '');
  return path.endsWith('/index') ? path.slice(0, -'index'.length) : path;
}

const problems = [];

if (!existsSync(dist)) {
  console.error('docs/.vitepress/dist does not exist: run `npm run docs:build` first');
  process.exit(1);
}
const pages = new Map();
for (const file of htmlFiles(dist)) {
  const html = readFileSync(file, 'utf8');
  const ids = new Set([...html.matchAll(/\sid="([^"]*)"/g)].map((m) => decode(m[1])));
  pages.set(urlOf(file), { html, ids });
}
let links = 0;
for (const [url, { html }] of pages) {
  // Only the page's own content and navigation: links inside <script> are the client's code.
  const markup = html.replace(/<script[\s\S]*?<\/script>/g, '');
  for (const match of markup.matchAll(/<a\s[^>]*?href="([^"]*)"/g)) {
    const href = decode(match[1]);
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) continue;
    links++;
    const target = new URL(href, `http://docs${url}`);
    const path = decodeURIComponent(target.pathname).replace(/\.html$/, '');
    const page = pages.get(path) ?? pages.get(`${path}/`);
    if (!page) {
      const asset = path.startsWith(`${BASE}/`) && existsSync(join(dist, path.slice(BASE.length)));
      if (!asset) problems.push(`${url}: ${href} (no such page)`);
      continue;
    }
    const anchor = decodeURIComponent(target.hash.slice(1));
    if (anchor && !page.ids.has(anchor)) problems.push(`${url}: ${href} (no anchor #${anchor} on ${path})`);
  }
}

for (const name of ['README.md', 'CONTRIBUTING.md']) {
  const text = readFileSync(join(root, name), 'utf8').replace(/```[\s\S]*?```/g, '');
  for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const href = match[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#')) continue;
    links++;
    if (!existsSync(join(root, href.split('#')[0]))) problems.push(`${name}: ${href} (no such file)`);
  }
}

if (problems.length > 0) {
  console.error(`docs: ${problems.length} broken link(s):\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
console.log(`docs: ${pages.size} pages, ${links} internal links and anchors, all found`);
