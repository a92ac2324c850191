/**
 * Vitest global setup: a temp root for this run's test data, handed to the tests through `inject`
 * and removed at the end, with the PostgreSQL cluster that the first test needing one starts in it
 * (stores.ts), so runs without database tests start none. DATABASE_URL, when set, is used instead.
 */
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { stopClusterAt } from "../../../scripts/harness/postgresCluster.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** DATABASE_URL when set, else "": the run's own cluster is started on demand. */
    databaseUrl: string;
    /** A temp directory for this run's PGlite directories and cluster, removed after the run. */
    storageTempRoot: string;
  }
}

export const RUN_CLUSTER_DIR_NAME = "postgres";

export default async function setup(project: TestProject) {
  const storageTempRoot = await mkdtemp(join(tmpdir(), "nothing-storage-"));
  // The postgres user runs the cluster below it when the tests run as root.
  await chmod(storageTempRoot, 0o755);
  project.provide("databaseUrl", process.env.DATABASE_URL?.trim() ?? "");
  project.provide("storageTempRoot", storageTempRoot);
  return async () => {
    await stopClusterAt(join(storageTempRoot, RUN_CLUSTER_DIR_NAME, "data"));
    await rm(storageTempRoot, { recursive: true, force: true });
  };
}
