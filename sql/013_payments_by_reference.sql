-- Payments found by their reference (docs/realtime.md, "Payments"): the watcher looks each open
-- request up by its reference, as Solana Pay's findReference does, instead of reading the history
-- of the store's token account, so spam on that account can neither hide nor delay a payment.
-- Expand only: payment_watcher's last_signature and rpc_ok stay for an older instance still running
-- during a rolling deploy; a later release drops them.

-- The start of the last lookup of the request by its reference. A request expires only once a
-- lookup that started after its end (and a grace) found nothing.
ALTER TABLE payments ADD COLUMN looked_up_at timestamptz;

-- The watcher's next lookups: the waiting requests of a mint, least recently looked up first.
CREATE INDEX payments_waiting_by_lookup ON payments (mint, recipient, looked_up_at NULLS FIRST, id)
  WHERE status = 'waiting';
-- Its heartbeat: the requests that ended unpaid, for a payment seen late.
CREATE INDEX payments_unpaid_by_end ON payments (expires_at) WHERE status = 'expired' AND signature IS NULL;

-- Transactions under a request's reference that credit nothing, judged once so that no later
-- lookup fetches them again: one that failed on chain, one that paid the store nothing, and one
-- that could not be judged after a few tries (set aside: the operator's console lists them).
CREATE TABLE payment_transactions (
  signature text PRIMARY KEY,
  reference text NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('failed', 'no_payment', 'set_aside')),
  -- For a transaction set aside: why it could not be judged.
  detail text,
  judged_at timestamptz NOT NULL
);
CREATE INDEX payment_transactions_set_aside ON payment_transactions (judged_at) WHERE outcome = 'set_aside';

-- The chain as the watcher last found it, for every instance to answer by: ok; limited (the
-- provider rate limits it: confirmations are slower, purchases go on); unreachable (out of reach
-- for longer than PAYMENT_RPC_UNREACHABLE_AFTER_MS: purchases are refused until it answers).
ALTER TABLE payment_watcher ADD COLUMN rpc_state text NOT NULL DEFAULT 'ok'
  CHECK (rpc_state IN ('ok', 'limited', 'unreachable'));
UPDATE payment_watcher SET rpc_state = 'unreachable' WHERE NOT rpc_ok;
