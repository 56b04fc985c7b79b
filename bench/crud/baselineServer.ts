// The hand-written baseline: Express 5 + better-sqlite3 doing the same work as entigen for the
// three benchmarked requests (token check and user lookup, query, count, JSON envelope).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import Database from 'better-sqlite3';
import express from 'express';
import { expressMessageClasses } from '../../runtime/http/expressMessages.js';

const [path, port, secret] = process.argv.slice(2);
const db = new Database(path);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
const JSON_COLUMNS = ['tags', 'related', 'meta', 'extra'];
const BOOL_COLUMNS = ['featured'];

const getUser = db.prepare('SELECT * FROM users WHERE id = ?');
const getArticle = db.prepare('SELECT * FROM articles WHERE id = ?');
const listArticles = db.prepare(
  'SELECT * FROM articles WHERE "archivedAt" IS NULL AND "kind" = ? ORDER BY "views" DESC, "id" DESC LIMIT ? OFFSET 0',
);
const countArticles = db.prepare('SELECT COUNT(*) AS n FROM articles WHERE "archivedAt" IS NULL AND "kind" = ?');
const pageAfter = db.prepare(
  'SELECT * FROM articles WHERE "archivedAt" IS NULL AND "id" < ? ORDER BY "id" DESC LIMIT ?',
);
const countLive = db.prepare('SELECT COUNT(*) AS n FROM articles WHERE "archivedAt" IS NULL');
const rangeArticles = db.prepare(
  'SELECT * FROM articles WHERE "archivedAt" IS NULL AND "createdAt" >= ? AND "createdAt" <= ? ORDER BY "views" DESC, "id" DESC LIMIT ? OFFSET 0',
);
const countRange = db.prepare(
  'SELECT COUNT(*) AS n FROM articles WHERE "archivedAt" IS NULL AND "createdAt" >= ? AND "createdAt" <= ?',
);
const aggregateArticles = db.prepare(
  'SELECT "kind", COUNT(*) AS c, TOTAL("views") AS s FROM articles WHERE "archivedAt" IS NULL AND "status" = ? GROUP BY "kind" ORDER BY "kind"',
);
const insertArticle = db.prepare(
  'INSERT INTO articles (id, ownerId, createdAt, updatedAt, archivedAt, title, _sk_title, body, _sk_body, status, _sk_status, tags, views, kind, _sk_kind, featured, related) VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, 0, ?)',
);
const insertText = db.prepare('INSERT INTO articles__fts (id, body, title, summary) VALUES (?, ?, ?, ?)');
// articles keeps full versions: entigen writes version 1 with every create, so the baseline does too.
const insertVersion = db.prepare(
  'INSERT INTO "entityVersions" (id, entity, _sk_entity, entityId, _sk_entityId, version, versionKey, snapshot, changedBy, _sk_changedBy, changeType, _sk_changeType, changedFields, createdAt, updatedAt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
);

function decode(row: Record<string, unknown>) {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key.startsWith('_sk_')) continue;
    out[key] =
      JSON_COLUMNS.includes(key) && typeof value === 'string'
        ? JSON.parse(value)
        : BOOL_COLUMNS.includes(key)
          ? value === 1
          : value;
  }
  return out;
}

function authenticate(req: express.Request, res: express.Response, next: express.NextFunction) {
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
  const [id, stamp, signature] = token.split('.');
  const expected = createHmac('sha256', secret).update(`${id}.${stamp}`).digest('base64url');
  const ok =
    signature && expected.length === signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(signature));
  const user = ok ? getUser.get(id) : undefined;
  if (!user) return void res.status(401).json({ error: { code: 'UNAUTHORIZED', message: 'no' } });
  res.locals.user = user;
  next();
}

const sortKey = (text: string) =>
  text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/\d+/g, (d) => `${String(d.length).padStart(2, '0')}${d}`);
const app = express();
app.use(express.json({ limit: '1mb' }));
app.use((_req, res, next) => {
  res.setHeader('x-correlation-id', randomBytes(16).toString('hex'));
  next();
});
app.use(authenticate);
app.get('/api/v1/articles/aggregate', (req, res) => {
  const rows = aggregateArticles.all(String(req.query.status)) as { kind: string; c: number; s: number }[];
  const groups = rows.map((r) => ({ key: { kind: r.kind }, count: r.c, sum: { views: r.s } }));
  res.json({ data: { groups, totalGroups: groups.length } });
});
app.get('/api/v1/articles/:id', (req, res) => {
  const row = getArticle.get(req.params.id) as Record<string, unknown> | undefined;
  if (!row) return void res.status(404).json({ error: { code: 'NOT_FOUND', message: 'no' } });
  res.json({ data: decode(row) });
});
app.get('/api/v1/articles', (req, res) => {
  if (req.query.cursor !== undefined) {
    // Keyset on id, one more than asked to tell whether a next page exists; the total as entigen gives it.
    const limit = Number(req.query.limit ?? 25);
    const rows = (pageAfter.all(String(req.query.cursor), limit + 1) as Record<string, unknown>[]).map(decode);
    const totalCount = (countLive.get() as { n: number }).n;
    const items = rows.slice(0, limit);
    const nextCursor = rows.length > limit ? String(items.at(-1)!.id) : undefined;
    return void res.json({ data: { items, totalCount, totalPages: Math.ceil(totalCount / limit), nextCursor } });
  }
  if (req.query.dateFrom !== undefined) {
    const from = new Date(String(req.query.dateFrom)).toISOString();
    const to = `${String(req.query.dateTo)}T23:59:59.999Z`;
    const limit = Number(req.query.limit ?? 25);
    const items = (rangeArticles.all(from, to, limit) as Record<string, unknown>[]).map(decode);
    const totalCount = (countRange.get(from, to) as { n: number }).n;
    return void res.json({ data: { items, totalCount, totalPages: Math.ceil(totalCount / limit) } });
  }
  const kind = String(req.query.kind);
  const limit = Number(req.query.limit ?? 25);
  const items = (listArticles.all(kind, limit) as Record<string, unknown>[]).map(decode);
  const totalCount = (countArticles.get(kind) as { n: number }).n;
  res.json({ data: { items, totalCount, totalPages: Math.ceil(totalCount / limit) } });
});
app.post('/api/v1/articles', (req, res) => {
  const { title, body } = req.body ?? {};
  if (typeof title !== 'string' || typeof body !== 'string')
    return void res.status(400).json({ error: { code: 'VALIDATION_ERROR', message: 'bad' } });
  const id = randomBytes(12).toString('hex');
  const now = new Date().toISOString();
  const user = res.locals.user as { id: string };
  const record = {
    id,
    ownerId: user.id,
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
    title,
    body,
    status: 'draft',
    tags: [],
    views: 0,
    kind: 'news',
    featured: false,
    related: [],
  };
  db.transaction(() => {
    insertArticle.run(
      id,
      user.id,
      now,
      now,
      title,
      sortKey(title),
      body,
      sortKey(body),
      'draft',
      'draft',
      '[]',
      'news',
      'news',
      '[]',
    );
    insertText.run(id, body, title, '');
    // A record created under a new id has no history yet: its first version is 1.
    const version = 1;
    insertVersion.run(
      randomBytes(12).toString('hex'),
      'articles',
      'articles',
      id,
      sortKey(id),
      version,
      `articles:${id}:${version}`,
      JSON.stringify(record),
      user.id,
      sortKey(user.id),
      'create',
      'create',
      JSON.stringify(['title', 'body', 'status', 'tags', 'views', 'kind', 'featured', 'related']),
      now,
      now,
    );
  })();
  res.status(201).json({ data: record });
});
// BASELINE_BORN=1 (target baseline-born): the same app on a server whose requests and responses
// are born with Express's prototypes, as entigen serves (runtime/http/expressMessages.ts).
const server = process.env.BASELINE_BORN ? createServer(expressMessageClasses(app), app) : createServer(app);
server.listen(Number(port), '127.0.0.1', () => console.log('listening'));
// A clean exit on SIGTERM, so a CPU profile (BENCH_PROFILE) gets written.
process.once('SIGTERM', () => process.exit(0));
