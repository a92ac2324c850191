/**
 * Real purchases (docs/design.md#8): the service's payment routes and the shapes of their answers,
 * shared by the service (service/payments/) and the page, which may be on another origin and
 * another version, so it checks what it reads.
 */

export const PAYMENTS_PATH = "/payments";
export const PAYMENTS_CONFIG_PATH = "/payments/config";
/** After /payments/<reference>: the request's Solana Pay transaction request (spec v1.1). */
export const TRANSACTION_REQUEST_SUFFIX = "/transaction";
/**
 * The chain the store's $ZN lives on, as Wallet Standard names it: what the page asks a browser
 * wallet to send on (the service watches one chain, SOLANA_RPC_URL's).
 */
export const PAYMENT_CHAIN = "solana:mainnet";

/** What the buy dialog says before any payment: the network, its fee, and that nothing is undone. */
export const PAYMENT_NETWORK_TEXT = `Paid in $ZN on Solana ${PAYMENT_CHAIN.slice("solana:".length)}. Your wallet also charges a small network fee in SOL. A payment cannot be undone.`;

export const PAYMENTS_UNAVAILABLE_TEXT = "Payments are unavailable right now.";
export const PAYMENT_NAME_NOT_ALLOWED_TEXT = "Name Not Allowed";

/** Solana Pay's label: who asks for the payment, shown by the wallet. */
export const PAYMENT_LABEL = "The Nothing Store";

export type PaymentStatus = "waiting" | "confirmed" | "underpaid" | "expired";

/** POST /payments. `tierId` is a tier's id (src/data/tiers.ts) as a decimal string, "1" to "6". */
export interface PaymentRequestBody {
  tierId: string;
  /** For the Wall of Fame's Verified Patrons; blank or absent: anonymous. */
  name?: string;
}

/** 201 to POST /payments. Amounts are $ZN in user units as exact decimal strings ("25", "0.5"). */
export interface CreatedPayment {
  /** 32 random bytes in base58: the Solana Pay reference key the payment must carry. */
  reference: string;
  /** The Solana Pay v1.1 transfer request (`solana:<recipient>?amount=...`). */
  url: string;
  /**
   * The Solana Pay v1.1 transaction request for the same payment
   * (`solana:https://<service>/payments/<reference>/transaction`): a wallet fetches the transaction.
   * Optional for the page: a service of an older version does not send it.
   */
  transactionUrl?: string;
  /** The wallet paid (PUBLIC_PAYMENT_ADDRESS). */
  recipient: string;
  /** The $ZN mint (PUBLIC_CONTRACT_ADDRESS). */
  mint: string;
  amount: string;
  tierId: string;
  tierName: string;
  spins: number;
  /** ISO 8601: a payment whose block time is later credits nothing. */
  expiresAt: string;
  /** True while the RPC provider rate limits the service: the confirmation may take minutes. */
  slow?: boolean;
}

/** GET /payments/config. */
export interface PaymentsConfigBody {
  /** The service takes payments (SOLANA_RPC_URL is set). */
  enabled: boolean;
  /** It can take one now (the chain and the database are reachable). */
  available: boolean;
  /** Confirmations are slower than usual (the RPC provider rate limits the service). */
  slow?: boolean;
  /** With payments on: the wallet the service watches (PUBLIC_PAYMENT_ADDRESS), the one the page must show. */
  recipient?: string;
}

/** GET /payments/<reference>. */
export interface PaymentStatusBody {
  reference: string;
  status: PaymentStatus;
  tierId: string;
  tierName: string;
  spins: number;
  /** The price, in $ZN. */
  priceAmount: string;
  /** What the crediting transaction brought, in $ZN (confirmed, underpaid, or a payment after expiry). */
  receivedAmount?: string;
  signature?: string;
  expiresAt: string;
}

/** Every error answer of the payment routes: a code, and for the visitor's eyes a message. */
export interface PaymentErrorBody {
  error: string;
  message?: string;
}

/** POST /payments/<reference>/transaction: the wallet's account (Solana Pay transaction request). */
export interface TransactionRequestBody {
  /** The buyer's wallet, base58: the fee payer and the owner of the $ZN account paid from. */
  account: string;
}

/** GET /payments/<reference>/transaction. */
export interface TransactionRequestLabel {
  label: string;
  /** Absolute URL of a square SVG. */
  icon: string;
}

/** 200 to POST /payments/<reference>/transaction. */
export interface TransactionRequestTransaction {
  /** Base64 of the unsigned, serialized version 0 transaction; the buyer signs it. */
  transaction: string;
  message: string;
}
