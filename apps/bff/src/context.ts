import type { Db } from '@onsale/shared/db';

/** What every procedure may use. Built from injected deps so tests pass their own database; routers import no singletons. */
export interface Context {
  db: Db;
}

export interface BffDeps {
  db: Db;
}

/** One context per request; today it only carries the deps, later the operator's identity. */
export function createContextFactory(deps: BffDeps): () => Context {
  return () => ({ db: deps.db });
}
