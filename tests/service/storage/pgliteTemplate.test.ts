/**
 * A new PGlite data directory never runs initdb in the service (docs/design.md#9): it is a copy of
 * the build's template, or, with none, initialised by a child process; either way moved into place
 * with PG_VERSION last, so a first start cut short leaves no half a database for the next to trust.
 */
import { chmod, mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { openPgliteStore } from "../../../service/storage/pglite.ts";
import {
  defaultTemplateDir,
  ensureTemplate,
  hasDatabase,
  initialiseInChild,
  prepareDataDir,
} from "../../../service/storage/pgliteTemplate.ts";
import { notPrivate } from "../harness/fileModes.ts";
import { cleanUpAfter, createTestDataDir, NO_BIDS, testLogger } from "../harness/stores.ts";

/** Every file below `dir` with its size, by path: what a copy must reproduce. */
async function listing(dir: string, skip: string[] = []): Promise<Record<string, number>> {
  const files: Record<string, number> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = relative(dir, join(entry.parentPath, entry.name));
    if (entry.isFile() && !skip.some((name) => path === name || path.startsWith(`${name}/`))) {
      files[path] = (await stat(join(dir, path))).size;
    }
  }
  return files;
}

async function testDataDir(options: { empty?: boolean; unmigrated?: boolean } = {}) {
  const data = await createTestDataDir(options);
  cleanUpAfter(() => data.remove());
  return data.dir;
}

/** An empty data directory as the store hands it to prepareDataDir: made private when it was locked. */
async function privateEmptyDir(): Promise<string> {
  const dir = await testDataDir({ empty: true });
  await chmod(dir, 0o700);
  return dir;
}

/** A store on `dataDir` opens (so the migrations ran on what was put there), shows no bids, and closes. */
async function expectStoreOpens(dataDir: string, templateDir: string): Promise<void> {
  const store = await openPgliteStore({ dataDir, logger: testLogger(), templateDir });
  try {
    expect(await store.view(50)).toMatchObject(NO_BIDS);
  } finally {
    await store.close();
  }
}

// Each may build the run's templates, or initialise a directory: seconds, more on a loaded machine.
describe("a new PGlite data directory", () => {
  it("is a copy of the template, and the store opens it", async () => {
    const template = await testDataDir({ unmigrated: true });
    const dataDir = await privateEmptyDir();
    expect(await prepareDataDir(dataDir, testLogger(), template)).toBe("template");
    expect(await listing(dataDir)).toEqual(await listing(template));
    // PGlite made the template's files 0666; the copy is owner-only.
    expect((await notPrivate(template)).length).toBeGreaterThan(900);
    expect(await notPrivate(dataDir)).toEqual([]);
    await expectStoreOpens(dataDir, template);
  });

  it("leaves a directory that has a database as it is", async () => {
    const dataDir = await testDataDir();
    const before = await listing(dataDir);
    expect(await prepareDataDir(dataDir, testLogger(), join(dataDir, "no-template"))).toBe("existing");
    expect(await listing(dataDir)).toEqual(before);
  });

  it("replaces what an interrupted first start left, and nothing else", async () => {
    const template = await testDataDir({ unmigrated: true });
    const dataDir = await testDataDir({ empty: true });
    // Cut short while copying into the staging directory, or while moving its entries out of it.
    await mkdir(join(dataDir, ".nothing-store-init-earlier", "base"), { recursive: true });
    await writeFile(join(dataDir, ".nothing-store-init-earlier", "base", "half"), "half a file");
    await mkdir(join(dataDir, "base", "1"), { recursive: true });
    await writeFile(join(dataDir, "base", "1", "stale"), "from the interrupted start");
    await writeFile(join(dataDir, "notes.txt"), "not PGlite's");

    expect(await prepareDataDir(dataDir, testLogger(), template)).toBe("template");
    expect(await listing(dataDir, ["notes.txt"])).toEqual(await listing(template));
    expect(await readFile(join(dataDir, "notes.txt"), "utf8")).toBe("not PGlite's");
    await expectStoreOpens(dataDir, template);
  });

  it("is initialised by a child process when there is no template, and says so", async () => {
    const dataDir = await privateEmptyDir();
    const missing = `${dataDir}-no-template`;
    const lines: Record<string, unknown>[] = [];
    const logger = testLogger((line) => lines.push(line));
    expect(await prepareDataDir(dataDir, logger, missing)).toBe("initialised");
    expect(lines.map((line) => line.msg)).toContain(
      "no PGlite template for this release (npm run build makes one): initialising in a child process",
    );
    expect(await hasDatabase(dataDir)).toBe(true);
    expect((await readdir(dataDir)).filter((entry) => entry.startsWith(".nothing-store-init"))).toEqual([]);
    expect(await notPrivate(dataDir)).toEqual([]);
    await expectStoreOpens(dataDir, missing);
  });

  it("reports a child that fails, naming the directory and quoting PGlite", async () => {
    // A PG_VERSION and nothing else: PGlite takes it for a database and cannot start it.
    const dir = await testDataDir({ empty: true });
    await writeFile(join(dir, "PG_VERSION"), "17\n");
    await expect(initialiseInChild(dir)).rejects.toThrow(
      `Initialising the PGlite data directory ${dir} failed (1): PGlite failed to initialize properly`,
    );
  });
});

describe("the PGlite template", () => {
  it("is made once, where a new release or other settings would not find it", async () => {
    // Its folders are made as needed (node_modules/.cache is there only once a tool made it).
    const dir = join(await testDataDir({ empty: true }), "cache", "nothing-store", "template");
    expect(await ensureTemplate(dir)).toEqual({ dir, made: true });
    expect(await hasDatabase(dir)).toBe(true);
    expect(await ensureTemplate(dir)).toEqual({ dir, made: false });
    // Nothing of the making is left beside it.
    expect(await readdir(join(dir, ".."))).toEqual(["template"]);

    const { version } = JSON.parse(
      await readFile(new URL("../../../node_modules/@electric-sql/pglite/package.json", import.meta.url), "utf8"),
    ) as { version: string };
    expect(await defaultTemplateDir()).toMatch(
      new RegExp(`/node_modules/\\.cache/nothing-store/pglite-${version.replaceAll(".", "\\.")}-[0-9a-f]{12}$`),
    );
  });
});
