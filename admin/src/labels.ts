// What references show: the referenced record's label (its entity's displayField), asked for in
// batches (GET /{plural}?id=a,b,c&select=<field>, GET /users?id=...) and remembered for the page's
// life. A record the caller may not see, or that is gone, keeps its id as its label.
import { useEffect, useState } from 'preact/hooks';
import { api, query } from './api.js';
import type { UserView } from './apiTypes.js';
import type { EntityMeta, ListPage, Me } from './model.js';
import { isRecordId, shortLabel, USERS, userLabel } from './model.js';
import { can, isAdmin } from './permissions.js';

/** The most ids one request names (the API's limit). */
const BATCH = 100;

/** `plural/id` → its label; null once asked and not found (or not visible). */
const known = new Map<string, string | null>();
/** Ids waiting for the next batch, by plural. */
const waiting = new Map<string, Set<string>>();
/** The components showing each `plural/id`, redrawn when its label arrives. */
const listeners = new Map<string, Set<() => void>>();
let scheduled = false;

/** How the labels of one plural are looked up; undefined when they cannot be (the caller's own labels only). */
export type LabelSource = (ids: string[]) => Promise<Map<string, string>>;

/** The source of `target`'s labels: its displayField, read through the list endpoint. */
export function entityLabels(target: EntityMeta): LabelSource | undefined {
  const field = target.displayField;
  // A display field the caller may not see (an access rule) leaves the ids as they are.
  if (!field || !target.fields.some((f) => f.name === field)) return undefined;
  return async (ids) => {
    const page = await api<ListPage>(
      'GET',
      `/${target.plural}${query({ id: ids.join(','), select: field, limit: BATCH })}`,
    );
    const labels = new Map<string, string>();
    for (const record of page.items) {
      const value = record[field];
      if (typeof value === 'string' && value.trim()) labels.set(record.id, shortLabel(value));
    }
    return labels;
  };
}

/** The source of account labels (administrators list accounts): the display name, else the email. */
export const accountLabels: LabelSource = async (ids) => {
  const page = await api<{ items: UserView[] }>('GET', `/users${query({ id: ids.join(','), limit: BATCH })}`);
  return new Map(page.items.map((user) => [user.id, userLabel(user)]));
};

const sources = new Map<string, LabelSource>();

/** Registers where `plural`'s labels come from (the session does, once it knows the caller). */
export function labelSource(plural: string, source: LabelSource | undefined): void {
  if (source) sources.set(plural, source);
  else sources.delete(plural);
}

/** Labels the console already knows without asking (the signed-in user's own account). */
export function rememberLabel(plural: string, id: string, label: string): void {
  known.set(`${plural}/${id}`, label);
}

/** Forgets every label (a sign-out, a tenant switch). */
export function forgetLabels(): void {
  known.clear();
  waiting.clear();
  sources.clear();
}

function ask(plural: string, id: string): void {
  if (!sources.has(plural) || known.has(`${plural}/${id}`) || !isRecordId(id)) return;
  const ids = waiting.get(plural) ?? new Set<string>();
  waiting.set(plural, ids);
  ids.add(id);
  if (scheduled) return;
  scheduled = true;
  // Every label a render asks for goes in one request per entity.
  queueMicrotask(() => {
    scheduled = false;
    const batches = [...waiting];
    waiting.clear();
    for (const [from, wanted] of batches) void fetchLabels(from, [...wanted]);
  });
}

async function fetchLabels(plural: string, ids: string[]): Promise<void> {
  const source = sources.get(plural);
  if (!source) return;
  for (let at = 0; at < ids.length; at += BATCH) {
    const batch = ids.slice(at, at + BATCH);
    for (const id of batch) known.set(`${plural}/${id}`, null);
    try {
      const labels = await source(batch);
      for (const [id, label] of labels) known.set(`${plural}/${id}`, label);
    } catch {
      // A refusal (no permission to list them) leaves the ids shown as they are.
    }
    for (const id of batch) for (const listener of listeners.get(`${plural}/${id}`) ?? []) listener();
  }
}

/**
 * The label of `plural/id`, asked for when unknown; the id until it is known (or when there is
 * none). Only the components showing a record redraw when its label arrives.
 */
export function useLabel(plural: string | undefined, id: string | undefined): string | undefined {
  const [, redraw] = useState(0);
  const key = plural && id ? `${plural}/${id}` : undefined;
  const label = key === undefined ? undefined : known.get(key);
  useEffect(() => {
    if (key === undefined) return;
    const listener = () => redraw((n) => n + 1);
    const waitingHere = listeners.get(key) ?? new Set<() => void>();
    listeners.set(key, waitingHere);
    waitingHere.add(listener);
    // A label that arrived between the render and now.
    if (known.get(key) !== label) listener();
    return () => {
      waitingHere.delete(listener);
      if (waitingHere.size === 0 && listeners.get(key) === waitingHere) listeners.delete(key);
    };
  }, [key]);
  if (!plural || !id) return id;
  if (label === undefined) ask(plural, id);
  return label ?? id;
}

/**
 * Where each entity's labels come from, for the caller signed in: the entities they may view,
 * the accounts for an administrator; their own account's label in any case.
 */
export function startLabels(me: Me, entities: EntityMeta[]): void {
  forgetLabels();
  for (const entity of entities) if (can(me, entity.plural, 'view')) labelSource(entity.plural, entityLabels(entity));
  if (isAdmin(me)) labelSource(USERS, accountLabels);
  rememberLabel(USERS, me.user.id, userLabel(me.user));
}
