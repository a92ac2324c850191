import { useEffect, useState } from "react";

/**
 * False in the server-rendered HTML and until React has hydrated the island. Controls render
 * disabled until then, so a click made before hydration is never silently swallowed.
 */
export function useHydrated() {
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return hydrated;
}
