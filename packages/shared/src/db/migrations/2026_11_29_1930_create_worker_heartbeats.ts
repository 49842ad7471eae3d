import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // Liveness of job-queue workers: a worker that stops beating (killed, crashed) has its locked jobs released,
  // rather than left locked for hours by the job queue's own safety timeout.
  await sql`
    CREATE TABLE worker_heartbeats (
      worker_id text PRIMARY KEY,
      process text NOT NULL,
      seen_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS worker_heartbeats`.execute(db);
}
