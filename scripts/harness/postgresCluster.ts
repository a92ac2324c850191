/**
 * A throwaway PostgreSQL 15 cluster for tests: initdb into a temp directory, listening on
 * 127.0.0.1 at a port picked beforehand (postgres cannot take port 0) and on a unix socket in that
 * directory, tuned for speed rather than durability. PostgreSQL refuses to run as root, so as root
 * the directory is given to the `postgres` user and every binary runs through `runuser`.
 *
 *   const cluster = await startPostgresCluster();
 *   // cluster.url → postgres://postgres@127.0.0.1:<port>/postgres
 *   await cluster.stop(); await cluster.start(); // the same cluster, same port: an outage
 *   await cluster.destroy();                       // stop and remove, always (afterAll)
 */
import { existsSync } from "node:fs";
import { appendFile, chown, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run } from "./childProcess.ts";
import { freePort } from "./ports.ts";

const POSTGRES_BIN_DIR = process.env.POSTGRES_BIN_DIR ?? "/usr/lib/postgresql/15/bin";

export interface PostgresCluster {
  /** Superuser URL of the `postgres` database; no password (trust). */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** pg_ctl stop -m fast: connections are cut as in a real outage. */
  stop(): Promise<void>;
  /** Starts the same cluster on the same port again, waiting until it accepts connections. */
  start(): Promise<void>;
  /** Stops the cluster if it runs and removes its directory; safe to call twice. */
  destroy(): Promise<void>;
}

export function postgresBinariesPresent(): boolean {
  return existsSync(join(POSTGRES_BIN_DIR, "postgres")) && existsSync(join(POSTGRES_BIN_DIR, "pg_ctl"));
}

const runningAsRoot = process.getuid?.() === 0;

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const { stdout } = await run("id", ["-u", "postgres"]);
  const { stdout: group } = await run("id", ["-g", "postgres"]);
  return { uid: Number(stdout.trim()), gid: Number(group.trim()) };
}

/** Runs a PostgreSQL binary, as the postgres user when we are root. */
function pgBinary(name: string, args: string[], timeoutMs = 60_000) {
  const binary = join(POSTGRES_BIN_DIR, name);
  const [command, commandArgs] = runningAsRoot
    ? ["runuser", ["-u", "postgres", "--", binary, ...args]]
    : [binary, args];
  return run(command, commandArgs, { timeout: timeoutMs });
}

/** Stops whatever cluster runs in `dataDir` (cleanup after a run, whoever started it). */
export async function stopClusterAt(dataDir: string): Promise<void> {
  if (!existsSync(join(dataDir, "postmaster.pid"))) return;
  await pgBinary("pg_ctl", ["-D", dataDir, "stop", "-w", "-t", "30", "-m", "immediate"]).catch(() => {});
}

/**
 * Starts a new cluster in `options.dir` (an empty directory; its parents must be traversable by the
 * postgres user) or in a new temp directory. destroy() removes that directory.
 */
export async function startPostgresCluster(options: { dir?: string } = {}): Promise<PostgresCluster> {
  if (!postgresBinariesPresent()) {
    throw new Error(
      `PostgreSQL server binaries are missing from ${POSTGRES_BIN_DIR}: install postgresql-15 (.ci/run does) or set DATABASE_URL`,
    );
  }
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "nothing-pg-")));
  const dataDir = join(dir, "data");
  const logFile = join(dir, "postgres.log");
  try {
    if (runningAsRoot) {
      const { uid, gid } = await postgresUser();
      await chown(dir, uid, gid);
    }
    // UTF8 explicitly: with --locale=C initdb would pick SQL_ASCII, and the name checks need Unicode.
    await pgBinary("initdb", [
      "-D",
      dataDir,
      "--auth=trust",
      "--no-sync",
      "--locale=C",
      "-E",
      "UTF8",
      "-U",
      "postgres",
    ]);
    // The cluster lives minutes and is thrown away: durability buys nothing here.
    await appendFile(
      join(dataDir, "postgresql.conf"),
      [
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${dir}'`,
        "fsync = off",
        "synchronous_commit = off",
        "full_page_writes = off",
        "max_connections = 200",
        "",
      ].join("\n"),
    );
    let port = 0;
    const pgCtl = (args: string[]) => pgBinary("pg_ctl", ["-D", dataDir, ...args]);
    const start = async () => {
      await pgCtl(["start", "-w", "-t", "30", "-l", logFile, "-o", `-p ${port}`]);
    };
    // A port picked free can be taken before postgres binds it: try a few.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        await start();
        break;
      } catch (error) {
        if (attempt >= 3) throw new Error(`PostgreSQL did not start: ${await readLog(logFile)}`, { cause: error });
      }
    }
    let destroyed = false;
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      port,
      dataDir,
      async stop() {
        await pgCtl(["stop", "-w", "-t", "30", "-m", "fast"]);
      },
      start,
      async destroy() {
        if (destroyed) return;
        destroyed = true;
        await pgCtl(["stop", "-w", "-t", "30", "-m", "immediate"]).catch(() => {});
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await pgBinary("pg_ctl", ["-D", dataDir, "stop", "-m", "immediate"]).catch(() => {});
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

async function readLog(logFile: string): Promise<string> {
  return (await readFile(logFile, "utf8").catch(() => "(no log)")).slice(-2000);
}
