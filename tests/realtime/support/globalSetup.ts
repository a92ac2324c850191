/**
 * Vitest global setup: one PostgreSQL cluster per test run (or DATABASE_URL when set) and one temp
 * root for PGlite data directories, both handed to the tests through `inject` and removed at the end.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { type PostgresCluster, postgresBinariesPresent, startPostgresCluster } from "./postgresCluster.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** Superuser URL of the run's PostgreSQL; "" when neither DATABASE_URL nor the binaries exist. */
    postgresUrl: string;
    /** Why postgresUrl is empty. */
    postgresMissing: string;
    /** A temp directory for this run's PGlite data directories, removed after the run. */
    storageTempRoot: string;
  }
}

export default async function setup(project: TestProject) {
  const storageTempRoot = await mkdtemp(join(tmpdir(), "nothing-storage-"));
  let cluster: PostgresCluster | undefined;
  let postgresUrl = process.env.DATABASE_URL?.trim() ?? "";
  let postgresMissing = "";
  if (!postgresUrl) {
    if (postgresBinariesPresent()) {
      cluster = await startPostgresCluster();
      postgresUrl = cluster.url;
    } else {
      postgresMissing = "no DATABASE_URL and no PostgreSQL 15 binaries (run .ci/run to install them)";
    }
  }
  project.provide("postgresUrl", postgresUrl);
  project.provide("postgresMissing", postgresMissing);
  project.provide("storageTempRoot", storageTempRoot);
  return async () => {
    await cluster?.destroy();
    await rm(storageTempRoot, { recursive: true, force: true });
  };
}
