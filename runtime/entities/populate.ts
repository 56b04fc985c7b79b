import { accessFor, andWhere } from '../access/accessFor.js';
import { fieldView } from '../access/fieldAccess.js';
import { scopeFor } from '../access/requireAccess.js';
import type { Caller } from '../context/caller.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError, validationError } from '../errors/apiError.js';
import { USERS } from '../model/collections.js';
import type { EntityModel } from '../model/types.js';
import type { PopulateSpec } from '../query/listQuery.js';
import { refOf } from '../query/parsePopulate.js';
import type { Doc, Where } from '../store/types.js';
import { presentRecord } from './presentRecord.js';
import { populateRelations, relationOf } from './relatedRecords.js';

export type { PopulateSpec };

/** Objects (records and `{ id }` stubs) that populate may place into one response. */
export const MAX_POPULATED_RECORDS = 10_000;
/** Estimated size of the populated part of one response. */
export const MAX_POPULATED_BYTES = 16 * 1024 * 1024;
/** Ids per store query, well below every store's parameter limit. */
const FETCH_CHUNK = 500;

/** One step of a populate path: the field, the entity it references, and what to populate below it. */
interface PathNode {
  field: string;
  target: EntityModel;
  children: PathNode[];
}

/** Each referenced record, fetched once per request and shown as this caller may see it; null: `{ id }` only. */
type Fetched = Map<string, Map<string, Doc | null>>;

interface Weight {
  records: number;
  bytes: number;
}

/**
 * Replaces reference ids with the referenced records. Each referenced record is fetched once
 * per request (one query per entity and level for the ids not seen yet); records the caller may
 * not view stay `{ id }`. The answer is measured before it is built: over
 * MAX_POPULATED_RECORDS objects or MAX_POPULATED_BYTES is a 400, never a runaway response.
 */
export async function populateRecords(
  ctx: RuntimeContext,
  entity: EntityModel,
  docs: Doc[],
  spec: PopulateSpec,
  caller: Caller,
): Promise<Doc[]> {
  const relations = spec.paths.flatMap((path) => {
    const relation = path.length === 1 ? relationOf(entity, path[0]) : undefined;
    return relation ? [relation] : [];
  });
  let relatedCount = 0;
  const related =
    relations.length === 0
      ? undefined
      : await populateRelations(ctx, docs, relations, caller, (records) => {
          relatedCount += records;
          if (relatedCount > MAX_POPULATED_RECORDS) throw tooMuch(`${relatedCount} related records`);
        });
  const tree = pathTree(ctx, entity, spec.paths);
  const fetched: Fetched = new Map();
  await fetchLevel(ctx, docs, tree, caller, fetched);
  const relatedWeight: Weight = {
    records: relatedCount,
    bytes: related ? JSON.stringify(related.map((map) => Object.fromEntries(map))).length : 0,
  };
  const total = sumWeights([relatedWeight, ...docs.map((doc) => placements(doc, tree, fetched, new Map()))]);
  if (total.records > MAX_POPULATED_RECORDS || total.bytes > MAX_POPULATED_BYTES)
    throw tooMuch(
      total.records > MAX_POPULATED_RECORDS
        ? `${total.records} records`
        : `about ${Math.ceil(total.bytes / 1024 / 1024)} MB`,
    );
  return docs.map((doc, i) => {
    const expanded = expand(doc, tree, fetched);
    return related ? { ...expanded, ...Object.fromEntries(related[i]) } : expanded;
  });
}

function pathTree(ctx: RuntimeContext, entity: EntityModel, paths: string[][]): PathNode[] {
  const roots: PathNode[] = [];
  for (const path of paths) {
    let level = roots;
    let current: EntityModel | undefined = entity;
    for (const field of path) {
      const ref: string | undefined = current ? refOf(current, field) : undefined;
      const target: EntityModel | undefined = ref ? ctx.registry.entities.get(ref)?.model : undefined;
      if (!target) break;
      let node = level.find((n) => n.field === field);
      if (!node) {
        node = { field, target, children: [] };
        level.push(node);
      }
      level = node.children;
      current = target;
    }
  }
  return roots;
}

async function fetchLevel(
  ctx: RuntimeContext,
  docs: Iterable<Doc>,
  nodes: PathNode[],
  caller: Caller,
  fetched: Fetched,
): Promise<void> {
  for (const node of nodes) {
    const known = fetched.get(node.target.plural) ?? new Map<string, Doc | null>();
    fetched.set(node.target.plural, known);
    const ids = new Set<string>();
    for (const doc of docs) for (const id of idsIn(doc[node.field])) ids.add(id);
    // Every distinct id is placed at least once: past the limit, the answer is too big already.
    if (ids.size > MAX_POPULATED_RECORDS) throw tooMuch(`${ids.size} records`);
    const missing = [...ids].filter((id) => !known.has(id));
    for (let i = 0; i < missing.length; i += FETCH_CHUNK) {
      const chunk = missing.slice(i, i + FETCH_CHUNK);
      const visible = await fetchVisible(ctx, node.target, chunk, caller);
      for (const id of chunk) known.set(id, visible.get(id) ?? null);
    }
    if (node.children.length === 0) continue;
    const next = [...ids].map((id) => known.get(id)).filter((doc): doc is Doc => !!doc);
    if (next.length > 0) await fetchLevel(ctx, next, node.children, caller, fetched);
  }
}

/** Objects and bytes that populating `doc` along `nodes` would add; memoized per node and record. */
function placements(doc: Doc, nodes: PathNode[], fetched: Fetched, memo: Map<PathNode, Map<string, Weight>>): Weight {
  const parts: Weight[] = [];
  for (const node of nodes) {
    const known = fetched.get(node.target.plural)!;
    const seen = memo.get(node) ?? new Map<string, Weight>();
    memo.set(node, seen);
    for (const id of idsIn(doc[node.field])) {
      let weight = seen.get(id);
      if (!weight) {
        const record = known.get(id);
        weight = record
          ? sumWeights([
              { records: 1, bytes: JSON.stringify(record).length },
              placements(record, node.children, fetched, memo),
            ])
          : { records: 1, bytes: id.length + 10 };
        seen.set(id, weight);
      }
      parts.push(weight);
    }
  }
  return sumWeights(parts);
}

/** A fresh copy per place: the same record may appear many times, never as a shared or cyclic object. */
function expand(doc: Doc, nodes: PathNode[], fetched: Fetched): Doc {
  if (nodes.length === 0) return doc;
  const out: Doc = { ...doc };
  for (const node of nodes) {
    const known = fetched.get(node.target.plural)!;
    const one = (id: unknown) => {
      if (typeof id !== 'string') return id;
      const record = known.get(id);
      return record ? expand(record, node.children, fetched) : { id };
    };
    const value = doc[node.field];
    if (Array.isArray(value)) out[node.field] = value.map(one);
    else if (typeof value === 'string') out[node.field] = one(value);
  }
  return out;
}

async function fetchVisible(
  ctx: RuntimeContext,
  target: EntityModel,
  ids: string[],
  caller: Caller,
): Promise<Map<string, Doc>> {
  const byId: Where = { field: 'id', op: 'in', value: ids };
  if (target.plural === USERS) return fetchUsers(ctx, target, byId, caller);
  let viewable: Where | undefined;
  try {
    viewable = await scopeFor(ctx, caller, target, 'view');
  } catch (error) {
    // No view permission on the referenced entity: every reference stays { id }.
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return new Map();
    throw error;
  }
  const found = await ctx.store.find(target.plural, { where: andWhere(byId, viewable), limit: ids.length });
  const view = fieldView(target, caller);
  return new Map(found.map((doc) => [doc.id, presentRecord(target, doc, view)]));
}

/**
 * Users have no generic routes: an admin and the user themself see id, displayName and email;
 * a caller holding `users:view` sees id and displayName; anyone else gets `{ id }` only.
 */
async function fetchUsers(
  ctx: RuntimeContext,
  users: EntityModel,
  byId: Where,
  caller: Caller,
): Promise<Map<string, Doc>> {
  const access = accessFor(caller, users, 'view');
  const self = caller.user?.id;
  if (!access.allowed && !self) return new Map();
  const mine: Where | undefined = self ? { field: 'id', op: 'eq', value: self } : undefined;
  const viewable = access.allowed ? (access.where && mine ? { or: [access.where, mine] } : access.where) : mine;
  const where = andWhere(byId, viewable);
  const found = await ctx.store.find(USERS, { where, select: ['displayName', 'email'] });
  return new Map(
    found.map((u) => [
      u.id,
      caller.isAdmin || u.id === self
        ? { id: u.id, displayName: u.displayName, email: u.email }
        : { id: u.id, displayName: u.displayName },
    ]),
  );
}

function idsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

function sumWeights(weights: Weight[]): Weight {
  let records = 0;
  let bytes = 0;
  for (const w of weights) {
    records += w.records;
    bytes += w.bytes;
  }
  return { records, bytes };
}

function tooMuch(what: string): ApiError {
  const message = `populate would place ${what} in this response; at most ${MAX_POPULATED_RECORDS} records (${MAX_POPULATED_BYTES / 1024 / 1024} MB) per response`;
  return validationError(
    { populate: `${message}: populate fewer paths, a smaller depth, or ask for fewer records (limit)` },
    message,
  );
}
