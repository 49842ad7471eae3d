/**
 * What one store-API instance has seen of each device id: when first, and by how many distinct accounts (capped).
 * In memory and bounded (oldest devices forgotten first): a signal for the bot scorer, not a record. With several
 * instances each sees its share of the traffic, which only makes the signal weaker, never wrong in the fan's
 * disfavour.
 */
export class DeviceSightings {
  private readonly devices = new Map<string, { firstSeenMs: number; accounts: Set<string> }>();
  constructor(
    private readonly maxDevices = 200_000,
    private readonly maxAccountsPerDevice = 32,
  ) {}

  /** Records that `accountId` used `deviceId` now; returns what was known before this sighting plus this account. */
  observe(deviceId: string, accountId: string, nowMs: number): { firstSeenSecondsAgo: number | null; accountsSeen: number } {
    const seen = this.devices.get(deviceId);
    if (!seen) {
      if (this.devices.size >= this.maxDevices) {
        const oldest = this.devices.keys().next();
        if (!oldest.done) this.devices.delete(oldest.value);
      }
      this.devices.set(deviceId, { firstSeenMs: nowMs, accounts: new Set([accountId]) });
      return { firstSeenSecondsAgo: null, accountsSeen: 1 };
    }
    if (seen.accounts.size < this.maxAccountsPerDevice) seen.accounts.add(accountId);
    return { firstSeenSecondsAgo: Math.max(0, Math.floor((nowMs - seen.firstSeenMs) / 1000)), accountsSeen: seen.accounts.size };
  }
}
