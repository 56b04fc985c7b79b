import type { EntityModel } from '../model/types.js';
import { MAX_POPULATE_DEPTH, MAX_POPULATE_PATHS, type PopulateSpec } from './listQuery.js';

type Fail = (key: string, message: string) => undefined;

/** Reference fields an entity can populate: objectId, or arrays of objectId. */
export function refOf(entity: EntityModel, fieldName: string): string | undefined {
  const field = entity.fields.find((f) => f.name === fieldName && !f.hidden);
  if (!field) return undefined;
  return field.type === 'objectId'
    ? field.ref
    : field.type === 'array' && field.items?.type === 'objectId'
      ? field.items.ref
      : undefined;
}

/**
 * `populate` as a comma list, a repeated list, or `{ paths, depth }`; dotted paths go through
 * nested references. `lookup` resolves a referenced entity to walk the path; depth is 1 to 5.
 */
export function parsePopulate(
  entity: EntityModel,
  raw: unknown,
  fail: Fail,
  lookup: (plural: string) => EntityModel | undefined = () => undefined,
): PopulateSpec | undefined {
  let list: unknown[];
  let depth = MAX_POPULATE_DEPTH;
  if (typeof raw === 'string') list = [raw];
  else if (Array.isArray(raw)) list = raw;
  else if (raw && typeof raw === 'object') {
    const object = raw as Record<string, unknown>;
    for (const key of Object.keys(object))
      if (key !== 'paths' && key !== 'depth') fail(`populate.${key}`, 'is not a known populate option');
    list = Array.isArray(object.paths) ? object.paths : object.paths === undefined ? [] : [object.paths];
    if (object.depth !== undefined) {
      const value = Number(object.depth);
      if (typeof object.depth !== 'string' || !/^\d+$/.test(object.depth) || value < 1 || value > MAX_POPULATE_DEPTH) {
        return fail('populate.depth', `must be an integer from 1 to ${MAX_POPULATE_DEPTH}`);
      }
      depth = value;
    }
  } else return fail('populate', 'must be field names');

  const paths: string[][] = [];
  for (const item of list) {
    if (typeof item !== 'string') return fail('populate', 'must be field names');
    for (const text of item
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const segments = text.split('.');
      if (segments.length > depth) return fail('populate', `"${text}" is deeper than ${depth}`);
      const relation = entity.relations?.find((r) => r.name === segments[0]);
      if (relation) {
        if (segments.length > 1)
          return fail(
            'populate',
            `"${text}": relations are populated one level deep; use GET /${entity.plural}/{id}/${relation.name}?populate=${segments.slice(1).join('.')}`,
          );
        paths.push(segments);
        continue;
      }
      let current: EntityModel | undefined = entity;
      for (const segment of segments) {
        const ref: string | undefined = current ? refOf(current, segment) : undefined;
        if (!ref) return fail('populate', `"${text}": ${segment} is not a reference field or a relation`);
        current = lookup(ref);
      }
      paths.push(segments);
    }
  }
  if (paths.length === 0) return fail('populate', 'must name at least one reference field or relation');
  if (paths.length > MAX_POPULATE_PATHS) return fail('populate', `must name at most ${MAX_POPULATE_PATHS} paths`);
  return { paths };
}
