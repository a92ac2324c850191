import type { Wallet, WalletAccount } from "@wallet-standard/base";
import { describe, expect, it } from "vitest";
import { PAYMENT_CHAIN, PAYMENTS_UNAVAILABLE_TEXT } from "../../src/lib/payments.ts";
import {
  base64Bytes,
  canPay,
  isDeclined,
  payableWallets,
  payingAccount,
  transactionRefusalText,
  walletFailureText,
  walletIcon,
} from "../../src/lib/walletPayment.ts";

const ICON = "data:image/svg+xml;base64,PHN2Zy8+";

/** A Wallet Standard wallet as a browser extension registers it; `features` and `chains` as given. */
function wallet(name: string, options: { features?: Record<string, unknown>; chains?: string[] } = {}): Wallet {
  return {
    version: "1.0.0",
    name,
    icon: ICON,
    chains: (options.chains ?? [PAYMENT_CHAIN, "solana:devnet"]) as Wallet["chains"],
    accounts: [],
    features: (options.features ?? {
      "standard:connect": { version: "1.0.0", connect: async () => ({ accounts: [] }) },
      "solana:signAndSendTransaction": { version: "1.0.0", supportedTransactionVersions: ["legacy", 0] },
    }) as Wallet["features"],
  };
}

function account(address: string, features: string[], chains = [PAYMENT_CHAIN]): WalletAccount {
  return {
    address,
    publicKey: new Uint8Array(32),
    chains: chains as WalletAccount["chains"],
    features: features as WalletAccount["features"],
  };
}

describe("which wallets can pay", () => {
  it("needs connect, sign-and-send of a version 0 transaction, and the store's chain", () => {
    expect(canPay(wallet("Phantom"), PAYMENT_CHAIN)).toBe(true);
    const connect = { "standard:connect": { version: "1.0.0" } };
    const signOnly = { ...connect, "solana:signTransaction": { supportedTransactionVersions: [0] } };
    expect(canPay(wallet("Signs only", { features: signOnly }), PAYMENT_CHAIN)).toBe(false);
    const legacyOnly = { ...connect, "solana:signAndSendTransaction": { supportedTransactionVersions: ["legacy"] } };
    expect(canPay(wallet("Legacy only", { features: legacyOnly }), PAYMENT_CHAIN)).toBe(false);
    const noConnect = { "solana:signAndSendTransaction": { supportedTransactionVersions: [0] } };
    expect(canPay(wallet("No connect", { features: noConnect }), PAYMENT_CHAIN)).toBe(false);
    expect(canPay(wallet("Devnet only", { chains: ["solana:devnet"] }), PAYMENT_CHAIN)).toBe(false);
    expect(canPay(wallet("Other chain", { chains: ["sui:mainnet"] }), PAYMENT_CHAIN)).toBe(false);
  });

  it("lists those that can, in the order they registered, each name once", () => {
    const phantom = wallet("Phantom");
    const listed = payableWallets(
      [phantom, wallet("Ethereum only", { chains: ["eip155:1"] }), wallet("Solflare"), wallet("Phantom")],
      PAYMENT_CHAIN,
    );
    expect(listed.map((each) => each.name)).toEqual(["Phantom", "Solflare"]);
    expect(listed[0]).toBe(phantom);
  });

  it("pays from the first account that can sign and send on the store's chain", () => {
    const accounts = [
      account("watch-only", []),
      account("devnet", ["solana:signAndSendTransaction"], ["solana:devnet"]),
      account("payer", ["solana:signAndSendTransaction", "solana:signMessage"]),
    ];
    expect(payingAccount(accounts, PAYMENT_CHAIN)?.address).toBe("payer");
    expect(payingAccount(accounts.slice(0, 2), PAYMENT_CHAIN)).toBeUndefined();
  });

  it("shows a wallet's icon only when it is an image data: URI", () => {
    expect(walletIcon({ icon: ICON })).toBe(ICON);
    expect(walletIcon({ icon: "data:image/png;base64,iVBORw0KGgo=" })).toBe("data:image/png;base64,iVBORw0KGgo=");
    expect(walletIcon({ icon: "https://evil.example/track.png" as Wallet["icon"] })).toBeUndefined();
    expect(walletIcon({ icon: "data:text/html;base64,PHNjcmlwdD4=" as Wallet["icon"] })).toBeUndefined();
    expect(walletIcon({ icon: 'data:image/svg+xml;base64,PHN2Zy8+" onerror="x' as Wallet["icon"] })).toBeUndefined();
  });
});

describe("what the dialog says when a wallet does not pay", () => {
  it("a decline, by code 4001 or in the wallet's words, says nothing was sent", () => {
    expect(isDeclined({ code: 4001, message: "anything" })).toBe(true);
    expect(isDeclined(new Error("User rejected the request."))).toBe(true);
    expect(isDeclined(new Error("Approval Denied"))).toBe(true);
    expect(isDeclined(new Error("Transaction simulation failed"))).toBe(false);
    expect(isDeclined(undefined)).toBe(false);
    expect(walletFailureText("Phantom", { code: 4001 })).toBe(
      "You declined the payment in Phantom. Nothing was sent: pay with Phantom again, or with the QR code or link.",
    );
  });

  it("any other failure names the wallet and its reason, briefly, on one line", () => {
    expect(walletFailureText("Solflare", new Error("Blockhash\nnot found"))).toBe(
      "Solflare could not send the payment (Blockhash not found). Try again, or pay with the QR code or link.",
    );
    expect(walletFailureText("Solflare", "a string, not an error")).toBe(
      "Solflare could not send the payment. Try again, or pay with the QR code or link.",
    );
    const long = walletFailureText("Solflare", new Error("x".repeat(1_000)));
    expect(long).toContain(`(${"x".repeat(120)})`);
    expect(long).not.toContain("x".repeat(121));
  });

  it("the service's refusal in its own words, or that payments are unavailable", () => {
    expect(transactionRefusalText({ error: "no_tokens", message: "This wallet holds no $ZN." })).toBe(
      "This wallet holds no $ZN.",
    );
    expect(transactionRefusalText(null)).toBe(PAYMENTS_UNAVAILABLE_TEXT);
    expect(transactionRefusalText({ message: 42 })).toBe(PAYMENTS_UNAVAILABLE_TEXT);
    expect(transactionRefusalText({ message: "m".repeat(201) })).toBe(PAYMENTS_UNAVAILABLE_TEXT);
  });
});

describe("the transaction's bytes", () => {
  it("decodes base64, and refuses what is not", () => {
    expect(base64Bytes("AQID")).toEqual(new Uint8Array([1, 2, 3]));
    expect(base64Bytes("not base64!")).toBeNull();
    expect(base64Bytes("A")).toBeNull();
    expect(base64Bytes(undefined)).toBeNull();
  });
});
