/**
 * Shares one database read among the sockets that open together (a reconnect storm after a
 * restart brings thousands at once), without breaking the no-gap rule: a socket may only use a
 * read that started after it registered with the broadcaster. So a caller never joins a read
 * already running; it joins the next one, which starts when the running one ends.
 *
 * A read starts on the next turn of the event loop (setImmediate), not at once: the handshakes
 * that arrive in one poll phase then share it. Started at once, an in-process PGlite read (which
 * runs synchronously) was over before the next handshake was even handled, and each socket of a
 * storm paid for its own (measured by bench:realtime's reconnect storm).
 */
export type Coalesce = <T>(key: string, read: () => Promise<T>) => Promise<T>;

interface NextRead {
  promise: Promise<unknown>;
  start(): void;
}

interface Batch {
  running: boolean;
  next: NextRead | null;
}

export function createCoalescer(): Coalesce {
  const batches = new Map<string, Batch>();

  function startNext(key: string, batch: Batch): void {
    const next = batch.next;
    if (!next) {
      batches.delete(key);
      return;
    }
    batch.next = null;
    batch.running = true;
    next.start();
  }

  return <T>(key: string, read: () => Promise<T>): Promise<T> => {
    let batch = batches.get(key);
    if (!batch) {
      batch = { running: false, next: null };
      batches.set(key, batch);
    }
    let next = batch.next;
    if (!next) {
      const current = batch;
      let start!: () => void;
      const promise = new Promise<T>((resolve, reject) => {
        start = () => {
          // A read that throws instead of rejecting still ends its batch.
          Promise.resolve()
            .then(read)
            .finally(() => {
              current.running = false;
              startNext(key, current);
            })
            .then(resolve, reject);
        };
      });
      next = { promise, start };
      current.next = next;
      if (!current.running) setImmediate(() => startNext(key, current));
    }
    return next.promise as Promise<T>;
  };
}
