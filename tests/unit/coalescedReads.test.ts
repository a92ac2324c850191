import { describe, expect, it } from "vitest";
import { createCoalescer } from "../../service/coalescedReads.ts";

/** A read whose completion the test controls, counting how often it starts. */
function controlledRead() {
  const started: ((value: number) => void)[] = [];
  return {
    read: () => new Promise<number>((resolve) => started.push(resolve)),
    started,
    finish(index: number, value: number) {
      started[index]?.(value);
    },
  };
}

/** One turn of the event loop: reads start on setImmediate. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("coalesced reads", () => {
  it("starts a read on the next turn of the event loop, shared by every caller of this turn", async () => {
    const coalesce = createCoalescer();
    const source = controlledRead();
    const first = coalesce("view", source.read);
    const second = coalesce("view", source.read);
    expect(source.started).toHaveLength(0);
    await nextTurn();
    expect(source.started).toHaveLength(1);
    source.finish(0, 1);
    expect(await Promise.all([first, second])).toEqual([1, 1]);
  });

  it("never hands a caller a read that started before it asked: callers meanwhile share the next one", async () => {
    const coalesce = createCoalescer();
    const source = controlledRead();
    const early = coalesce("view", source.read);
    await nextTurn();
    const late = [coalesce("view", source.read), coalesce("view", source.read), coalesce("view", source.read)];
    await nextTurn();
    expect(source.started).toHaveLength(1);
    source.finish(0, 1);
    expect(await early).toBe(1);
    await nextTurn();
    expect(source.started).toHaveLength(2);
    source.finish(1, 2);
    expect(await Promise.all(late)).toEqual([2, 2, 2]);
    await nextTurn();
    // Idle again: the next caller starts its own read.
    const after = coalesce("view", source.read);
    await nextTurn();
    expect(source.started).toHaveLength(3);
    source.finish(2, 3);
    expect(await after).toBe(3);
  });

  it("keeps different keys apart and passes failures to every caller of that read", async () => {
    const coalesce = createCoalescer();
    const failing = () => Promise.reject(new Error("database away"));
    const a = coalesce("after:1", failing);
    const b = coalesce("after:1", failing);
    const other = coalesce("after:2", async () => "fine");
    await expect(a).rejects.toThrow("database away");
    await expect(b).rejects.toThrow("database away");
    expect(await other).toBe("fine");
  });
});
