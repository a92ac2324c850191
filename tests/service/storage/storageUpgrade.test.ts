/**
 * The upgrade proof (docs/design.md#7), on both backends: a database created by every earlier
 * release (harness/releases.ts: each state sql/ has been in, applied by that commit's own runner),
 * holding bids as that release placed them, is upgraded by today's code and then has exactly the
 * tables, columns, constraints, indexes, types, functions, views, triggers and sequences of a new
 * database, with every row it held intact. What lets the shipped migrations hold only the schema:
 * the functions they once created are applied after them, whatever the database's level.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { nameKey } from "../../../service/names/nameKey.ts";
import { migrateAsReleased, RELEASES } from "../harness/releases.ts";
import {
  BACKENDS,
  cleanUpAfter,
  createTestLocation,
  type DirectQuery,
  openTestStore,
  testLogger,
  withDirectSql,
} from "../harness/stores.ts";

/**
 * The database's catalog in the public schema, each object as one line of text, sorted: what a
 * database has, named as it names it (no oids, no row counts, no sequence positions).
 */
async function schemaOf(query: DirectQuery): Promise<Record<string, string[]>> {
  const lines = async (sql: string) => (await query(sql)).map((row) => String(row.line)).sort();
  const inPublic = "(SELECT oid FROM pg_namespace WHERE nspname = 'public')";
  return {
    relations: await lines(`SELECT concat_ws(' ', c.relname, c.relkind, c.relpersistence, c.reloptions::text,
        c.relrowsecurity, c.relacl::text) AS line
      FROM pg_class c WHERE c.relnamespace = ${inPublic}`),
    // Position among the columns that are not dropped: a column dropped and added again moves.
    columns: await lines(`SELECT concat_ws(' ', c.relname, row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum),
        a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attidentity, a.attgenerated,
        pg_get_expr(d.adbin, d.adrelid), co.collname) AS line
      FROM pg_attribute a
      JOIN pg_class c ON c.oid = a.attrelid
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      LEFT JOIN pg_collation co ON co.oid = a.attcollation
      WHERE c.relnamespace = ${inPublic} AND a.attnum > 0 AND NOT a.attisdropped`),
    indexes: await lines(`SELECT concat_ws(' ', pg_get_indexdef(i.indexrelid), i.indisunique, i.indisprimary,
        i.indisclustered, i.indisvalid) AS line
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relnamespace = ${inPublic}`),
    constraints: await lines(`SELECT concat_ws(' ', conrelid::regclass::text, contypid::regtype::text, conname, contype,
        pg_get_constraintdef(oid), condeferrable, condeferred, convalidated) AS line
      FROM pg_constraint WHERE connamespace = ${inPublic}`),
    types: await lines(`SELECT concat_ws(' ', t.typname, t.typtype, t.typcategory, t.typnotnull,
        format_type(t.typbasetype, t.typtypmod), t.typrelid::regclass::text,
        (SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid)) AS line
      FROM pg_type t WHERE t.typnamespace = ${inPublic}`),
    functions: await lines(`SELECT concat_ws(' ', p.oid::regprocedure::text, p.prokind, p.proacl::text,
        pg_get_functiondef(p.oid)) AS line
      FROM pg_proc p WHERE p.pronamespace = ${inPublic}`),
    views: await lines(`SELECT concat_ws(' ', c.relname, pg_get_viewdef(c.oid)) AS line
      FROM pg_class c WHERE c.relnamespace = ${inPublic} AND c.relkind IN ('v', 'm')`),
    triggers: await lines(`SELECT pg_get_triggerdef(t.oid) AS line
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
      WHERE c.relnamespace = ${inPublic} AND NOT t.tgisinternal`),
    sequences: await lines(`SELECT concat_ws(' ', s.seqrelid::regclass::text, format_type(s.seqtypid, NULL), s.seqstart,
        s.seqincrement, s.seqmin, s.seqmax, s.seqcache, s.seqcycle) AS line
      FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid WHERE c.relnamespace = ${inPublic}`),
    // What depends on what among them: a view on its columns, a function on its result type, an
    // identity sequence on its column, a foreign key on its index. Without the objects named by
    // their oid, which differ by birth: the foreign keys' internal triggers, the tables' TOAST.
    dependencies: await lines(`SELECT concat_ws(' -> ', o.identity, r.identity, d.deptype) AS line
      FROM pg_depend d
      CROSS JOIN LATERAL pg_identify_object(d.classid, d.objid, d.objsubid) o
      CROSS JOIN LATERAL pg_identify_object(d.refclassid, d.refobjid, d.refobjsubid) r
      WHERE 'public' IN (o.schema, r.schema) AND o.schema IS DISTINCT FROM 'pg_toast'
        AND NOT EXISTS (
          SELECT 1 FROM pg_trigger t WHERE d.classid = 'pg_trigger'::regclass AND t.oid = d.objid AND t.tgisinternal
        )`),
  };
}

type Row = Record<string, unknown>;
type Rows = Record<string, Row[]>;

/** Every row of every table, as JSON values (times and amounts as the database writes them). */
async function rowsOf(query: DirectQuery): Promise<Rows> {
  const tables = await query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename");
  const rows: Rows = {};
  for (const { tablename } of tables) {
    const table = String(tablename);
    const json = await query(`SELECT row_to_json(t)::text AS row FROM "${table}" t`);
    rows[table] = json
      .map((row) => String(row.row))
      .sort()
      .map((text) => JSON.parse(text) as Row);
  }
  return rows;
}

/** The name keys the releases stored: nameKey as it shipped gives these for these ASCII names. */
const RELEASED_KEYS: Record<string, string> = {
  Alice: "alice",
  Bob: "bob",
  Carol: "carol",
  Dave: "dave",
  Mallory: "mallory",
};
const ROUND_SECONDS = 60;
const SOFT_CLOSE_SECONDS = 10;
const CLOCK_START = Date.parse("2026-06-01T12:00:00.000Z");

/** Bids, rounds and moderation placed through the functions the release itself had. */
function releaseApi(query: DirectQuery, level: number) {
  function key(name: string): string {
    const released = RELEASED_KEYS[name];
    if (!released) throw new Error(`no released key for ${name}`);
    return released;
  }
  async function one(sql: string, params: unknown[]): Promise<Row> {
    const [row] = await query(sql, params);
    if (!row) throw new Error(`no row from ${sql}`);
    return row;
  }
  return {
    /** Steps the database's clock (auction_clock(), from 003 on). */
    async at(seconds: number): Promise<void> {
      await query("SELECT set_config('auction.test_now', $1, false)", [
        new Date(CLOCK_START + seconds * 1000).toISOString(),
      ]);
    },
    /** The bid's id when accepted, else null. */
    async bid(name: string, cents: number): Promise<number | null> {
      const row =
        level === 1
          ? await one("SELECT * FROM place_auction_bid($1::text, $2::bigint)", [name, cents])
          : level === 2
            ? await one("SELECT * FROM place_auction_bid($1::text, $2::text, $3::bigint)", [name, key(name), cents])
            : await one("SELECT * FROM place_auction_bid($1::text, $2::text, $3::bigint, $4::integer, $5::integer)", [
                name,
                key(name),
                cents,
                ROUND_SECONDS,
                SOFT_CLOSE_SECONDS,
              ]);
      return row.accepted === true || row.outcome === "accepted" ? Number(row.id) : null;
    },
    async batch(bids: [string, number][]): Promise<(number | null)[]> {
      const json = JSON.stringify(bids.map(([name, cents]) => ({ name, key: key(name), cents })));
      const rows = await query("SELECT * FROM place_auction_bids($1::text, $2::integer, $3::integer)", [
        json,
        ROUND_SECONDS,
        SOFT_CLOSE_SECONDS,
      ]);
      return rows
        .sort((a, b) => Number(a.ordinal) - Number(b.ordinal))
        .map((row) => (row.outcome === "accepted" ? Number(row.id) : null));
    },
    async settle(): Promise<void> {
      await one("SELECT * FROM settle_auction_round($1::integer)", [ROUND_SECONDS]);
    },
    async moderate(action: "hide" | "block", target: number | string): Promise<void> {
      const bidId = typeof target === "number" ? target : null;
      const name = typeof target === "string" ? target : null;
      const row = await one(
        "SELECT * FROM moderate_auction($1::text, $2::bigint, $3::text, $4::text, $5::text, $6::text)",
        [action, bidId, name, name === null ? null : key(name), `${action} before the upgrade`, "session-upgrade"],
      );
      expect(row.outcome).toBe("done");
    },
  };
}

/**
 * What each level allows: bids (one refused), and from 002 a hidden bid and a blocked name with
 * their audit rows, from 003 two rounds (the first closed by a settlement after a soft close), from
 * 004 a batch.
 */
async function placeAsReleased(query: DirectQuery, level: number): Promise<void> {
  const api = releaseApi(query, level);
  if (level === 1) {
    expect([
      await api.bid("Alice", 100),
      await api.bid("Bob", 200),
      await api.bid("Alice", 300),
      await api.bid("Carol", 250),
    ]).toEqual([1, 2, 3, null]);
    return;
  }
  if (level === 2) {
    const ids = [
      await api.bid("Alice", 100),
      await api.bid("Bob", 200),
      await api.bid("Mallory", 300),
      await api.bid("Alice", 400),
      await api.bid("Carol", 350),
    ];
    expect(ids).toEqual([1, 2, 3, 4, null]);
    await api.moderate("hide", 4);
    await api.moderate("block", "Mallory");
    return;
  }
  await api.at(0);
  expect(await api.bid("Alice", 100)).toBe(1);
  await api.at(5);
  expect(await api.bid("Bob", 200)).toBe(2);
  await api.at(55);
  expect(await api.bid("Mallory", 300)).toBe(3);
  await api.at(70);
  await api.settle();
  await api.at(80);
  expect(await api.bid("Alice", 150)).toBe(4);
  await api.at(85);
  const later =
    level >= 4
      ? await api.batch([
          ["Bob", 250],
          ["Dave", 260],
          ["Carol", 100],
        ])
      : [await api.bid("Bob", 250), await api.bid("Dave", 260), await api.bid("Carol", 100)];
  expect(later).toEqual([5, 6, null]);
  await api.at(90);
  await api.moderate("hide", 5);
  await api.moderate("block", "Mallory");
}

const KEY_COLUMNS: Record<string, string> = { auction_bids: "bidder_key", auction_blocked_names: "name_key" };

/**
 * The rows a table held before, as it holds them now: only the columns it had, and without the
 * name keys, which today's code may compute otherwise (checked against nameKey() instead).
 */
function asBefore(table: string, before: Row[], after: Row[]): { before: Row[]; after: Row[] } {
  const columns = Object.keys(before[0] ?? after[0] ?? {}).filter((column) => column !== KEY_COLUMNS[table]);
  const pick = (row: Row) => Object.fromEntries(columns.map((column) => [column, row[column]]));
  return { before: before.map(pick), after: after.map(pick) };
}

describe.each(BACKENDS)("a database of every earlier release, upgraded on %s", (backend) => {
  let fresh: { schema: Record<string, string[]>; migrations: Row[] };

  beforeAll(async () => {
    const location = await createTestLocation(backend, { unmigrated: true });
    try {
      await (await openTestStore(location)).close();
      fresh = await withDirectSql(location, async (query) => ({
        schema: await schemaOf(query),
        migrations: await query("SELECT version, name FROM schema_migrations ORDER BY version"),
      }));
    } finally {
      await location.remove();
    }
  });

  it("compares catalogs that tell a difference apart", async () => {
    // A new database with one function's body changed and one index more: the comparison sees both.
    const location = await createTestLocation(backend, { unmigrated: true });
    cleanUpAfter(() => location.remove());
    await (await openTestStore(location)).close();
    const changed = await withDirectSql(location, async (query) => {
      await query(
        "CREATE OR REPLACE FUNCTION auction_time_text(p_time timestamptz) RETURNS text LANGUAGE sql STABLE AS $$ SELECT p_time::text $$",
      );
      await query("CREATE INDEX auction_bids_amount_idx ON auction_bids (amount)");
      return schemaOf(query);
    });
    expect(changed.functions).not.toEqual(fresh.schema.functions);
    expect(changed.indexes).not.toEqual(fresh.schema.indexes);
    // Every kind is read (the schema has no trigger of its own, only its foreign keys' internal ones).
    for (const [kind, lines] of Object.entries(fresh.schema)) {
      if (kind !== "triggers") expect(lines, kind).not.toEqual([]);
    }
  });

  it.each(RELEASES)(
    "level $level, $change ($commit): upgraded to a new database's schema, its rows intact",
    async (release) => {
      const location = await createTestLocation(backend, { unmigrated: true });
      cleanUpAfter(() => location.remove());
      await migrateAsReleased(location, release);
      const before = await withDirectSql(location, async (query) => {
        await placeAsReleased(query, release.level);
        return rowsOf(query);
      });
      expect(before.schema_migrations?.map((row) => row.version)).toEqual(
        fresh.migrations.map((row) => row.version).filter((version) => Number(version) <= release.level),
      );

      const lines: Row[] = [];
      await (await openTestStore(location, { logger: testLogger((line) => lines.push(line)) })).close();
      expect(lines.filter((line) => line.msg === "functions applied")).toHaveLength(1);

      const after = await withDirectSql(location, async (query) => ({
        schema: await schemaOf(query),
        rows: await rowsOf(query),
        migrations: await query("SELECT version, name FROM schema_migrations ORDER BY version"),
      }));
      expect(after.schema).toEqual(fresh.schema);
      expect(after.migrations).toEqual(fresh.migrations);

      for (const [table, rows] of Object.entries(before)) {
        const held = after.rows[table] ?? [];
        const compared = asBefore(table, rows, held);
        if (table === "schema_migrations") {
          expect(compared.after, table).toEqual(expect.arrayContaining(compared.before));
        } else if (table === "auction_state" && (before.auction_blocked_names ?? []).length > 0) {
          // Re-keying the blocks (service/storage/nameKeyVersion.ts) is a moderation action: the
          // pages' version rises once; the highest, its round and the count stay as they were.
          const version = (rows: Row[]) => rows.map((row) => Number(row.moderation_version));
          const rest = (rows: Row[]) => rows.map(({ moderation_version: _, ...row }) => row);
          expect(version(compared.after), table).toEqual(version(compared.before).map((v) => v + 1));
          expect(rest(compared.after), table).toEqual(rest(compared.before));
        } else {
          expect(compared.after, table).toEqual(compared.before);
        }
      }
      // Every key as today's code computes it, so blocks find the bids they should.
      for (const bid of after.rows.auction_bids ?? []) {
        expect(bid.bidder_key, String(bid.bidder_name)).toBe(nameKey(String(bid.bidder_name)));
      }
      for (const blocked of after.rows.auction_blocked_names ?? []) {
        expect(blocked.name_key, String(blocked.bidder_name)).toBe(nameKey(String(blocked.bidder_name)));
      }

      // And the store works on it: the next bid follows the last id, and a reopen applies nothing.
      lines.length = 0;
      const store = await openTestStore(location, { logger: testLogger((line) => lines.push(line)) });
      try {
        expect(lines.filter((line) => /applied/.test(String(line.msg)))).toEqual([]);
        const lastId = Math.max(...(before.auction_bids ?? []).map((bid) => Number(bid.id)));
        const placed = await store.placeBid("After the upgrade", 999_999_999);
        expect(placed).toMatchObject({ accepted: true, bid: { id: lastId + 1 } });
        expect((await store.view(1)).highest?.id).toBe(lastId + 1);
      } finally {
        await store.close();
      }
    },
  );
});
