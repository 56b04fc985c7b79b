import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './cli.js';

export const BASE_DN = 'dc=example,dc=org';

export interface Slapd {
  url: string;
  baseDN: string;
  stop(): void;
}

export interface LdapPerson {
  uid: string;
  cn: string;
  mail: string;
  password: string;
}

const PEOPLE: LdapPerson[] = [
  { uid: 'alice', cn: 'Alice Liddell', mail: 'alice@ldap.example.org', password: 'alice-secret' },
  { uid: 'bob', cn: 'Bob Builder', mail: 'bob@ldap.example.org', password: 'bob-secret' },
  { uid: 'adm', cn: 'Admin Person', mail: 'adm@ldap.example.org', password: 'adm-secret' },
];

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`slapd exited: ${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection(port, '127.0.0.1', () => resolve(!!socket.end()));
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`slapd did not listen: ${output()}`);
}

/** A private OpenLDAP server on a loopback port, installed by scripts/ensure-slapd.sh if missing; `people` replaces its directory. */
export async function startSlapd(people: LdapPerson[] = PEOPLE): Promise<Slapd> {
  execFileSync('bash', [join(repoRoot, 'scripts', 'ensure-slapd.sh')], { stdio: 'inherit' });
  const dir = mkdtempSync(join(tmpdir(), 'entigen-slapd-'));
  mkdirSync(join(dir, 'db'));
  const conf = join(dir, 'slapd.conf');
  writeFileSync(
    conf,
    [
      ...['core', 'cosine', 'inetorgperson', 'nis'].map((schema) => `include /etc/ldap/schema/${schema}.schema`),
      `pidfile ${dir}/slapd.pid`,
      `argsfile ${dir}/slapd.args`,
      'modulepath /usr/lib/ldap',
      'moduleload back_mdb',
      'database mdb',
      `suffix "${BASE_DN}"`,
      `rootdn "cn=admin,${BASE_DN}"`,
      'rootpw admin-secret',
      `directory ${dir}/db`,
      'access to attrs=userPassword by anonymous auth by self write by * none',
      'access to * by * read',
      '',
    ].join('\n'),
  );
  const ldif = [
    `dn: ${BASE_DN}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example`,
    `dn: ou=people,${BASE_DN}\nobjectClass: organizationalUnit\nou: people`,
    ...people.map(
      (p) =>
        `dn: uid=${p.uid},ou=people,${BASE_DN}\nobjectClass: inetOrgPerson\nuid: ${p.uid}\ncn: ${p.cn}\nsn: ${p.cn.split(' ')[1]}\nmail: ${p.mail}\nuserPassword: ${p.password}`,
    ),
  ].join('\n\n');
  writeFileSync(join(dir, 'data.ldif'), `${ldif}\n`);
  execFileSync('slapadd', ['-f', conf, '-l', join(dir, 'data.ldif')], { stdio: 'pipe' });
  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  const child = spawn('slapd', ['-f', conf, '-h', `${url}/`, '-d', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  await waitForPort(port, child, () => output);
  return { url, baseDN: BASE_DN, stop: () => child.kill('SIGKILL') };
}
