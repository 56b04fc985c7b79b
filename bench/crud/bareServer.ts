// The floor under any HTTP adapter: bare node:http + better-sqlite3 answering GET by id with the
// baseline's work (token check, user lookup, record, JSON envelope) and nothing else: no
// framework, no router, no headers beyond the content type. Whatever a faster adapter for
// entigen could reach on node:http, this is above it.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import Database from 'better-sqlite3';

const [path, port, secret] = process.argv.slice(2);
const db = new Database(path);
db.pragma('journal_mode = WAL');
const getUser = db.prepare('SELECT * FROM users WHERE id = ?');
const getArticle = db.prepare('SELECT * FROM articles WHERE id = ?');
const JSON_COLUMNS = new Set(['tags', 'related', 'meta', 'extra']);
const PREFIX = '/api/v1/articles/';

function answer(res: import('node:http').ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

createServer((req, res) => {
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
  const [id, stamp, signature] = token.split('.');
  const expected = createHmac('sha256', secret).update(`${id}.${stamp}`).digest('base64url');
  const ok =
    signature && expected.length === signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(signature));
  if (!ok || !getUser.get(id)) return answer(res, 401, { error: { code: 'UNAUTHORIZED', message: 'no' } });
  if (req.method !== 'GET' || !req.url?.startsWith(PREFIX))
    return answer(res, 404, { error: { code: 'NOT_FOUND', message: 'no' } });
  const row = getArticle.get(req.url.slice(PREFIX.length)) as Record<string, unknown> | undefined;
  if (!row) return answer(res, 404, { error: { code: 'NOT_FOUND', message: 'no' } });
  const data: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key.startsWith('_sk_')) continue;
    data[key] =
      JSON_COLUMNS.has(key) && typeof value === 'string' ? JSON.parse(value) : key === 'featured' ? value === 1 : value;
  }
  answer(res, 200, { data });
}).listen(Number(port), '127.0.0.1', () => console.log('listening'));
// A clean exit on SIGTERM, so a CPU profile (BENCH_PROFILE) gets written.
process.once('SIGTERM', () => process.exit(0));
