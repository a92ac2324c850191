/**
 * The spin count in localStorage (docs/product-behaviour.md#4): one integer under SPINS_STORAGE_KEY.
 * Reading and writing tolerate a storage that is missing or throws (blocked cookies, full quota):
 * the wheel then simply forgets across reloads.
 */

export const SPINS_STORAGE_KEY = "nothingStoreSpins";
/** The count a visitor starts with when nothing usable is stored. */
export const STARTING_SPINS = 1;

export type SpinsStorage = Pick<Storage, "getItem" | "setItem">;

/** Digits only, after trimming: the only shape this store ever writes. */
const WHOLE_NUMBER = /^\d+$/;

/**
 * The stored text as a spin count. Only a whole number of 0 or more counts (" 12 " is 12);
 * anything we never write ("", "abc", "-3", "3.9", "1e3", beyond 2^53) is not trusted and gives
 * STARTING_SPINS, as if nothing were stored.
 */
export function parseStoredSpins(stored: string | null | undefined): number {
  const text = stored?.trim() ?? "";
  if (!WHOLE_NUMBER.test(text)) return STARTING_SPINS;
  const spins = Number(text);
  return Number.isSafeInteger(spins) ? spins : STARTING_SPINS;
}

export function readStoredSpins(storage: SpinsStorage | undefined): number {
  try {
    return parseStoredSpins(storage?.getItem(SPINS_STORAGE_KEY));
  } catch {
    return STARTING_SPINS;
  }
}

export function writeStoredSpins(storage: SpinsStorage | undefined, spins: number): void {
  try {
    storage?.setItem(SPINS_STORAGE_KEY, String(spins));
  } catch {
    // Quota or privacy mode: the count lives on in memory for this visit.
  }
}

/** window.localStorage, or undefined where even reading the property throws (storage blocked). */
export function browserStorage(): SpinsStorage | undefined {
  try {
    return globalThis.localStorage ?? undefined;
  } catch {
    return undefined;
  }
}
