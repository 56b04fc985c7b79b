import { defineHooks, reject } from '../generated/hooks.js';

export default defineHooks('posts', {
  // Writers edit their drafts; only an editor (or the scheduled job) publishes.
  beforeUpdate({ data, caller }) {
    if (data.status === 'published' && !caller.isAdmin && !caller.permissions.has('posts:approve'))
      reject('FORBIDDEN', 'Only an editor publishes', { status: 'is set by an editor' });
    return data;
  },
  endpoints: {
    async approve({ id, record, body, caller, repositories }) {
      if (record.status !== 'draft') reject('UNPROCESSABLE_ENTITY', 'Only a draft is approved', { status: 'must be draft' });
      return (await repositories.posts.update(id, { publishAt: body.publishAt, approvedBy: caller.user?.id })) ?? undefined;
    },
  },
});
