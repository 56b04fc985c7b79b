import type { JobContext } from 'entigen/runtime';
import type { Repositories } from '../generated/index.js';

/** Publishes the approved drafts whose time has come. */
export async function publishDue({ repositories }: JobContext<Repositories>) {
  const due = await repositories.posts.find({
    filter: { status: 'draft', publishAt: { lte: new Date().toISOString() } },
    limit: 500,
  });
  for (const post of due) await repositories.posts.update(post.id, { status: 'published' });
  return `published ${due.length}`;
}
