import type { PublicUser } from '../context/caller.js';
import { USERS } from '../model/collections.js';
import { normalizeEmail } from '../model/patterns.js';
import { unstorableText } from '../store/storableText.js';
import type { Doc, Store } from '../store/types.js';

export function publicUser(doc: Doc): PublicUser {
  return {
    id: doc.id,
    email: doc.email as string,
    displayName: doc.displayName as string,
    ...(typeof doc.emailVerified === 'boolean' ? { emailVerified: doc.emailVerified } : {}),
    // Only when on: register and login answer the spec's { id, email, displayName } otherwise.
    ...(typeof doc.mfaEnabledAt === 'string' ? { mfaEnabled: true } : {}),
  };
}

export async function findUserByEmail(store: Store, email: string): Promise<Doc | null> {
  // No stored email holds such text, and PostgreSQL would refuse it as a query parameter.
  if (unstorableText(email)) return null;
  const [user] = await store.find(USERS, {
    where: { field: 'email', op: 'eq', value: normalizeEmail(email) },
    limit: 1,
  });
  return user ?? null;
}
