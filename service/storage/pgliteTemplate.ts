/**
 * A new PGlite data directory without initdb in the service (docs/design.md#9). PGlite's initdb
 * runs a second PostgreSQL and copies its whole 128 MiB heap to reset it between steps: over 500 MB
 * resident for seconds, most of it still held by the process afterwards (588 MB idle). So the
 * service never runs it: `npm run build` makes the template (an initialised data directory, no migration
 * applied) once per PGlite version and settings, under node_modules/.cache, and a first start copies
 * it. With no template (a PGlite upgrade since the last build) a child process initialises the
 * directory and exits.
 *
 * Either way the files are made in a staging directory inside the data directory, made private
 * (privateFiles.ts) and moved into place with PG_VERSION last: PGlite takes a directory with
 * PG_VERSION for a database, so a start cut short leaves none, and the next start begins again.
 * Each start stages in a directory of its own: a child orphaned by a killed service may still be
 * writing into the last one's.
 */
import { spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { cp, mkdir, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Logger } from "../logger.ts";
import { openPglite, PGLITE_INITDB_ARGS } from "./pgliteDatabase.ts";
import { makePrivate, PRIVATE_DIR_MODE } from "./privateFiles.ts";

const INIT_SCRIPT = fileURLToPath(new URL("pgliteInit.ts", import.meta.url));
const CACHE_DIR = fileURLToPath(new URL("../../node_modules/.cache/nothing-store/", import.meta.url));
/** A new PGlite directory takes 3–10 s; far more means the child is stuck. */
const INIT_TIMEOUT_MS = 120_000;
export const STAGING_PREFIX = ".nothing-store-init-";
/** What PGlite (and PostgreSQL) take as the mark of a data directory. */
const VERSION_FILE = "PG_VERSION";

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

export async function hasDatabase(dir: string): Promise<boolean> {
  return exists(join(dir, VERSION_FILE));
}

/**
 * Where this PGlite release's template is: named by its version and by initdb's arguments, so an
 * upgrade or a change of settings never copies a template another made.
 */
export async function defaultTemplateDir(): Promise<string> {
  const entry = fileURLToPath(import.meta.resolve("@electric-sql/pglite"));
  const manifest = JSON.parse(await readFile(join(dirname(entry), "..", "package.json"), "utf8")) as {
    version: string;
  };
  const digest = createHash("sha256").update(JSON.stringify(PGLITE_INITDB_ARGS)).digest("hex").slice(0, 12);
  return join(CACHE_DIR, `pglite-${manifest.version}-${digest}`);
}

/** Initialises `dir` (empty or absent) in a child process; throws with its error output if it fails. */
export async function initialiseInChild(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const child = spawn(process.execPath, [INIT_SCRIPT, dir], { stdio: ["ignore", "ignore", "pipe"] });
  let errorOutput = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    errorOutput = (errorOutput + chunk).slice(-2_000);
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, INIT_TIMEOUT_MS);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
  }).finally(() => clearTimeout(timer));
  if (code !== 0) {
    // SIGKILL from elsewhere is most likely the kernel's out-of-memory killer.
    const how = timedOut ? `was stopped after ${INIT_TIMEOUT_MS / 1000} s` : `failed (${signal ?? code})`;
    throw new Error(`Initialising the PGlite data directory ${dir} ${how}: ${errorOutput.trim() || "no output"}`);
  }
}

/**
 * Makes the template if it is missing (`npm run build`); safe to run from several processes at
 * once: each builds in a directory of its own and the first rename wins.
 */
export async function ensureTemplate(templateDir?: string): Promise<{ dir: string; made: boolean }> {
  const dir = templateDir ?? (await defaultTemplateDir());
  if (await hasDatabase(dir)) return { dir, made: false };
  const building = `${dir}.building-${randomUUID()}`;
  await mkdir(dirname(dir), { recursive: true });
  try {
    // In this process: the build's step is a short-lived process of its own.
    await (await openPglite(building)).close();
    // Another process's template in place first is as good as this one.
    await rename(building, dir).catch(async (error: unknown) => {
      if (!(await hasDatabase(dir))) throw error;
    });
  } finally {
    // Left only when another process's rename came first, or initialising failed.
    await rm(building, { recursive: true, force: true });
  }
  return { dir, made: true };
}

/** Moves every entry of `from` into `to`, PG_VERSION last, over what an interrupted move left there. */
export async function moveInto(from: string, to: string): Promise<void> {
  const entries = (await readdir(from)).sort((a, b) => Number(a === VERSION_FILE) - Number(b === VERSION_FILE));
  for (const entry of entries) {
    // `to` has no PG_VERSION, so an entry of the same name can only be an interrupted start's.
    await rm(join(to, entry), { recursive: true, force: true });
    await rename(join(from, entry), join(to, entry));
  }
}

/**
 * Gives dataDir (locked by the caller) a database if it has none: a copy of the template, or one
 * initialised in a child process. A directory with a database is left as it is.
 */
export async function prepareDataDir(
  dataDir: string,
  logger: Logger,
  templateDir?: string,
): Promise<"existing" | "template" | "initialised"> {
  if (await hasDatabase(dataDir)) return "existing";
  const template = templateDir ?? (await defaultTemplateDir());
  for (const entry of await readdir(dataDir)) {
    if (entry.startsWith(STAGING_PREFIX)) await rm(join(dataDir, entry), { recursive: true, force: true });
  }
  const staging = join(dataDir, `${STAGING_PREFIX}${randomUUID()}`);
  let how: "template" | "initialised";
  try {
    if (await hasDatabase(template)) {
      await cp(template, staging, { recursive: true });
      how = "template";
    } else {
      logger.info(
        { template },
        "no PGlite template for this release (npm run build makes one): initialising in a child process",
      );
      await initialiseInChild(staging);
      how = "initialised";
    }
    // The copy keeps the template's modes, and PGlite's initdb sets its own (0666): private before
    // they are in place.
    await makePrivate(staging);
    await moveInto(staging, dataDir);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  logger.info({ dataDir, from: how }, "new PGlite data directory");
  return how;
}
