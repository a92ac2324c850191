/**
 * PGlite does not lock its data directory; the store does (docs/design.md#3a): a second opener, in this
 * process or another, is refused with a message naming the directory, and the lock goes with its
 * holder, whether it closes or crashes.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect } from "vitest";
import { DataDirLockedError, LOCK_FILE_NAME } from "../../realtime/storage/dataDirLock.ts";
import { killChild } from "../../scripts/support/childProcess.ts";
import { cleanUpAfter, NO_BIDS, openTestStore, storeForThisTest, storeTestOn, waitFor } from "./support/stores.ts";

const OPEN_STORE_SCRIPT = fileURLToPath(new URL("./support/openStoreProcess.ts", import.meta.url));
const CHILD_TIMEOUT_MS = 30_000;

const storeTest = storeTestOn("pglite");

/** Starts `node openStoreProcess.ts`; resolves with its first output line and the process. */
function openInAnotherProcess(dataDir: string, mode: "close" | "hold") {
  const child = spawn(process.execPath, [OPEN_STORE_SCRIPT, dataDir, mode], { stdio: ["ignore", "pipe", "pipe"] });
  cleanUpAfter(() => killChild(child));
  let output = "";
  let errors = "";
  child.stderr.on("data", (chunk) => {
    errors += chunk;
  });
  const firstLine = new Promise<{ opened?: boolean; error?: string; name?: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer from the child: ${errors}`)), CHILD_TIMEOUT_MS);
    child.stdout.on("data", (chunk) => {
      output += chunk;
      const newline = output.indexOf("\n");
      if (newline >= 0) {
        clearTimeout(timer);
        resolve(JSON.parse(output.slice(0, newline)));
      }
    });
    // "close", not "exit": a child that prints and exits at once may exit before its line is read.
    child.once("close", (code) => {
      clearTimeout(timer);
      if (!output.includes("\n")) reject(new Error(`child exited with ${code}: ${errors}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { child, firstLine, exited };
}

describe("the PGlite data directory lock", () => {
  storeTest(
    "refuses a second open in the same process, naming the directory, until the first closes",
    async ({ location, store }) => {
      const dir = await realpath(location.dataDir);
      const second = openTestStore(location);
      await expect(second).rejects.toBeInstanceOf(DataDirLockedError);
      await expect(second).rejects.toThrow(`The data directory ${dir} is already open in this process.`);

      await store.close();
      expect(existsSync(join(dir, LOCK_FILE_NAME))).toBe(false);
      const reopened = await storeForThisTest(location);
      expect(await reopened.view(1)).toMatchObject({ ...NO_BIDS, round: { number: 0 } });
    },
    60_000,
  );

  storeTest(
    "refuses another process with a clear message, and lets it in once closed",
    async ({ location, store }) => {
      const dir = await realpath(location.dataDir);
      const refused = openInAnotherProcess(location.dataDir, "close");
      const answer = await refused.firstLine;
      expect(answer.name).toBe("DataDirLockedError");
      expect(answer.error).toContain(`The data directory ${dir} is in use by process ${process.pid}`);
      expect(answer.error).toContain("choose another DATA_DIR");
      expect(await refused.exited).toBe(1);

      await store.placeBid("kept", 100);
      await store.close();
      const admitted = openInAnotherProcess(location.dataDir, "close");
      expect(await admitted.firstLine).toEqual({ opened: true });
      expect(await admitted.exited).toBe(0);
    },
    60_000,
  );

  storeTest(
    "does not outlive a holder that was killed",
    async ({ location }) => {
      const holder = openInAnotherProcess(location.dataDir, "hold");
      expect(await holder.firstLine).toEqual({ opened: true });
      await expect(openTestStore(location)).rejects.toThrow(/is in use by process \d+/);

      holder.child.kill("SIGKILL");
      await holder.exited;
      expect(existsSync(join(location.dataDir, LOCK_FILE_NAME))).toBe(true);
      const store = await storeForThisTest(location);
      await waitFor("the store to answer", async () => (await store.view(1)).bidders === 0);
    },
    60_000,
  );
});
