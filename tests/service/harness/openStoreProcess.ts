/**
 * A second process for the data-directory lock tests:
 *   node tests/service/harness/openStoreProcess.ts <dataDir> [hold]
 * Opens the PGlite store on dataDir and prints one JSON line: {"opened":true} or {"error":"…"}.
 * Without "hold" it closes the store and exits; with it, it stays open until killed.
 */
import { createLogger } from "../../../service/logger.ts";
import { openBidStore } from "../../../service/storage/index.ts";

const [dataDir, mode] = process.argv.slice(2);
if (!dataDir) throw new Error("usage: openStoreProcess.ts <dataDir> [hold]");

try {
  const store = await openBidStore({ dataDir, logger: createLogger("silent") });
  console.log(JSON.stringify({ opened: true }));
  if (mode === "hold") {
    setInterval(() => {}, 60_000);
  } else {
    await store.close();
  }
} catch (error) {
  console.log(JSON.stringify({ error: (error as Error).message, name: (error as Error).name }));
  process.exitCode = 1;
}
