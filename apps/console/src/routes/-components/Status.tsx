import { Link, type ErrorComponentProps } from '@tanstack/react-router';

export function Pending() {
  return (
    <p className="muted" role="status">
      Loading…
    </p>
  );
}

export function NotFound({ what }: { what: string }) {
  return (
    <section className="notice" data-testid="not-found">
      <h1>No such {what}</h1>
      <p>
        <Link to="/">Back to all events</Link>
      </p>
    </section>
  );
}

/** The BFF refused this role (or this promoter's organisation) the thing asked for. */
export function Forbidden({ what }: { what: string }) {
  return (
    <section className="notice" data-testid="forbidden">
      <h1>Not available to you</h1>
      <p>Your role or organisation does not give you this {what}.</p>
      <p>
        <Link to="/">Back to your events</Link>
      </p>
    </section>
  );
}

/** Shows the BFF's message (never internals: the BFF masks those) and offers a retry. */
export function ErrorNotice({ error, reset }: ErrorComponentProps) {
  return (
    <section className="notice error" role="alert">
      <h1>Something went wrong</h1>
      <p>{error instanceof Error ? error.message : 'Unexpected error'}</p>
      <button type="button" onClick={reset}>
        Try again
      </button>
    </section>
  );
}
