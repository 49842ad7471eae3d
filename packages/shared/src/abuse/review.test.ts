import { describe, expect, it } from 'vitest';
import { accountStem, clusterOrders, type ReviewOrder } from './review.js';

const t0 = Date.UTC(2026, 10, 1, 10);
let n = 0;
function order(accountId: string, over: Partial<ReviewOrder> = {}): ReviewOrder {
  n++;
  return {
    orderId: `o-${String(n).padStart(3, '0')}`,
    accountId,
    seats: 2,
    amountCents: 20_000,
    instrument: `card-of-${accountId}`,
    deviceHash: `device-of-${accountId}`,
    accountCreatedAt: new Date(t0 - n * 86_400_000),
    orderedAt: new Date(t0 + n * 1000),
    ...over,
  };
}

describe('account id stems', () => {
  it('find the stem of ids that end in a number, emails by their local part', () => {
    expect(accountStem('scalper-017')).toBe('scalper');
    expect(accountStem('Scalper_18')).toBe('scalper');
    expect(accountStem('jane.doe+12@mail.test')).toBe('jane.doe@mail.test');
    expect(accountStem('jane.doe13@mail.test')).toBe('jane.doe@mail.test');
    expect(accountStem('fan')).toBeNull();
    expect(accountStem('ab1')).toBeNull(); // too short a stem to mean anything
    expect(accountStem('12345')).toBeNull();
  });
});

describe('clustering orders', () => {
  it("sums the tickets a cluster's accounts transferred and listed for resale", () => {
    const orders = [
      order('tout-001', { transfers: 2, listings: 1 }),
      order('tout-002', { transfers: 1 }),
      order('fan', { transfers: 5, listings: 5 }),
    ];
    const [c, ...rest] = clusterOrders(orders);
    expect(rest).toEqual([]);
    expect([c!.accounts, c!.transfers, c!.listings]).toEqual([['tout-001', 'tout-002'], 3, 1]);
  });

  it('links accounts that paid with one card, and shows the card as evidence', () => {
    const orders = [order('alice', { instrument: 'cardX' }), order('bob', { instrument: 'cardX' }), order('carol')];
    const [c, ...rest] = clusterOrders(orders);
    expect(rest).toEqual([]);
    expect(c!.accounts).toEqual(['alice', 'bob']);
    expect(c!.signals).toEqual(['INSTRUMENT']);
    expect(c!.evidence).toEqual([
      { signal: 'INSTRUMENT', value: 'card cardX', accounts: ['alice', 'bob'], orders: [orders[0]!.orderId, orders[1]!.orderId] },
    ]);
    expect(c!.seats).toBe(4);
    expect(c!.amountCents).toBe(40_000);
  });

  it('joins clusters transitively across signals: a card links a to b, a device b to c, an id sequence c to d', () => {
    const orders = [
      order('a-person', { instrument: 'card1' }),
      order('b-person', { instrument: 'card1', deviceHash: 'dev1' }),
      order('resale-41', { deviceHash: 'dev1' }),
      order('resale-42'),
      order('bystander', { deviceHash: null }),
    ];
    const clusters = clusterOrders(orders);
    expect(clusters).toHaveLength(1);
    expect(clusters[0]!.accounts).toEqual(['a-person', 'b-person', 'resale-41', 'resale-42']);
    expect(clusters[0]!.signals).toEqual(['ACCOUNT_SEQUENCE', 'DEVICE', 'INSTRUMENT']);
    expect(clusters[0]!.orders.map((o) => o.accountId)).toEqual(['a-person', 'b-person', 'resale-41', 'resale-42']);
  });

  it("never makes a cluster of one account's own orders, nor of unrelated fans", () => {
    const orders = [order('solo', { instrument: 'c' }), order('solo', { instrument: 'c' }), order('x-fan'), order('y-fan')];
    expect(clusterOrders(orders)).toEqual([]);
    expect(clusterOrders([order('p1', { instrument: 'k' }), order('p2', { instrument: 'k' })], { minAccounts: 3 })).toEqual([]);
  });

  it('links accounts created together only when asked to, and always reports how close their creation was', () => {
    const base = new Date(t0 - 86_400_000);
    const orders = ['u', 'v', 'w'].map((a, i) => order(a, { accountCreatedAt: new Date(base.getTime() + i * 1500) }));
    orders.push(order('late', { accountCreatedAt: new Date(base.getTime() + 60_000) }));
    expect(clusterOrders(orders)).toEqual([]);
    const [c] = clusterOrders(orders, { createdWithinSeconds: 2 });
    expect(c!.accounts).toEqual(['u', 'v', 'w']);
    expect(c!.signals).toEqual(['CREATED_TOGETHER']);
    expect(c!.accountsCreatedWithinSeconds).toBe(3);
  });

  it('gives a cluster an id from its members: the same orders give the same ids, new members a new id', () => {
    const orders = [
      order('m1', { instrument: 'k' }),
      order('m2', { instrument: 'k' }),
      order('z1', { deviceHash: 'd' }),
      order('z2', { deviceHash: 'd' }),
      order('z3', { deviceHash: 'd' }),
    ];
    const first = clusterOrders(orders);
    expect(clusterOrders([...orders].reverse())).toEqual(first);
    expect(first.map((c) => c.accounts.length)).toEqual([3, 2]); // largest first
    expect(first[0]!.id).toMatch(/^c[0-9a-f]{10}$/);
    const grown = clusterOrders([...orders, order('m3', { instrument: 'k' })]);
    expect(grown.map((c) => c.id)).not.toContain(first.find((c) => c.accounts.includes('m1'))!.id);
  });
});
