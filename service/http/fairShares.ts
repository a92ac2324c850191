/**
 * Fair shares of a capacity that strangers share (docs/decisions/2026-11-28-fair-shares-that-nest.md):
 * listener connections, sockets, open payment requests, sign-in turns. Counting a client by its
 * IPv6 /64 alone let one subscriber close the shop: a home line is a /56 (256 /64s) and a free
 * tunnel broker hands out a /48 (65,536), so 100 /64s of one /48 filled the open-request cap and
 * 40 of them the listener. Here a client is counted in nested groups, each with a budget that grows
 * with the prefix but stays a small part of the whole:
 *
 *   IPv6: its /64 (the client), its /56, its /48      IPv4: its address (the client), its /24
 *
 * and the last part of the capacity (the reserve) goes only to groups that hold little, so a
 * newcomer is served while the heaviest holders are refused.
 */
import { isIPv4 } from "node:net";
import { ipv6Prefix, limitKey } from "./clientAddress.ts";

/** How the capacity is shared; every share is of the whole capacity. */
export interface ShareRules {
  /** The whole: units all clients together may hold. */
  capacity: number;
  /** What one client (an IPv4 address, an IPv6 /64) may hold, at most; bounded by its /56's share. */
  perClient: number;
  /** An IPv6 /48 or an IPv4 /24 (a subscriber's whole allocation, a small network); an IPv6 /56 (a household's line) three quarters of it. */
  wideShare?: number;
  /** The part kept for groups that hold little: once the rest is taken, only they are served. */
  reserveShare?: number;
  /** What a group may hold and still count as holding little. */
  lightShare?: number;
}

const DEFAULT_SHARES = { wideShare: 0.1, reserveShare: 0.2, lightShare: 0.01 } as const;
/** A /56's share against its /48's. */
const MID_OF_WIDE = 0.75;

/** The budgets the rules give, in units. */
export interface ShareBudgets {
  capacity: number;
  client: number;
  mid: number;
  wide: number;
  /** Units taken before only light groups are served: capacity less the reserve. */
  open: number;
  /** A group holding fewer than this is light. */
  light: number;
}

export function shareBudgets(rules: ShareRules): ShareBudgets {
  const { capacity, perClient } = rules;
  const share = (part: number) => Math.max(1, Math.floor(capacity * part));
  const wideShare = rules.wideShare ?? DEFAULT_SHARES.wideShare;
  const wide = share(wideShare);
  const mid = share(wideShare * MID_OF_WIDE);
  const client = Math.max(1, Math.min(perClient, mid));
  // An unbounded capacity (no listener cap of its own) keeps only the per-client cap.
  const reserve = Number.isFinite(capacity)
    ? Math.floor(capacity * (rules.reserveShare ?? DEFAULT_SHARES.reserveShare))
    : 0;
  return {
    capacity,
    client,
    mid,
    wide,
    open: capacity - reserve,
    light: share(rules.lightShare ?? DEFAULT_SHARES.lightShare),
  };
}

/** The groups an address is counted in, narrowest first. */
export interface AddressGroups {
  /** The client: an IPv4 address, or an IPv6 /64 (`2001:db8:0:1::/64`). */
  client: string;
  /** An IPv6 /56; none for IPv4. */
  mid: string | null;
  /** An IPv6 /48 or an IPv4 /24; none for what is not an IP address. */
  wide: string | null;
}

/**
 * The groups of a client address (as clientAddress gives it): its limit key (clientAddress.ts:
 * IPv4-mapped IPv6 as IPv4, a zone dropped, IPv6 by its /64), and the networks around it. Anything
 * that is no address ("unknown") is one client.
 */
export function addressGroups(address: string): AddressGroups {
  const client = limitKey(address);
  if (isIPv4(client)) return { client, mid: null, wide: `${client.replace(/\.\d+$/, ".0")}/24` };
  if (!client.endsWith("/64")) return { client, mid: null, wide: null };
  const network = client.slice(0, -"/64".length);
  return { client, mid: ipv6Prefix(network, 56), wide: ipv6Prefix(network, 48) };
}

/** Why a unit was refused: the client's own share, its network's, the reserve, or nothing left. */
export type ShareRefusal = "client" | "mid" | "wide" | "reserve" | "full";

export interface FairShares {
  readonly budgets: ShareBudgets;
  /** Takes a unit for `address`, or says why not (nothing is then taken). */
  take(address: string): { taken: true; release: () => void } | { taken: false; refusal: ShareRefusal };
  /** Units held by `address`'s client, its /56 and its /48 or /24, and by everyone. */
  held(address: string): { client: number; mid: number; wide: number; total: number };
}

/**
 * Why `groups` may not take one more unit, given what each holds now and in total, or null when
 * it may: the rule itself, shared with stores that count in the database (open payment requests).
 */
export function shareRefusal(
  budgets: ShareBudgets,
  held: { client: number; mid: number; wide: number; total: number },
): ShareRefusal | null {
  if (held.total >= budgets.capacity) return "full";
  if (held.client >= budgets.client) return "client";
  if (held.mid >= budgets.mid) return "mid";
  if (held.wide >= budgets.wide) return "wide";
  // The reserve: past the open part only a group that holds little is served.
  if (held.total >= budgets.open && Math.max(held.client, held.mid, held.wide) >= budgets.light) return "reserve";
  return null;
}

/** Fair shares of an in-memory capacity (this instance's connections, sockets, turns). */
export function createFairShares(rules: ShareRules): FairShares {
  const budgets = shareBudgets(rules);
  const counts = new Map<string, number>();
  let total = 0;
  const keysOf = (address: string) => {
    const groups = addressGroups(address);
    return {
      client: `c ${groups.client}`,
      mid: groups.mid === null ? null : `m ${groups.mid}`,
      wide: groups.wide === null ? null : `w ${groups.wide}`,
    };
  };
  const count = (key: string | null) => (key === null ? 0 : (counts.get(key) ?? 0));
  const add = (key: string | null, by: number) => {
    if (key === null) return;
    const next = (counts.get(key) ?? 0) + by;
    if (next <= 0) counts.delete(key);
    else counts.set(key, next);
  };
  const heldBy = (keys: ReturnType<typeof keysOf>) => ({
    client: count(keys.client),
    mid: count(keys.mid),
    wide: count(keys.wide),
    total,
  });

  return {
    budgets,
    take(address) {
      const keys = keysOf(address);
      const refusal = shareRefusal(budgets, heldBy(keys));
      if (refusal) return { taken: false, refusal };
      for (const key of [keys.client, keys.mid, keys.wide]) add(key, 1);
      total++;
      let released = false;
      return {
        taken: true,
        release() {
          if (released) return;
          released = true;
          for (const key of [keys.client, keys.mid, keys.wide]) add(key, -1);
          total--;
        },
      };
    },
    held(address) {
      return heldBy(keysOf(address));
    },
  };
}
