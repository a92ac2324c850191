/**
 * The functions and views of sql/functions/: one body each in the tree, applied by the migrations
 * runner after the numbered migrations (CREATE OR REPLACE, file by file in name order), inside the
 * migrations' transaction and lock. The database records the version of the functions it holds
 * (schema_functions), and an instance applies its own only over older ones: during a rolling
 * deploy, an instance of the previous release that restarts leaves the newer bodies in place,
 * which stay compatible with its calls for one release (docs/design.md#7).
 */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Logger } from "../logger.ts";
import type { MigrationTransaction } from "./schemaTransaction.ts";

const FUNCTIONS_DIR = fileURLToPath(new URL("../../sql/functions/", import.meta.url));

/**
 * The digest of sql/functions/ at each version of it, oldest first: the version is the position,
 * from 1. Every change to sql/functions/ appends the new digest (tests/unit/sqlFunctions.test.ts
 * fails until it is), so that an instance can tell older functions in a database from newer ones.
 */
export const FUNCTIONS_DIGESTS: readonly string[] = [
  "6f6c486df18715296033acf9a85533db69341d98c3578dcdbfa4c3c71c72688d",
  "082965cd9b1137afb887e54263dbce7dbfff124c567f336998675964cf1c511e",
  "c499774bf0b8de55afd5dcac4a954b10f0f881ded00b82a647aea62f41153370",
  "6582ab64a2e0b68aba194ebe1936562564667ede633c73c0d362ac9db4423e3c",
  "d49ea1d1d8c2d65e69368bf0b042541023fad88529e83394862bec5a6bb54dd0",
  "02ea80d7b78ab2a746b6c8e95e858c405d8fc8ff4c91a057087e4505dd0733cb",
  "91ccbfbaf14522661fa824728dfcb72b66476ddf20ae82a4bfea531f8dd9f67f",
  "f6927ca8dfec1835a1176a51f186430c6892f2a6571bd8180c02cc22b1d7f8ba",
  "c34b3e5eaa45ee4b62a206796abd400e0f3da472fc6fa7dcb565fc829613e5d4",
  "26b7d37f4bcc34123cda7f018ea09a4dbc0e0f5496c1a6dbc6e4350e8e645876",
];

interface FunctionFile {
  name: string;
  sql: string;
}

/** The functions as one release ships them. */
export interface FunctionSet {
  version: number;
  digest: string;
  files: FunctionFile[];
}

const FUNCTION_FILE = /^[\w-]+\.sql$/;

/** sha256 over each file's name and text, in the order they are applied; line ends as LF. */
function functionsDigest(files: readonly FunctionFile[]): string {
  const hash = createHash("sha256");
  for (const file of files) hash.update(`${file.name}\0${file.sql.replaceAll("\r\n", "\n")}\0`);
  return hash.digest("hex");
}

export async function readFunctions(dir: string = FUNCTIONS_DIR): Promise<FunctionSet> {
  const names = (await readdir(dir)).filter((name) => FUNCTION_FILE.test(name)).sort();
  const files = await Promise.all(names.map(async (name) => ({ name, sql: await readFile(join(dir, name), "utf8") })));
  return { version: FUNCTIONS_DIGESTS.length, digest: functionsDigest(files), files };
}

/**
 * Applies the functions unless the database holds them already (the same version and digest, and
 * no migration ran in this transaction) or holds newer ones. Skipping the unchanged case is not only
 * thrift: CREATE OR REPLACE VIEW takes an ACCESS EXCLUSIVE lock, which would queue every instance's
 * reads behind each restart. Returns whether it applied them.
 */
export async function applyFunctions(
  tx: MigrationTransaction,
  functions: FunctionSet,
  { schemaChanged }: { schemaChanged: boolean },
  logger: Logger,
): Promise<boolean> {
  await tx.exec(`CREATE TABLE IF NOT EXISTS schema_functions (
    version integer PRIMARY KEY,
    digest text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const [held] = await tx.query("SELECT version, digest FROM schema_functions ORDER BY version DESC LIMIT 1");
  const heldVersion = held ? Number(held.version) : 0;
  if (heldVersion > functions.version) {
    logger.warn(
      { held: heldVersion, own: functions.version },
      "the database has functions of a newer release: leaving them in place",
    );
    return false;
  }
  if (!schemaChanged && heldVersion === functions.version && held?.digest === functions.digest) return false;
  for (const file of functions.files) await tx.exec(file.sql);
  await tx.query(
    `INSERT INTO schema_functions (version, digest) VALUES ($1, $2)
    ON CONFLICT (version) DO UPDATE SET digest = excluded.digest, applied_at = now()`,
    [functions.version, functions.digest],
  );
  logger.info({ version: functions.version, files: functions.files.map((file) => file.name) }, "functions applied");
  return true;
}
