/**
 * The embedded database's footprint (docs/design.md#9): PGlite opened as the store opens it runs
 * with the store's PostgreSQL settings on any data directory, stays inside its initial 128 MiB of
 * WebAssembly memory through the migrations, and V8 never recompiles it with TurboFan. What these
 * save is measured by `npm run bench:memory`; the assertions here are on settings, never on
 * memory figures.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { run } from "../../../scripts/harness/childProcess.ts";
import { readFunctions } from "../../../service/storage/functions.ts";
import { applyMigrations, readMigrations } from "../../../service/storage/migrations.ts";
import { rekeyNames } from "../../../service/storage/nameKeyVersion.ts";
import { pgliteTransaction } from "../../../service/storage/pglite.ts";
import { openPglite } from "../../../service/storage/pgliteDatabase.ts";
import { locationForThisTest, testLogger } from "../harness/stores.ts";

const WORKLOAD = fileURLToPath(new URL("../harness/pgliteWorkload.ts", import.meta.url));
const MIB = 1024 * 1024;

describe("PGlite as the store opens it", () => {
  it("runs with 16 MB of shared buffers whatever the directory's postgresql.conf says, inside its first 128 MiB", async () => {
    // Initialised with PGlite's defaults, as every directory made before these settings was.
    const location = await locationForThisTest("pglite", { unmigrated: true });
    expect(await readFile(join(location.dataDir, "postgresql.conf"), "utf8")).toMatch(/^shared_buffers = 128MB/m);

    const db = await openPglite(location.dataDir);
    try {
      const setting = async (name: string) => Object.values((await db.query(`SHOW ${name}`)).rows[0] ?? {})[0];
      expect(await setting("shared_buffers")).toBe("16MB");
      expect(await setting("maintenance_work_mem")).toBe("16MB");
      // wal_buffers follows shared_buffers (-1: a 32nd of it).
      expect(await setting("wal_buffers")).toBe("512kB");
      expect(db.Module.wasmMemory.buffer.byteLength).toBe(128 * MIB);

      // Every migration and function, as the store applies them when it opens: the memory never
      // grew (with 128 MB of buffers it is 188 MiB from the start, and never shrinks).
      await applyMigrations(
        pgliteTransaction(db),
        await readMigrations(),
        await readFunctions(),
        testLogger(),
        rekeyNames,
      );
      expect(db.Module.wasmMemory.buffer.byteLength).toBe(128 * MIB);
    } finally {
      await db.close();
    }
  });

  it("never lets V8 recompile PGlite's WebAssembly with TurboFan, which took 600 MB for PostgreSQL's parser alone", async () => {
    const location = await locationForThisTest("pglite", { unmigrated: true });
    // V8 prints every function it compiles and with which compiler; --wasm-sync-tier-up makes a
    // recompilation happen as soon as it is due, not on a thread the process may exit before.
    const compilers = async (mode: "store" | "default") => {
      const { stdout, stderr } = await run(
        process.execPath,
        ["--trace-wasm-compilation-times", "--wasm-sync-tier-up", WORKLOAD, location.dataDir, mode, "300"],
        { timeout: 60_000, maxBuffer: 64 * MIB },
      );
      const trace = `${stdout}\n${stderr}`;
      return {
        liftoff: trace.match(/ using Liftoff/g)?.length ?? 0,
        turbofan: trace.match(/ using TurboFan/g)?.length ?? 0,
      };
    };
    // The control: with PGlite's defaults the same 300 queries are recompiled with TurboFan.
    expect((await compilers("default")).turbofan).toBeGreaterThan(0);
    const store = await compilers("store");
    expect(store.liftoff).toBeGreaterThan(0);
    expect(store.turbofan).toBe(0);
  });
});
