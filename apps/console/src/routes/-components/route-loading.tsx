import { notFound } from '@tanstack/react-router';
import { trpcCodeOf } from '../../trpc';
import { Forbidden, NotFound } from './Status';

/**
 * A page's loader around its first read: an unknown or malformed id reads as "no such thing" (not as a failure), and
 * the BFF refusing a promoter another organisation's event as "forbidden", both through the route's
 * notFoundComponent (`notFoundOrForbidden`); anything else is the route's error.
 */
export async function loadOrNotFound<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    const code = trpcCodeOf(err);
    if (code === 'NOT_FOUND' || code === 'BAD_REQUEST') throw notFound();
    if (code === 'FORBIDDEN') throw notFound({ data: { forbidden: true } });
    throw err;
  }
}

/** The notFoundComponent that answers loadOrNotFound: "Forbidden" or "Not found", naming `what`. */
export function notFoundOrForbidden(what: string) {
  return function RouteNotFound({ data }: { data?: unknown }) {
    return (data as { forbidden?: boolean } | undefined)?.forbidden ? <Forbidden what={what} /> : <NotFound what={what} />;
  };
}
