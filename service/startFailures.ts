/**
 * What the service says when it cannot start after its settings were read: the store would not
 * open, a listener would not listen, or the payment mint is one the store cannot sell for. Each
 * names the setting to look at, and the exit code says whether starting again can help (1: the
 * database or the port may be back) or only a changed setting will (2, as for a setting refused
 * at start). No URL or password is ever echoed.
 */
import { databaseLocation } from "./config.ts";
import type { UnsellableMintError } from "./payments/chain.ts";

export interface StartFailure {
  exitCode: 1 | 2;
  msg: string;
  fields: Record<string, unknown>;
}

/**
 * SQLSTATEs only a changed DATABASE_URL fixes: a refused password or role (class 28), a database
 * that does not exist, a user who may not create the service's tables.
 */
const SETTING_SQLSTATES: Record<string, string> = {
  "28P01": "refused the password",
  "28000": "refused the user",
  "3D000": "has no such database",
  "42501": "does not let this user create the service's tables and functions",
};

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Errors only a changed DATA_DIR (or its mount, or its owner) fixes: PGlite must write there,
 * starting with the lock file. No stack: the message says it all.
 */
function dataDirRefusal(error: unknown, dataDir: string): StartFailure | null {
  const code = codeOf(error);
  const path = (error as { path?: unknown } | null)?.path;
  const fields = { dataDir, code, path };
  if (code === "EROFS") {
    return {
      exitCode: 2,
      msg: `DATA_DIR ${dataDir} is read-only (EROFS, a read-only file system): PGlite keeps the auction there and must write to it; mount it read-write or choose another DATA_DIR`,
      fields,
    };
  }
  if (code === "EACCES" || code === "EPERM") {
    const user = typeof process.getuid === "function" ? `uid ${process.getuid()}: ` : "";
    return {
      exitCode: 2,
      msg: `DATA_DIR ${dataDir} is read-only for this process (${user}${code}${typeof path === "string" ? ` on ${path}` : ""}): PGlite keeps the auction there and must write to it; give this user write access (chown) or choose another DATA_DIR`,
      fields,
    };
  }
  return null;
}

/** The store did not open. `databaseUrl` null: PGlite in `dataDir`. */
export function storeFailure(error: unknown, databaseUrl: string | null, dataDir: string): StartFailure {
  // A database a newer release upgraded (storage/migrations.ts): only another release or a
  // restored backup helps, so a supervisor should stop restarting this one.
  if (error instanceof Error && error.name === "MigrationsAheadError") {
    const where = databaseUrl
      ? `PostgreSQL at ${databaseLocation(databaseUrl)} (DATABASE_URL)`
      : `PGlite in DATA_DIR ${dataDir}`;
    const migrations = (error as Error & { unknown?: string[] }).unknown;
    return {
      exitCode: 2,
      msg: `refusing to start on ${where}: ${error.message}`,
      fields: databaseUrl ? { database: databaseLocation(databaseUrl), migrations } : { dataDir, migrations },
    };
  }
  // A restore cut short (restoreLeftovers.ts): running it again, or removing what it left, helps.
  if (error instanceof Error && error.name === "IncompleteRestoreError") {
    const leftover = (error as Error & { leftover?: string }).leftover;
    return { exitCode: 2, msg: `refusing to start: ${error.message}`, fields: { dataDir, leftover } };
  }
  if (!databaseUrl) {
    const refusal = dataDirRefusal(error, dataDir);
    if (refusal) return refusal;
    return {
      exitCode: 1,
      msg: `could not open the auction store on PGlite in DATA_DIR ${dataDir}: ${messageOf(error)}`,
      fields: { err: error, dataDir },
    };
  }
  const database = databaseLocation(databaseUrl);
  // StoreUnavailableError carries the connection's own error as its cause.
  const cause = (error as { cause?: unknown } | null)?.cause ?? error;
  const code = codeOf(cause) ?? codeOf(error);
  const refusal = code ? SETTING_SQLSTATES[code] : undefined;
  if (refusal) {
    return {
      exitCode: 2,
      msg: `DATABASE_URL: PostgreSQL at ${database} ${refusal}: ${messageOf(cause)} (${code})`,
      fields: { database, code },
    };
  }
  if (error instanceof Error && error.name === "StoreUnavailableError") {
    return {
      exitCode: 1,
      msg: `DATABASE_URL: cannot reach PostgreSQL at ${database}: ${messageOf(cause)}${code ? ` (${code})` : ""}`,
      fields: { database, code },
    };
  }
  return {
    exitCode: 1,
    msg: `could not open the auction store on PostgreSQL at ${database} (DATABASE_URL): ${messageOf(error)}`,
    fields: { err: error, database },
  };
}

/**
 * A listener did not listen on `host`:`port`. A host that does not resolve, or is no address of
 * this machine, is a setting to change (2); a port taken may be free again (1).
 */
export function listenFailure(
  error: unknown,
  host: string,
  port: number,
  settings: { host: "HOST" | "METRICS_HOST"; port: "PORT" | "METRICS_PORT" },
): StartFailure {
  const code = codeOf(error);
  const where = `${host}:${port}`;
  if (code === "ENOTFOUND" || code === "EADDRNOTAVAIL") {
    return {
      exitCode: 2,
      msg: `${settings.host}: cannot listen on ${where}: ${host} is not an address of this machine (${code}); 0.0.0.0 listens on every interface`,
      fields: { host, port, code },
    };
  }
  if (code === "EACCES") {
    return {
      exitCode: 2,
      msg: `${settings.port}: cannot listen on ${where}: a port under 1024 needs privileges this process lacks (EACCES)`,
      fields: { host, port, code },
    };
  }
  return {
    exitCode: 1,
    msg: `could not listen on ${where} (${settings.host}:${settings.port}): ${messageOf(error)}`,
    fields: { err: error, host, port },
  };
}

/**
 * The chain shows that every purchase would arrive short or fail (payments/tokenExtensions.ts):
 * another mint or token account is the fix, never a restart (2).
 */
export function unsellableFailure(error: UnsellableMintError): StartFailure {
  return { exitCode: 2, msg: error.message, fields: error.fields };
}
