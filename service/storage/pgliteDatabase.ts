/**
 * PGlite as the store runs it (docs/design.md#9, "the embedded default fits a small machine"): its
 * PostgreSQL settings, its memory and V8's compiler for it. Imports PGlite alone, so the short-lived
 * process that initialises a data directory (pgliteInit.ts) loads nothing else.
 */
import { setFlagsFromString } from "node:v8";
import { PGlite } from "@electric-sql/pglite";

/**
 * PostgreSQL's settings, on its command line so they hold on any data directory, whatever its
 * postgresql.conf says (directories made before them say shared_buffers = 128MB). PGlite keeps
 * PostgreSQL's shared memory inside its WebAssembly memory and fills it at start, so every megabyte
 * of shared_buffers is resident from the start, and WebAssembly memory never shrinks: 16 MB of
 * buffers instead of 128 leave 24 MB of shared memory instead of 146 (the tables' files stay in the
 * kernel's page cache all the same). maintenance_work_mem bounds what a migration's index build or
 * a VACUUM can add to that memory for good (64 MB by default).
 */
const PGLITE_SETTINGS = { shared_buffers: "16MB", maintenance_work_mem: "16MB" } as const;

/** The module's own minimum (2,048 pages) and PGlite's default, named so that no release raises it unseen. */
const PGLITE_INITIAL_MEMORY_BYTES = 128 * 1024 * 1024;

const settingArgs = Object.entries(PGLITE_SETTINGS).flatMap(([name, value]) => ["-c", `${name}=${value}`]);

/** initdb's extra arguments: the same settings for its bootstrap, and written into the new postgresql.conf. */
export const PGLITE_INITDB_ARGS: readonly string[] = settingArgs;

/**
 * V8 compiles PGlite's WebAssembly with its baseline compiler (Liftoff), then recompiles each
 * function that runs often with TurboFan. One of them, PostgreSQL's parser (raw_parser, 105 kB of
 * WebAssembly), took TurboFan 600 MB for 1.5 s, a second after every start: a restart's peak was
 * 880 MB where it is now 190. On Liftoff alone a bid costs the service as much CPU (300–340 µs;
 * docs/design.md#9). V8 reads these two flags when it compiles a module, so they take effect here,
 * before PGlite compiles its own (--liftoff-only is read once, when V8 starts, and would not); they
 * are the process's, so any WebAssembly compiled after them stays on Liftoff too.
 */
function keepWebAssemblyOnBaseline(): void {
  setFlagsFromString("--no-wasm-dynamic-tiering");
  setFlagsFromString("--no-wasm-tier-up");
}

/**
 * Opens (and on an empty directory, initialises) PGlite on dataDir with the store's settings.
 * `onEngineLine` hears every line the engine writes to its stderr (PostgreSQL's own log), as it
 * writes it: a PANIC is said there before the call that hit it returns, and the next call into the
 * engine after one spins in WebAssembly for good, deaf to timers and signals.
 */
export function openPglite(dataDir: string, onEngineLine?: (line: string) => void): Promise<PGlite> {
  keepWebAssemblyOnBaseline();
  return PGlite.create({
    dataDir,
    initialMemory: PGLITE_INITIAL_MEMORY_BYTES,
    startParams: [...PGlite.defaultStartParams, ...settingArgs],
    initDbStartParams: [...PGLITE_INITDB_ARGS],
    // PGlite prints the line itself in debug mode only, whatever this returns.
    ...(onEngineLine && {
      onStderr: (line: string) => {
        onEngineLine(line);
        return false;
      },
    }),
  });
}
