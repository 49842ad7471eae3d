import { useSuspenseQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { useTRPC } from '../../../trpc';
import { formatCount, formatDateTime } from '../../-components/format';
import { GridTable } from '../../-components/GridTable';

export const Route = createFileRoute('/_authed/listings/')({
  loader: ({ context: { trpc, queryClient } }) => queryClient.ensureQueryData(trpc.eventConfig.listings.queryOptions()),
  component: ListingsPage,
});

function ListingsPage() {
  const trpc = useTRPC();
  const { data: listings } = useSuspenseQuery(trpc.eventConfig.listings.queryOptions(undefined, { refetchInterval: 10_000 }));
  return (
    <section>
      <h1>Waitlists</h1>
      <p className="muted">One waitlist per listing (the show); its performances share it.</p>
      {listings.length === 0 ? (
        <p className="muted">No listings yet.</p>
      ) : (
        <GridTable
          columns={['Listing', 'Mode', { label: 'Performances', num: true }, { label: 'Live entries', num: true }, 'Created']}
          testId="listings-table"
        >
          {listings.map((l) => (
            <tr key={l.id} data-testid="listing-row" data-listing-id={l.id}>
              <td>
                <Link to="/listings/$listingId" params={{ listingId: l.id }}>
                  {l.name}
                </Link>
              </td>
              <td>{l.waitlist.mode}</td>
              <td className="num">{formatCount(l.eventCount)}</td>
              <td className="num">{formatCount(l.liveEntries)}</td>
              <td>{formatDateTime(l.createdAt)}</td>
            </tr>
          ))}
        </GridTable>
      )}
    </section>
  );
}
