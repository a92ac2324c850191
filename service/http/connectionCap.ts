/**
 * Open sockets per client address, so one address cannot hold more than its share. Keyed by the
 * address's limitKey (clientAddress.ts): an IPv6 client by its /64.
 */
export interface ConnectionCap {
  /** Reserves a slot for the address; false when it already holds the maximum. */
  tryOpen(address: string): boolean;
  /** Frees a slot reserved by tryOpen. */
  release(address: string): void;
  count(address: string): number;
}

export function createConnectionCap(maxPerAddress: number): ConnectionCap {
  const open = new Map<string, number>();
  return {
    tryOpen(address) {
      const current = open.get(address) ?? 0;
      if (current >= maxPerAddress) return false;
      open.set(address, current + 1);
      return true;
    },
    release(address) {
      const current = open.get(address) ?? 0;
      if (current <= 1) open.delete(address);
      else open.set(address, current - 1);
    },
    count(address) {
      return open.get(address) ?? 0;
    },
  };
}
