/**
 * The name filter's cost per bid (realtime/names/nameFilter.ts): the time to build it once, and
 * the time per call over names like the ones bidders send (ordinary, long, emoji, profane, links),
 * the median of 5 rounds. Usage: npm run bench:name-filter
 */
import { createNameFilter } from "../realtime/names/nameFilter.ts";

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
const byName = NAMES.map((name) => {
  const startedAt = performance.now();
  for (let i = 0; i < 20_000; i++) filter(name);
  return `${JSON.stringify(name.length > 20 ? `${name.slice(0, 8)}…` : name)} ${(((performance.now() - startedAt) * 1000) / 20_000).toFixed(2)} µs`;
});
console.log(
  `name filter: built in ${buildMs.toFixed(0)} ms; ${(perCallMicros[2] as number).toFixed(2)} µs per name ` +
    `(median of 5 rounds of ${CALLS_PER_ROUND.toLocaleString("en-US")}; rounds ${perCallMicros.map((value) => value.toFixed(2)).join(", ")}); ` +
    `refused ${refused / 5 / CALLS_PER_ROUND} of names`,
);
console.log(`per name: ${byName.join("; ")}`);
