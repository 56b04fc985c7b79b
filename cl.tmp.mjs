import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { signSession } from './dist/runtime/auth/sessionToken.js';
const seed = process.argv[2]; const checkout = process.argv[3] ?? '/work/main';
copyFileSync(seed, '/tmp/cl.db');
const db = new Database('/tmp/cl.db'); const admin = db.prepare("select id from users where roles like '%admin%' limit 1").get() ?? db.prepare('select id from users limit 1').get(); db.close();
const server = spawn('taskset', ['-c', '0', process.execPath, ...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.PROF] : []), `${checkout}/dist/bench/crud/entigenServer.js`, 'sqlite:/tmp/cl.db', '4190', 'bench-secret', checkout], { stdio: ['ignore', 'inherit', 'inherit'], cwd: checkout });
for (let i = 0; i < 100; i++) { try { await fetch('http://127.0.0.1:4190/api/v1/health'); break; } catch { await new Promise((r) => setTimeout(r, 200)); } }
const token = signSession('bench-secret', admin.id, Date.now());
const probe = await fetch('http://127.0.0.1:4190/api/v1/articles', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'x', body: 'y' }) }); console.log('probe', probe.status, (await probe.text()).slice(0, 200));
const spec = { url: 'http://127.0.0.1:4190', method: 'POST', path: '/api/v1/articles', body: JSON.stringify({ title: 'New article', body: 'Some body text' }), headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, seconds: Number(process.env.SECS ?? 5), connections: 10 };
for (let r = 0; r < Number(process.env.ROUNDS ?? 2); r++) {
  const out = spawnSync('taskset', ['-c', '1', process.execPath, '/work/main/dist/bench/crud/load.js', JSON.stringify(spec)], { encoding: 'utf8' });
  const res = JSON.parse(out.stdout); console.log('round', r, JSON.stringify(res).slice(0, 200));
}
server.kill('SIGTERM'); await new Promise((r) => server.once('exit', r));
