/**
 * The split of sql/ (docs/design.md#7): numbered migrations hold the schema, sql/functions/ every
 * function and view, applied after the migrations at a version the database records.
 */
import { describe, expect, it } from "vitest";
import { FUNCTIONS_DIGESTS, readFunctions } from "../../realtime/storage/functions.ts";

function withoutComments(sql: string): string {
  return sql.replace(/--[^\n]*/g, "");
}

describe("sql/functions/", () => {
  it("has its digest recorded as the newest version", async () => {
    const { digest, version } = await readFunctions();
    expect(
      digest,
      `sql/functions/ changed since version ${version}: append "${digest}" to FUNCTIONS_DIGESTS (realtime/storage/functions.ts)`,
    ).toBe(FUNCTIONS_DIGESTS.at(-1));
    for (const recorded of FUNCTIONS_DIGESTS) expect(recorded).toMatch(/^[0-9a-f]{64}$/);
  });

  it("creates only functions and views, each replaceable, so that applying it again is harmless", async () => {
    const { files } = await readFunctions();
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const statements = withoutComments(file.sql).match(/^(CREATE|ALTER|DROP|INSERT|UPDATE|DELETE)\b[^\n(]*/gm);
      expect(statements, file.name).not.toBeNull();
      for (const statement of statements ?? []) {
        expect(statement, file.name).toMatch(/^CREATE OR REPLACE (FUNCTION|VIEW) \w+/);
      }
    }
  });
});
