import { createHash } from 'node:crypto';

/**
 * Post-sale review: clusters an event's confirmed orders by what links their accounts. Pure (no I/O), so the
 * rule is tested on its own and an operator can re-run it and get the same clusters from the same orders.
 *
 * Links between accounts (each kept as evidence):
 *   INSTRUMENT        orders paid with the same card (instrument fingerprint)
 *   DEVICE            holds made from the same device (account-independent device fingerprint)
 *   ACCOUNT_SEQUENCE  account ids that differ only by a numeric suffix (scalper-017, scalper-018; j.doe+3@x.io)
 *   CREATED_TOGETHER  accounts created within `createdWithinSeconds` of each other (off unless asked for: at an
 *                     open many genuine accounts are made in the same seconds, so on its own it links strangers)
 * Linked accounts form one cluster (transitively); a cluster needs at least `minAccounts` accounts (one account's
 * own orders are the per-account limit's business). Every cluster reports how close together its accounts were
 * created, whatever links it. Cluster ids are a hash of the member accounts: the same membership always gets the
 * same id, and a cluster whose membership changed since it was printed is not found under its old id.
 */

export type ReviewSignal = 'INSTRUMENT' | 'DEVICE' | 'ACCOUNT_SEQUENCE' | 'CREATED_TOGETHER';

/** One confirmed order, with what the review links on. */
export interface ReviewOrder {
  orderId: string;
  accountId: string;
  seats: number;
  amountCents: number;
  /** The card's fingerprint (never the number). */
  instrument: string;
  /** The device fingerprint recorded on the order's hold; null when unknown. */
  deviceHash: string | null;
  accountCreatedAt: Date;
  orderedAt: Date;
  /** Tickets of the order its buyer transferred to other accounts (0 when unknown). */
  transfers?: number;
  /** Tickets of the order its buyer listed on the face-value exchange, sold or not (0 when unknown). */
  listings?: number;
}

export interface ReviewOptions {
  /** Fewest accounts that make a cluster (default 2). */
  minAccounts?: number;
  /** Link accounts created within this many seconds of each other (default: no such link). */
  createdWithinSeconds?: number | null;
  /** Shortest id stem that counts for ACCOUNT_SEQUENCE (default 3 characters). */
  minStemLength?: number;
}

export interface ClusterEvidence {
  signal: ReviewSignal;
  /** What they share: a fingerprint prefix, the id stem, or the creation window. */
  value: string;
  accounts: string[];
  orders: string[];
}

export interface ReviewCluster {
  id: string;
  accounts: string[];
  orders: { orderId: string; accountId: string; seats: number; amountCents: number; orderedAt: string }[];
  seats: number;
  amountCents: number;
  signals: ReviewSignal[];
  evidence: ClusterEvidence[];
  /** Seconds between the first and the last of the cluster's accounts being created. */
  accountsCreatedWithinSeconds: number;
  /** Tickets the cluster's accounts transferred to others, and listed for resale: a reseller's accounts pass tickets on. */
  transfers: number;
  listings: number;
}

/** The stem an account id has when it ends in a number ("scalper-017" -> "scalper"), else null. Emails by local part. */
export function accountStem(accountId: string, minStemLength = 3): string | null {
  const at = accountId.lastIndexOf('@');
  const local = at > 0 ? accountId.slice(0, at) : accountId;
  const domain = at > 0 ? accountId.slice(at).toLowerCase() : '';
  const m = /^(.*?)[-_.+ ]*(\d+)$/.exec(local);
  if (!m) return null;
  const stem = m[1]!.toLowerCase();
  if (stem.replace(/[^a-z]/g, '').length < minStemLength) return null;
  return stem + domain;
}

class UnionFind {
  private readonly parent = new Map<string, string>();
  find(x: string): string {
    let p = this.parent.get(x) ?? x;
    if (p === x) return x;
    p = this.find(p);
    this.parent.set(x, p);
    return p;
  }
  union(a: string, b: string) {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent.set(ra < rb ? rb : ra, ra < rb ? ra : rb);
  }
}

const short = (h: string) => (h.length > 12 ? `${h.slice(0, 12)}…` : h);

/** The clusters of `orders` (largest first by seats, then by id). */
export function clusterOrders(orders: readonly ReviewOrder[], opts: ReviewOptions = {}): ReviewCluster[] {
  const minAccounts = opts.minAccounts ?? 2;
  const uf = new UnionFind();
  const evidence: ClusterEvidence[] = [];
  const link = (signal: ReviewSignal, value: string, group: readonly ReviewOrder[]) => {
    const accounts = [...new Set(group.map((o) => o.accountId))].sort();
    if (accounts.length < 2) return;
    for (const a of accounts.slice(1)) uf.union(accounts[0]!, a);
    evidence.push({ signal, value, accounts, orders: group.map((o) => o.orderId).sort() });
  };
  const groupBy = (key: (o: ReviewOrder) => string | null) => {
    const m = new Map<string, ReviewOrder[]>();
    for (const o of orders) {
      const k = key(o);
      if (k !== null) m.set(k, [...(m.get(k) ?? []), o]);
    }
    return [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  };

  for (const [k, g] of groupBy((o) => o.instrument)) link('INSTRUMENT', `card ${short(k)}`, g);
  for (const [k, g] of groupBy((o) => o.deviceHash)) link('DEVICE', `device ${short(k)}`, g);
  for (const [k, g] of groupBy((o) => accountStem(o.accountId, opts.minStemLength))) link('ACCOUNT_SEQUENCE', `ids "${k}" + number`, g);

  const createdAt = new Map<string, number>();
  for (const o of orders) createdAt.set(o.accountId, o.accountCreatedAt.getTime());
  const window = opts.createdWithinSeconds;
  if (window !== undefined && window !== null && window >= 0) {
    // Runs of accounts each created within the window of the one before.
    const byTime = [...createdAt.entries()].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
    let run: string[] = [];
    const flush = () => {
      if (run.length >= 2) {
        const set = new Set(run);
        link(
          'CREATED_TOGETHER',
          `created within ${window} s of each other`,
          orders.filter((o) => set.has(o.accountId)),
        );
      }
      run = [];
    };
    byTime.forEach(([account, t], i) => {
      if (i > 0 && t - byTime[i - 1]![1] > window * 1000) flush();
      run.push(account);
    });
    flush();
  }

  const members = new Map<string, ReviewOrder[]>();
  for (const o of orders) {
    const root = uf.find(o.accountId);
    members.set(root, [...(members.get(root) ?? []), o]);
  }
  const clusters: ReviewCluster[] = [];
  for (const group of members.values()) {
    const accounts = [...new Set(group.map((o) => o.accountId))].sort();
    if (accounts.length < Math.max(2, minAccounts)) continue;
    const inCluster = new Set(accounts);
    const ev = evidence.filter((e) => inCluster.has(e.accounts[0]!));
    const times = accounts.map((a) => createdAt.get(a)!);
    clusters.push({
      id: `c${createHash('sha256').update(accounts.join('\n')).digest('hex').slice(0, 10)}`,
      accounts,
      orders: [...group]
        .sort((a, b) => a.orderedAt.getTime() - b.orderedAt.getTime() || (a.orderId < b.orderId ? -1 : 1))
        .map((o) => ({
          orderId: o.orderId,
          accountId: o.accountId,
          seats: o.seats,
          amountCents: o.amountCents,
          orderedAt: o.orderedAt.toISOString(),
        })),
      seats: group.reduce((n, o) => n + o.seats, 0),
      amountCents: group.reduce((n, o) => n + o.amountCents, 0),
      signals: [...new Set(ev.map((e) => e.signal))].sort(),
      evidence: ev,
      accountsCreatedWithinSeconds: Math.round((Math.max(...times) - Math.min(...times)) / 1000),
      transfers: group.reduce((n, o) => n + (o.transfers ?? 0), 0),
      listings: group.reduce((n, o) => n + (o.listings ?? 0), 0),
    });
  }
  return clusters.sort((a, b) => b.seats - a.seats || (a.id < b.id ? -1 : 1));
}
