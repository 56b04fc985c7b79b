import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './cli.js';

/** nginx from Debian, run by the test with deploy/nginx.conf as the guide ships it. */
export interface Nginx {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts nginx with deploy/nginx.conf, changed only where a machine differs from compose: the
 * instances' addresses in the upstream block, the port it listens on, and its files in a folder
 * of the test's own.
 */
export async function startNginx(upstreams: string[], port: number): Promise<Nginx> {
  execFileSync('bash', [join(repoRoot, 'scripts', 'ensure-nginx.sh')], { stdio: 'inherit' });
  const prefix = mkdtempSync(join(tmpdir(), 'entigen-nginx-'));
  mkdirSync(join(prefix, 'logs'));
  const shipped = readFileSync(join(repoRoot, 'deploy', 'nginx.conf'), 'utf8');
  const servers = upstreams.map((address) => `    server ${address} max_fails=0;`).join('\n');
  const config = shipped
    .replace(/( {4}server app\d:3000 max_fails=0;\n)+/, `${servers}\n`)
    .replace('listen 80;', `listen 127.0.0.1:${port};`)
    .replace(
      'events {',
      `pid ${join(prefix, 'nginx.pid')};\nerror_log ${join(prefix, 'logs', 'error.log')} warn;\nuser root;\nevents {`,
    )
    .replace(
      'http {',
      `http {\n  access_log off;\n  client_body_temp_path ${prefix}/body;\n  proxy_temp_path ${prefix}/proxy;\n  fastcgi_temp_path ${prefix}/fastcgi;\n  uwsgi_temp_path ${prefix}/uwsgi;\n  scgi_temp_path ${prefix}/scgi;`,
    );
  if (!config.includes(upstreams[0]))
    throw new Error('deploy/nginx.conf no longer has the upstream lines the test replaces');
  const path = join(prefix, 'nginx.conf');
  writeFileSync(path, config);
  const child: ChildProcess = spawn('nginx', ['-p', prefix, '-c', path, '-g', 'daemon off;'], { stdio: 'pipe' });
  let output = '';
  child.stderr!.on('data', (chunk) => (output += chunk));
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${output}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) break;
    if (i > 100) throw new Error(`nginx did not listen: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGQUIT');
      await exited;
    },
  };
}
