import { errorMessage } from "./childProcess.ts";

/**
 * A script's options from its command line through `read` (node:util's parseArgs and the script's
 * own checks); any error is a usage error: printed with the usage line, exit code 2.
 */
/** An option's text as a whole number within bounds, or an error naming the option (a usage error inside `read`). */
export function wholeNumber(name: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`--${name} takes a whole number from ${min} to ${max.toLocaleString("en-US")}, got "${text}"`);
  }
  return value;
}

export function readCommandLine<T>(label: string, usage: string, read: (args: string[]) => T): T {
  try {
    return read(process.argv.slice(2));
  } catch (error) {
    console.error(`${label}: ${errorMessage(error)}\n${usage}`);
    process.exit(2);
  }
}
