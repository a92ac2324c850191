/**
 * A writable stream as Node's behaves to cork() and uncork(): what is written while corked leaves
 * together, in order, when the last cork is undone; otherwise each write leaves alone. `onWrite`
 * gets each write's chunks (several for a corked run, as Node's writev would).
 */
export function corkableStream(onWrite: (chunks: Buffer[]) => void) {
  let corked = 0;
  const pending: Buffer[] = [];
  return {
    get corked() {
      return corked;
    },
    write(chunk: Buffer) {
      if (corked > 0) pending.push(chunk);
      else onWrite([chunk]);
      return true;
    },
    cork() {
      corked += 1;
    },
    uncork() {
      if (corked === 0) return;
      corked -= 1;
      if (corked === 0 && pending.length > 0) onWrite(pending.splice(0));
    },
  };
}
