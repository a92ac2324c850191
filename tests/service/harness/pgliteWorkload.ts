/**
 * A child process for tests/service/storage/pgliteFootprint.test.ts:
 *   node [V8 flags] tests/service/harness/pgliteWorkload.ts <dataDir> store|default <queries>
 * Opens PGlite on dataDir as the store does (`store`: service/storage/pgliteDatabase.ts) or with
 * PGlite's defaults (`default`), runs `queries` parameterised queries, closes it and exits.
 */
import { PGlite } from "@electric-sql/pglite";
import { openPglite } from "../../../service/storage/pgliteDatabase.ts";

const [dataDir, mode, queries] = process.argv.slice(2);
if (!dataDir || (mode !== "store" && mode !== "default") || !Number.isInteger(Number(queries))) {
  throw new Error("usage: pgliteWorkload.ts <dataDir> store|default <queries>");
}
const db = mode === "store" ? await openPglite(dataDir) : await PGlite.create({ dataDir });
for (let index = 0; index < Number(queries); index += 1) {
  await db.query("SELECT count(*) FROM pg_class WHERE relname <> $1 AND relpages >= $2", [`t${index}`, index % 7]);
}
await db.close();
