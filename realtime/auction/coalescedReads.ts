/**
 * Shares one database read among the sockets that open together (a reconnect storm after a
 * restart brings thousands at once), without breaking the no-gap rule: a socket may only use a
 * read that started after it registered with the broadcaster. So a caller never joins a read
 * already running; it joins the next one, which starts when the running one ends.
 */
export type Coalesce = <T>(key: string, read: () => Promise<T>) => Promise<T>;

interface Batch {
  running: Promise<unknown> | null;
  next: { promise: Promise<unknown>; start(): void } | null;
}

export function createCoalescer(): Coalesce {
  const batches = new Map<string, Batch>();

  function launch<T>(key: string, batch: Batch, read: () => Promise<T>): Promise<T> {
    const running = read().finally(() => {
      batch.running = null;
      const next = batch.next;
      batch.next = null;
      if (next) next.start();
      else batches.delete(key);
    });
    batch.running = running;
    return running;
  }

  return <T>(key: string, read: () => Promise<T>): Promise<T> => {
    let batch = batches.get(key);
    if (!batch) {
      batch = { running: null, next: null };
      batches.set(key, batch);
    }
    if (!batch.running) return launch(key, batch, read);
    if (!batch.next) {
      const current = batch;
      let start!: () => void;
      const promise = new Promise<T>((resolve, reject) => {
        start = () => launch(key, current, read).then(resolve, reject);
      });
      batch.next = { promise, start };
    }
    return batch.next.promise as Promise<T>;
  };
}
