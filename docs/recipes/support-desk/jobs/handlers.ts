import type { JobContext } from 'entigen/runtime';
import type { Repositories } from '../generated/index.js';

/** Closes the tickets resolved more than a week ago. */
export async function closeResolved({ repositories }: JobContext<Repositories>) {
  const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString();
  let closed = 0;
  for (const ticket of await repositories.tickets.find({ filter: { status: 'resolved' }, limit: 1000 })) {
    if (ticket.updatedAt < weekAgo) {
      await repositories.tickets.update(ticket.id, { status: 'closed' });
      closed++;
    }
  }
  return `closed ${closed}`;
}
