/**
 * `npm run build`'s last step: the PGlite template a first start copies instead of running initdb
 * in the service (service/storage/pgliteTemplate.ts, docs/design.md#9), kept while PGlite's version
 * and the store's settings stay the same. `node scripts/pglite-template.ts [dir]` makes it in `dir`
 * instead (for PGLITE_TEMPLATE_DIR, and the memory benchmark).
 */
import { relative, resolve } from "node:path";
import { ensureTemplate } from "../service/storage/pgliteTemplate.ts";

const target = process.argv[2];
const startedAt = performance.now();
const { dir, made } = await ensureTemplate(target ? resolve(target) : undefined);
const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
console.log(`PGlite template ${made ? `made in ${seconds} s` : "already made"}: ${relative(process.cwd(), dir)}`);
