-- Real purchases (docs/design.md#8): Solana Pay transfer requests and what the chain said of them.
-- Tables and indexes only: the logic is in parameterised statements from realtime/storage/payments.ts.

-- One payment request. Amounts are the mint's base units (u64 fits numeric(20,0)); the mint, its
-- decimals and the recipient are kept with each request, so a change of PUBLIC_CONTRACT_ADDRESS or
-- PUBLIC_PAYMENT_ADDRESS never credits an old request in the new token.
CREATE TABLE payments (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- 32 random bytes, base58: the key a Solana Pay wallet adds to the transfer.
  reference text NOT NULL UNIQUE,
  tier_id integer NOT NULL,
  price_base_units numeric(20, 0) NOT NULL CHECK (price_base_units > 0),
  decimals smallint NOT NULL CHECK (decimals BETWEEN 0 AND 255),
  mint text NOT NULL,
  recipient text NOT NULL,
  -- For Verified Patrons; null: anonymous. name_key is nameKey(name), as the blocklist compares.
  payer_name text,
  name_key text,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  status text NOT NULL DEFAULT 'waiting' CHECK (status IN ('waiting', 'confirmed', 'underpaid', 'expired')),
  -- The one transaction credited to this request (confirmed, underpaid, or paid after the expiry).
  signature text UNIQUE,
  amount_received numeric(20, 0),
  confirmed_at timestamptz,
  -- Hidden from Verified Patrons by the operator.
  hidden_at timestamptz,
  CHECK ((payer_name IS NULL) = (name_key IS NULL)),
  CHECK ((signature IS NULL) = (amount_received IS NULL)),
  CHECK (status NOT IN ('confirmed', 'underpaid') OR signature IS NOT NULL)
);

-- The expiry sweep reads the open requests by their end.
CREATE INDEX payments_waiting_by_expiry ON payments (expires_at) WHERE status = 'waiting';
-- Verified Patrons: the confirmed payments with a name, per mint.
CREATE INDEX payments_patrons ON payments (mint, name_key) WHERE status = 'confirmed' AND payer_name IS NOT NULL;

-- The watcher's place in the history of the token account it reads (the recipient's associated
-- token account for the mint), and whether it can reach the chain, for every instance to answer by.
CREATE TABLE payment_watcher (
  token_account text PRIMARY KEY,
  -- The newest signature processed; it moves only in the transaction that records its outcome.
  last_signature text,
  rpc_ok boolean NOT NULL DEFAULT true,
  updated_at timestamptz NOT NULL DEFAULT now()
);
