import { spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { signSession } from './dist/runtime/auth/sessionToken.js';
const db = new Database('/tmp/cl.db', { readonly: true }); const admin = db.prepare("select id from users where roles like '%admin%' limit 1").get(); db.close();
const token = signSession('bench-secret', admin.id, Date.now());
const spec = { url: 'http://127.0.0.1:4190', method: 'POST', path: '/api/v1/articles', body: JSON.stringify({ title: 'New article', body: 'Some body text' }), headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, seconds: Number(process.env.SECS ?? 5), connections: 10 };
for (let r = 0; r < Number(process.env.ROUNDS ?? 2); r++) {
  const out = spawnSync('taskset', ['-c', '1', process.execPath, '/work/main/dist/bench/crud/load.js', JSON.stringify(spec)], { encoding: 'utf8' });
  console.log('round', r, out.stdout.slice(0, 120), out.stderr.slice(0, 300));
}
