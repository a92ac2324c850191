/**
 * The name filter's cost per bid (service/names/nameFilter.ts): the time to build it once, and
 * the time per call over names like the ones bidders send (ordinary, long, emoji, profane, links),
 * the median of 5 rounds; then, per name, the disguised names of issue 20 (read twice: folded,
 * and as the ASCII their lookalikes imitate) and the name key (nameKey.ts), which a bid computes
 * twice (the instance's quick check and the database's). Usage: npm run bench:name-filter
 */
import { createNameFilter } from "../service/names/nameFilter.ts";
import { nameKey } from "../service/names/nameKey.ts";

const NAMES = [
  "Nobody",
  "Bench Bidder 042",
  "Zoë Nguyễn",
  "J.R. Nobody",
  "💸".repeat(40),
  "x".repeat(40),
  "Cocktail Assassin",
  "Sh1t Bidder",
  "buy at nothing.store",
  "https://nothing.example",
];
/** Issue 20's disguises: compatibility forms, invisible code points, lookalikes from other scripts. */
const DISGUISED = [
  "\u24d5\u24e4\u24d2\u24da",
  "f\u034fuck",
  "nothing\u3002store",
  "N\u043ebody",
  "f\u03c5\u03f2k",
  "\u0418\u0432\u0430\u043d",
];
const CALLS_PER_ROUND = 200_000;

const builtAt = performance.now();
const filter = createNameFilter();
const buildMs = performance.now() - builtAt;

// Warm up the regular expressions and the JIT before timing.
for (let i = 0; i < 20_000; i++) filter(NAMES[i % NAMES.length] as string);

const perCallMicros: number[] = [];
let refused = 0;
for (let round = 0; round < 5; round++) {
  const startedAt = performance.now();
  for (let i = 0; i < CALLS_PER_ROUND; i++) {
    if (!filter(NAMES[i % NAMES.length] as string).allowed) refused++;
  }
  perCallMicros.push(((performance.now() - startedAt) * 1000) / CALLS_PER_ROUND);
}
perCallMicros.sort((a, b) => a - b);
/** "name" 1.23 µs: the time per call of `work` on one name. */
function timedPerName(names: string[], work: (name: string) => unknown): string {
  return names
    .map((name) => {
      for (let i = 0; i < 2_000; i++) work(name);
      const startedAt = performance.now();
      for (let i = 0; i < 20_000; i++) work(name);
      const micros = ((performance.now() - startedAt) * 1000) / 20_000;
      return `${JSON.stringify(name.length > 20 ? `${name.slice(0, 8)}…` : name)} ${micros.toFixed(2)} µs`;
    })
    .join("; ");
}
const byName = timedPerName(NAMES, filter);
console.log(
  `name filter: built in ${buildMs.toFixed(0)} ms; ${(perCallMicros[2] as number).toFixed(2)} µs per name ` +
    `(median of 5 rounds of ${CALLS_PER_ROUND.toLocaleString("en-US")}; rounds ${perCallMicros.map((value) => value.toFixed(2)).join(", ")}); ` +
    `refused ${refused / 5 / CALLS_PER_ROUND} of names`,
);
console.log(`per name: ${byName}`);
console.log(`disguised names: ${timedPerName(DISGUISED, filter)}`);
console.log(`name key: ${timedPerName([...NAMES, ...DISGUISED], nameKey)}`);
