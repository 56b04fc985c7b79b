// Reads of an entity with a field under access rules, by a caller the rule hides it from,
// against the same reads by a caller it does not: 10,000 products of the example app, whose
// `cost` only FULFILMENT, the owner and holders of `products.cost:view` see. The buyer holds
// `products:view`; the costing clerk holds `products:view` and `products.cost:view`, so both
// go through the same checks and only the presentation differs. Target: GET by id and the
// list (limit 25, with totalCount) for the buyer at least 0.95x the clerk's. Server on core 0,
// load on core 1, rounds interleaved, medians taken.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadRegistry } from '../bin/commands/serveCommand.js';
import { signSession } from '../runtime/auth/sessionToken.js';
import { openStore } from '../runtime/store/openStore.js';
import { newId } from '../runtime/write/prepareWrite.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const SECRET = 'bench-field-access-secret';
const PRODUCTS = Number(process.env.BENCH_FIELD_PRODUCTS ?? 10_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_RUNS ?? 5);
const PORT = 4800 + Math.floor(Math.random() * 100);

interface Prepared {
  buyer: string;
  clerk: string;
  idsFile: string;
}

async function prepare(databaseUrl: string, dir: string): Promise<Prepared> {
  const registry = await loadRegistry(root, 'generated');
  const store = await openStore(databaseUrl, root);
  await store.init(registry.model);
  const at = (i: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + i * 1000).toISOString();
  const user = (roles: string[], i: number) => ({
    id: newId(),
    email: `fields${i}@example.test`,
    displayName: `Fields ${i}`,
    roles,
    authSource: 'local',
    disabled: false,
    createdAt: at(0),
    updatedAt: at(0),
  });
  const owner = user(['ADMIN'], 0);
  const buyer = user(['BUYER'], 1);
  const clerk = user(['COSTING'], 2);
  await store.insertMany('users', [owner, buyer, clerk]);
  const role = (key: string, permissions: string[]) => ({
    id: newId(),
    key,
    label: key,
    permissions,
    isSystem: false,
    createdAt: at(0),
    updatedAt: at(0),
  });
  await store.insertMany('roles', [
    role('BUYER', ['products:view']),
    role('COSTING', ['products:view', 'products.cost:view']),
  ]);
  const ids: string[] = [];
  for (let start = 0; start < PRODUCTS; start += 1000) {
    const batch = Array.from({ length: Math.min(1000, PRODUCTS - start) }, (_, j) => {
      const i = start + j;
      const id = newId();
      ids.push(id);
      return {
        id,
        ownerId: owner.id,
        name: `Product ${i}`,
        sku: `P-${i}`,
        price: 10 + (i % 90),
        stock: i % 50,
        cost: 5 + (i % 40),
        tags: [],
        createdAt: at(i),
        updatedAt: at(i),
        archivedAt: null,
      };
    });
    await store.insertMany('products', batch);
  }
  await store.close();
  const idsFile = join(dir, 'ids.json');
  writeFileSync(idsFile, JSON.stringify(ids.filter((_, i) => i % 7 === 0)));
  return {
    buyer: signSession(SECRET, buyer.id, Date.now()),
    clerk: signSession(SECRET, clerk.id, Date.now()),
    idsFile,
  };
}

function startServer(databaseUrl: string): Promise<ChildProcess> {
  const server = spawn(
    'taskset',
    ['-c', '0', process.execPath, join(here, 'crud', 'entigenServer.js'), databaseUrl, String(PORT), SECRET, root],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve) => server.stdout!.on('data', (d) => String(d).includes('listening') && resolve(server)));
}

function load(path: string, token: string, idsFile?: string): { rps: number; p99: number; failures: number } {
  const spec = {
    url: `http://127.0.0.1:${PORT}`,
    method: 'GET',
    path,
    headers: { authorization: `Bearer ${token}` },
    seconds: SECONDS,
    connections: 10,
    ...(idsFile ? { idsFile } : {}),
  };
  const result = spawnSync(
    'taskset',
    ['-c', '1', process.execPath, join(here, 'crud', 'load.js'), JSON.stringify(spec)],
    {
      encoding: 'utf8',
    },
  );
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'entigen-fields-'));
  const databaseUrl = `sqlite:${join(dir, 'fields.db')}`;
  const started = Date.now();
  const prepared = await prepare(databaseUrl, dir);
  console.log(`fields: seeded ${PRODUCTS} products in ${Date.now() - started} ms`);
  const server = await startServer(databaseUrl);
  const cases = [
    { name: 'get by id', path: '/api/v1/products/{id}', idsFile: prepared.idsFile },
    { name: 'list', path: '/api/v1/products?limit=25' },
  ];
  const failures: string[] = [];
  for (const item of cases) {
    const open: number[] = [];
    const hidden: number[] = [];
    load(item.path, prepared.clerk, item.idsFile);
    load(item.path, prepared.buyer, item.idsFile);
    for (let round = 0; round < ROUNDS; round++) {
      // Interleaved, the order turned each round: the machine's drift falls on both alike.
      const pair =
        round % 2 === 0
          ? [load(item.path, prepared.clerk, item.idsFile), load(item.path, prepared.buyer, item.idsFile)]
          : [load(item.path, prepared.buyer, item.idsFile), load(item.path, prepared.clerk, item.idsFile)].reverse();
      const [a, b] = pair;
      if (a.failures + b.failures > 0) throw new Error(`failed requests: ${a.failures + b.failures}`);
      open.push(a.rps);
      hidden.push(b.rps);
    }
    const ratio = median(hidden) / median(open);
    console.log(
      `fields: ${item.name.padEnd(9)} cost shown ${Math.round(median(open))} req/s, cost left out ${Math.round(median(hidden))} req/s: ${ratio.toFixed(2)}x (target: at least 0.95x)  (rounds shown ${open.map(Math.round).join(' ')}; left out ${hidden.map(Math.round).join(' ')})`,
    );
    if (ratio < 0.95) failures.push(item.name);
  }
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  if (failures.length > 0) console.log(`fields: below target: ${failures.join(', ')}`);
  process.exit(0);
}

await main();
