/**
 * Reads that wait until the test answers them, oldest first: how a scripted store forces every
 * ordering of its reads against the notifications and timers around them, rather than hoping.
 */
import { setImmediate as nextTurn } from "node:timers/promises";

interface PendingRead<T, Call> {
  /** What the answer is made from (the read's arguments, what it could see when made). */
  call: Call;
  resolve(value: T): void;
  reject(error: Error): void;
}

export function pendingReads<T, Call>() {
  const pending: PendingRead<T, Call>[] = [];

  function takeOldest(): PendingRead<T, Call> {
    const read = pending.shift();
    if (!read) throw new Error("no read is waiting for an answer");
    return read;
  }

  return {
    /** A read made now; it settles when the test answers or fails it. */
    wait(call: Call): Promise<T> {
      return new Promise((resolve, reject) => pending.push({ call, resolve, reject }));
    },
    /** The calls of the reads waiting, oldest first. */
    get waiting(): Call[] {
      return pending.map((read) => read.call);
    },
    /** Answers the oldest read with `answer(call)`, then lets the reader's continuations run. */
    async answer(answer: (call: Call) => T): Promise<void> {
      const read = takeOldest();
      read.resolve(answer(read.call));
      await nextTurn();
    },
    /** Fails the oldest read, then lets the reader's continuations run. */
    async fail(): Promise<void> {
      takeOldest().reject(new Error("the database is away"));
      await nextTurn();
    },
  };
}
