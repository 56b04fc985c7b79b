#!/usr/bin/env node
// The registry mirror reachable here lacks the other platforms' builds of packages such as
// @rollup/rollup-*, so npm writes package-lock.json without them (cf. npm/cli#8726, #4828)
// and `npm ci` then rejects that same lock as out of sync. This adds the missing entries as
// optional packages at the version their parent pins; npm ci skips optional packages it
// cannot fetch. Run after changing dependencies: node scripts/completeLockfile.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
let added = 0;
for (const [location, entry] of Object.entries(lock.packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${location}/node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (lock.packages[nested] || lock.packages[hoisted]) continue;
    lock.packages[hoisted] = {
      version: range.replace(/^[\^~=]/, ''),
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
    };
    added++;
  }
}
// In npm's own order (an English collation, as @npmcli/arborist sorts): a later `npm install`
// then leaves the file as it is.
const collate = new Intl.Collator('en').compare;
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : collate(a, b))),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`completeLockfile: added ${added} optional package entries`);
