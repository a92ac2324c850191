/**
 * Initialises a PGlite data directory and exits: `node service/storage/pgliteInit.ts <dir>`.
 * The store runs it as a child process (pgliteTemplate.ts), so the memory initdb takes is given back
 * whole when it exits instead of staying in the service (docs/design.md#9).
 */
import { openPglite } from "./pgliteDatabase.ts";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node service/storage/pgliteInit.ts <empty directory>");
  process.exit(2);
}
try {
  await (await openPglite(dir)).close();
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
