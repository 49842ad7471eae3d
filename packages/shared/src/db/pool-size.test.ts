import { describe, expect, it } from 'vitest';
import { databaseCores, MIN_STORE_POOL, storePoolSize } from './pool-size.js';

describe('databaseCores', () => {
  it('takes DB_CORES when set, wherever the database is', () => {
    expect(databaseCores('postgres://db.internal:5432/onsale', 8, 2)).toBe(8);
    expect(databaseCores('postgres://127.0.0.1/onsale', 16, 2)).toBe(16);
  });
  it("counts this machine's cores for a database on it: loopback, a Unix socket, the embedded server", () => {
    for (const url of [
      'postgres://127.0.0.1:5432/test',
      'postgres://localhost/test',
      'postgres://[::1]:5432/test',
      'postgres:///test?host=/var/run/postgresql',
      'postgres://%2Fvar%2Frun%2Fpostgresql/test',
    ])
      expect(databaseCores(url, undefined, 2), url).toBe(2);
  });
  it('does not guess for a database elsewhere, or a URL it cannot read', () => {
    expect(databaseCores('postgres://db.internal:5432/onsale', undefined, 2)).toBeNull();
    expect(databaseCores('postgres://10.0.0.5/onsale', undefined, 2)).toBeNull();
    expect(databaseCores('not a url', undefined, 2)).toBeNull();
    expect(databaseCores('postgres://user@/onsale', undefined, 2)).toBeNull();
  });
});

describe('storePoolSize', () => {
  it('keeps DB_POOL_MAX for one process on 2 cores (10 = 5 a core)', () => {
    expect(storePoolSize({ poolMax: 10, processes: 1, dbCores: 2 })).toBe(10);
  });
  it('splits the bound between store processes instead of multiplying it', () => {
    expect(storePoolSize({ poolMax: 10, processes: 2, dbCores: 2 })).toBe(5);
    expect(storePoolSize({ poolMax: 10, processes: 3, dbCores: 2 })).toBe(3);
    // together never above 5 a core while each keeps at least MIN_STORE_POOL
    for (let processes = 1; processes <= 5; processes++)
      expect(storePoolSize({ poolMax: 10, processes, dbCores: 2 }) * processes).toBeLessThanOrEqual(10);
    expect(storePoolSize({ poolMax: 10, processes: 8, dbCores: 2 })).toBe(MIN_STORE_POOL);
  });
  it('never raises DB_POOL_MAX, and leaves it alone when the cores are unknown', () => {
    expect(storePoolSize({ poolMax: 10, processes: 2, dbCores: 8 })).toBe(10);
    expect(storePoolSize({ poolMax: 4, processes: 1, dbCores: 64 })).toBe(4);
    expect(storePoolSize({ poolMax: 40, processes: 4, dbCores: null })).toBe(40);
  });
});
