/**
 * Writes to one socket within one turn of the event loop leave as one write: the first corks the
 * socket, the turn's end (setImmediate) uncorks it, and Node hands everything buffered to the
 * kernel in one writev. A batch's bids are notified together, so without this every socket took
 * one system call per bid: at 100 bidders that was most of the service's CPU (48% in writeBuffer,
 * profiled), and the fan-out, not the database, set the bid rate. Everything written to a corked
 * socket, by ws as well as here, keeps its order, and nothing waits past the current turn.
 */
interface Corkable {
  write(chunk: Buffer): boolean;
  cork(): void;
  uncork(): void;
}

export interface CoalescedWrites {
  write(socket: Corkable, chunk: Buffer): void;
  /** Uncorks now rather than at the turn's end (on stop). */
  flush(): void;
}

export function createCoalescedWrites(): CoalescedWrites {
  const corked = new Set<Corkable>();
  let scheduled = false;

  function flush(): void {
    scheduled = false;
    // Cleared first: an uncork can emit an error that closes a socket and writes again.
    const sockets = [...corked];
    corked.clear();
    for (const socket of sockets) socket.uncork();
  }

  return {
    write(socket, chunk) {
      if (!corked.has(socket)) {
        socket.cork();
        corked.add(socket);
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      }
      socket.write(chunk);
    },
    flush,
  };
}
