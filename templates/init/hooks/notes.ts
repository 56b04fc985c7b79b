import { defineHooks, reject } from '../generated/hooks.js';

/**
 * Business rules of notes. beforeCreate and beforeUpdate run inside the write's transaction,
 * after validation; reject() refuses with a client error and details; afterCommit runs after
 * the commit, at least once (retried when it throws); endpoints handle the custom endpoints of
 * entities/notes.yaml. See the guide of entigen: "Business logic: hooks, endpoints and jobs".
 */
export default defineHooks('notes', {
  beforeCreate({ data }) {
    // A rule across fields: a pinned note must matter.
    if (data.pinned && data.priority === 'low') {
      reject('UNPROCESSABLE_ENTITY', 'A pinned note cannot have low priority', { priority: 'must not be low on a pinned note' });
    }
    return { ...data, title: data.title.trim() };
  },

  beforeUpdate({ data, existing }) {
    const pinned = data.pinned ?? existing.pinned;
    const priority = data.priority ?? existing.priority;
    if (pinned && priority === 'low') {
      reject('UNPROCESSABLE_ENTITY', 'A pinned note cannot have low priority', { priority: 'must not be low on a pinned note' });
    }
    return data;
  },

  afterCommit({ event, id, caller }) {
    // A side effect after the commit: send a mail, call a webhook, update a search index...
    console.log(`note ${id} ${event} by ${caller.user?.email ?? 'anonymous'}`);
  },

  // POST /api/v1/notes/{id}/pin, declared in entities/notes.yaml; needs notes:pin (USER: pin:own).
  endpoints: {
    async pin({ record, repositories }) {
      const priority = record.priority === 'low' ? 'normal' : record.priority;
      return (await repositories.notes.update(record.id, { pinned: true, priority })) ?? undefined;
    },
  },
});
