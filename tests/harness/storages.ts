/** Stand-ins for window.localStorage, the part of it the spin counter uses. */

/** A storage in memory; `items` is what it holds. */
export function memoryStorage(entries: [string, string][] = []) {
  const items = new Map<string, string>(entries);
  return {
    items,
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
  };
}

/** A storage that refuses every call, as a browser does when storage is blocked or full. */
export const throwingStorage = {
  getItem(): string | null {
    throw new Error("SecurityError");
  },
  setItem(): void {
    throw new Error("QuotaExceededError");
  },
};
