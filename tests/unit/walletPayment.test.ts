// @vitest-environment happy-dom
import { getWallets } from "@wallet-standard/app";
import type { Wallet, WalletAccount } from "@wallet-standard/base";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PAYMENT_CHAIN, PAYMENTS_UNAVAILABLE_TEXT } from "../../src/lib/payments.ts";
import {
  answerWithin,
  base64Bytes,
  isDeclined,
  payableWallets,
  payingAccount,
  transactionRefusalText,
  WALLET_ANSWER_MS,
  WALLET_NAME_MAX_LENGTH,
  WalletDidNotAnswer,
  walletFailureText,
  walletIcon,
  walletName,
} from "../../src/lib/walletPayment.ts";
import { showWallets } from "../../src/scripts/walletPay.ts";

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
      "solana:signAndSendTransaction": {
        version: "1.0.0",
        supportedTransactionVersions: ["legacy", 0],
        signAndSendTransaction: async () => [{ signature: new Uint8Array(64) }],
      },
    }) as Wallet["features"],
  };
}

const canPay = (each: Wallet, chain: string) => payableWallets([each], chain).length === 1;

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
    const connect = { "standard:connect": { version: "1.0.0", connect: async () => ({ accounts: [] }) } };
    const signAndSendTransaction = async () => [];
    const signOnly = { ...connect, "solana:signTransaction": { supportedTransactionVersions: [0] } };
    expect(canPay(wallet("Signs only", { features: signOnly }), PAYMENT_CHAIN)).toBe(false);
    const legacyOnly = {
      ...connect,
      "solana:signAndSendTransaction": { supportedTransactionVersions: ["legacy"], signAndSendTransaction },
    };
    expect(canPay(wallet("Legacy only", { features: legacyOnly }), PAYMENT_CHAIN)).toBe(false);
    const noConnect = {
      "solana:signAndSendTransaction": { supportedTransactionVersions: [0], signAndSendTransaction },
    };
    expect(canPay(wallet("No connect", { features: noConnect }), PAYMENT_CHAIN)).toBe(false);
    // Features that name a method they do not have: a button that could only fail.
    const noMethods = {
      "standard:connect": { version: "1.0.0" },
      "solana:signAndSendTransaction": { supportedTransactionVersions: [0] },
    };
    expect(canPay(wallet("No methods", { features: noMethods }), PAYMENT_CHAIN)).toBe(false);
    expect(canPay(wallet("Devnet only", { chains: ["solana:devnet"] }), PAYMENT_CHAIN)).toBe(false);
    expect(canPay(wallet("Other chain", { chains: ["sui:mainnet"] }), PAYMENT_CHAIN)).toBe(false);
    // A string "includes" the chain too: chains must be a list.
    expect(
      canPay({ ...wallet("String chains"), chains: PAYMENT_CHAIN as unknown as Wallet["chains"] }, PAYMENT_CHAIN),
    ).toBe(false);
  });

  it("lists those that can, in the order they registered; two of one name both, numbered", () => {
    const phantom = wallet("Phantom");
    const impostor = wallet("Phantom");
    const listed = payableWallets(
      [phantom, wallet("Ethereum only", { chains: ["eip155:1"] }), wallet("Solflare"), impostor],
      PAYMENT_CHAIN,
    );
    expect(listed.map((each) => each.label)).toEqual(["Phantom", "Solflare", "Phantom (2)"]);
    expect(listed[0]?.wallet).toBe(phantom);
    expect(listed[2]?.wallet).toBe(impostor);
    // A wallet already named like the number another would get: every label stays unique.
    const labels = payableWallets([wallet("Phantom (2)"), wallet("Phantom"), wallet("Phantom")], PAYMENT_CHAIN).map(
      (each) => each.label,
    );
    expect(labels).toEqual(["Phantom (2)", "Phantom", "Phantom (3)"]);
  });

  it("skips a wallet that throws while listed, whatever it throws from, and lists the others", () => {
    const throwsOn = (property: "features" | "name" | "icon" | "chains") =>
      Object.defineProperty({ ...wallet(`Throws on ${property}`) }, property, {
        get() {
          throw new Error(`no ${property}`);
        },
      });
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("no feature");
        },
      },
    );
    const versions = new Proxy([], {
      get() {
        throw new Error("no versions");
      },
    });
    const wallets = [
      throwsOn("features"),
      throwsOn("name"),
      throwsOn("icon"),
      throwsOn("chains"),
      { ...wallet("Hostile features"), features: hostile },
      {
        ...wallet("Hostile versions"),
        features: {
          "standard:connect": { version: "1.0.0", connect: async () => ({ accounts: [] }) },
          "solana:signAndSendTransaction": { supportedTransactionVersions: versions, signAndSendTransaction: vi.fn() },
        },
      },
      new Proxy(wallet("Hostile wallet"), {
        get() {
          throw new Error("nothing");
        },
      }),
      wallet("Phantom"),
    ] as Wallet[];
    expect(payableWallets(wallets, PAYMENT_CHAIN).map((each) => each.label)).toEqual(["Phantom"]);
    // Its accounts are not read while listed (connect answers them): a getter that throws harms nothing.
    const accountsThrow = Object.defineProperty({ ...wallet("Accounts throw") }, "accounts", {
      get() {
        throw new Error("no accounts");
      },
    });
    expect(payableWallets([accountsThrow], PAYMENT_CHAIN).map((each) => each.label)).toEqual(["Accounts throw"]);
  });

  it("writes a name on one line, without invisible characters, cut with an ellipsis", () => {
    expect(WALLET_NAME_MAX_LENGTH).toBe(32);
    expect(walletName("  Phantom\n\tWallet  ")).toBe("Phantom Wallet");
    expect(walletName("\u202eTnahp\u202c\u0000om")).toBe("Tnahpom");
    expect(walletName("Back \u200e pack")).toBe("Back pack");
    const long = walletName("The Wallet With A Name Far Longer Than Any Button");
    expect(long).toBe("The Wallet With A Name Far Long…");
    expect([...long]).toHaveLength(32);
    // Cut by characters, not UTF-16 units: an emoji is never split in half.
    expect(walletName("👛".repeat(40))).toBe(`${"👛".repeat(31)}…`);
    expect(walletName("x".repeat(32))).toBe("x".repeat(32));
    // No name to show (or none at all): not listed.
    expect(payableWallets([wallet(" \u200e\n ")], PAYMENT_CHAIN)).toEqual([]);
    expect(payableWallets([wallet(42 as unknown as string)], PAYMENT_CHAIN)).toEqual([]);
    // Two names alike up to the cut are told apart after it.
    const twins = payableWallets([wallet(`${"A".repeat(40)}1`), wallet(`${"A".repeat(40)}2`)], PAYMENT_CHAIN);
    expect(twins.map((each) => each.label)).toEqual([`${"A".repeat(31)}…`, `${"A".repeat(31)}… (2)`]);
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

  it("a transaction approved after its blockhash expired says so, and that asking again gets a fresh one", () => {
    for (const reason of [
      "Blockhash\nnot found",
      "TransactionExpiredBlockheightExceededError: block height exceeded",
    ]) {
      expect(walletFailureText("Solflare", new Error(reason))).toBe(
        "The payment waited too long in Solflare and expired on the network. Nothing was sent: pay with Solflare again for a fresh one.",
      );
    }
  });

  it("any other failure names the wallet and its reason, briefly, on one line", () => {
    expect(walletFailureText("Solflare", new Error("Transaction simulation\nfailed"))).toBe(
      "Solflare could not send the payment (Transaction simulation failed). Try again, or pay with the QR code or link.",
    );
    expect(walletFailureText("Solflare", "a string, not an error")).toBe(
      "Solflare could not send the payment. Try again, or pay with the QR code or link.",
    );
    const long = walletFailureText("Solflare", new Error("x".repeat(1_000)));
    expect(long).toContain(`(${"x".repeat(120)})`);
    expect(long).not.toContain("x".repeat(121));
  });

  it("a wallet's error that throws when read still gives a line", () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("no");
        },
        getPrototypeOf() {
          throw new Error("no");
        },
      },
    );
    expect(isDeclined(hostile)).toBe(false);
    expect(walletFailureText("Solflare", hostile)).toBe(
      "Solflare could not send the payment. Try again, or pay with the QR code or link.",
    );
  });

  it("a wallet that did not answer in time is told so in plain words", () => {
    expect(walletFailureText("Slowpoke", new WalletDidNotAnswer())).toBe(
      "Slowpoke did not answer. Try again, or pay with the QR code or link.",
    );
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

describe("a wallet's answer, bounded", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is the answer when it comes in time, and leaves no timer behind", async () => {
    await expect(answerWithin(async () => "connected", WALLET_ANSWER_MS)).resolves.toBe("connected");
    await expect(answerWithin(() => Promise.reject(new Error("refused")), WALLET_ANSWER_MS)).rejects.toThrow("refused");
    const throwsAtOnce = () => {
      throw new Error("at once");
    };
    await expect(answerWithin(throwsAtOnce, WALLET_ANSWER_MS)).rejects.toThrow("at once");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("gives up with WalletDidNotAnswer at the bound, not before; a late answer changes nothing", async () => {
    let answer: (value: string) => void = () => {};
    const call = vi.fn(() => new Promise<string>((resolve) => (answer = resolve)));
    const outcome = answerWithin(call, WALLET_ANSWER_MS).then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    // Called at once, within the click that asked for it.
    expect(call).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(WALLET_ANSWER_MS - 1);
    let settled = false;
    void outcome.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const result = await outcome;
    expect((result as { error: unknown }).error).toBeInstanceOf(WalletDidNotAnswer);
    answer("too late");
    expect(await outcome).toBe(result);
  });
});

// The structure PaymentDialog.astro renders for the wallets (its classes left out).
const WALLETS_MARKUP = `
  <div data-payment-wallets hidden>
    <ul data-payment-wallet-list></ul>
    <template data-payment-wallet-item>
      <li><button type="button"><img alt="" hidden /><span></span></button></li>
    </template>
  </div>`;

function deferred<T>() {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** Lets the payment's chain of promises (connect, request, fetch, sign) run as far as it can now. */
async function flush() {
  for (let step = 0; step < 50; step++) await Promise.resolve();
}

const PAYER = account("payer", ["solana:signAndSendTransaction"]);
type SignAndSendAnswer = { signature: Uint8Array }[];

/** A wallet that pays from PAYER; `connect` and `signAndSend` answer as given (at once by default). */
function payingWallet(
  name: string,
  answers: {
    connect?: () => Promise<{ accounts: WalletAccount[] }>;
    signAndSend?: () => Promise<SignAndSendAnswer>;
  } = {},
) {
  const connect = vi.fn(answers.connect ?? (async () => ({ accounts: [PAYER] })));
  const signAndSendTransaction = vi.fn(answers.signAndSend ?? (async () => [{ signature: new Uint8Array(64) }]));
  const features = {
    "standard:connect": { version: "1.0.0", connect },
    "solana:signAndSendTransaction": { version: "1.0.0", supportedTransactionVersions: [0], signAndSendTransaction },
  };
  return { wallet: wallet(name, { features }), connect, signAndSendTransaction };
}

describe("the dialog's wallet buttons (walletPay.ts)", () => {
  const unregister: (() => void)[] = [];
  const register = (...wallets: Wallet[]) => unregister.push(getWallets().register(...wallets));
  let lines: string[];
  let paymentFor: ReturnType<typeof vi.fn>;
  let transactionFetch: ReturnType<typeof vi.fn>;
  const list = () => document.querySelector("[data-payment-wallet-list]") as HTMLUListElement;
  const buttons = () => [...list().querySelectorAll("button")];
  const button = (text: string) => buttons().find((each) => each.textContent === text) as HTMLButtonElement;
  const busy = () => buttons().map((each) => each.getAttribute("aria-disabled"));

  beforeEach(() => {
    vi.useFakeTimers();
    document.body.innerHTML = WALLETS_MARKUP;
    lines = [];
    paymentFor = vi.fn(async () => ({
      reference: "reference",
      transactionEndpoint: "https://service.test/payments/reference/transaction",
    }));
    transactionFetch = vi.fn(async () => ({ ok: true, json: async () => ({ transaction: "AQID" }) }));
    vi.stubGlobal("fetch", transactionFetch);
  });
  afterEach(() => {
    for (const each of unregister.splice(0)) each();
    vi.unstubAllGlobals();
    vi.useRealTimers();
    document.body.innerHTML = "";
  });

  function show() {
    const part = <T extends HTMLElement>(selector: string) => document.querySelector(selector) as T;
    showWallets({
      container: part("[data-payment-wallets]"),
      list: list(),
      item: part<HTMLTemplateElement>("[data-payment-wallet-item]"),
      accepts: () => true,
      paymentFor: paymentFor as () => Promise<{ reference: string; transactionEndpoint: string }>,
      say: (text) => lines.push(text),
    });
  }

  it("lists the good wallets beside ones that throw while listed, and a later one still joins", () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const throwsOnFeatures = Object.defineProperty({ ...wallet("Throws") }, "features", {
      get() {
        throw new Error("no features");
      },
    });
    register(throwsOnFeatures, payingWallet("Phantom").wallet);
    show();
    expect(buttons().map((each) => each.textContent)).toEqual(["Pay with Phantom"]);
    expect((document.querySelector("[data-payment-wallets]") as HTMLElement).hidden).toBe(false);
    // Registered later: one more that throws, then a good one.
    register(
      Object.defineProperty({ ...wallet("Throws later") }, "name", {
        get() {
          throw new Error("no name");
        },
      }),
    );
    register(payingWallet("Solflare").wallet);
    expect(buttons().map((each) => each.textContent)).toEqual(["Pay with Phantom", "Pay with Solflare"]);
    // Nothing threw into Wallet Standard's register (which would log it and drop the update).
    expect(errors).not.toHaveBeenCalled();
    errors.mockRestore();
  });

  it("lists two wallets of one name apart, and each button pays with its own wallet", async () => {
    const first = payingWallet("Phantom");
    const second = payingWallet("Phantom");
    register(first.wallet, second.wallet, payingWallet("A Wallet Whose Name Goes On And On And On").wallet);
    show();
    expect(buttons().map((each) => each.textContent)).toEqual([
      "Pay with Phantom",
      "Pay with Phantom (2)",
      "Pay with A Wallet Whose Name Goes On And…",
    ]);
    button("Pay with Phantom (2)").click();
    await flush();
    expect(second.signAndSendTransaction).toHaveBeenCalledTimes(1);
    expect(first.connect).not.toHaveBeenCalled();
    expect(lines.at(-1)).toBe("Sent from Phantom (2). Waiting for the network to confirm it…");
  });

  it("a connect that never answers gives the buttons back at the bound; its late answer pays nothing", async () => {
    const connecting = deferred<{ accounts: WalletAccount[] }>();
    const slow = payingWallet("Slowpoke", { connect: () => connecting.promise });
    register(slow.wallet, payingWallet("Phantom").wallet);
    show();
    button("Pay with Slowpoke").click();
    await flush();
    expect(lines.at(-1)).toBe("Connecting to Slowpoke…");
    expect(busy()).toEqual(["true", "true"]);
    await vi.advanceTimersByTimeAsync(WALLET_ANSWER_MS - 1);
    expect(busy()).toEqual(["true", "true"]);
    await vi.advanceTimersByTimeAsync(1);
    expect(lines.at(-1)).toBe("Slowpoke did not answer. Try again, or pay with the QR code or link.");
    expect(busy()).toEqual([null, null]);

    connecting.resolve({ accounts: [PAYER] });
    await flush();
    expect(paymentFor).not.toHaveBeenCalled();
    expect(slow.signAndSendTransaction).not.toHaveBeenCalled();
    expect(lines.at(-1)).toBe("Slowpoke did not answer. Try again, or pay with the QR code or link.");
    expect(busy()).toEqual([null, null]);
  });

  it("a sign-and-send that never answers gives the buttons back; its late answer neither says Sent nor frees the next payment", async () => {
    const slowSending = deferred<SignAndSendAnswer>();
    const slow = payingWallet("Slowpoke", { signAndSend: () => slowSending.promise });
    const phantomSending = deferred<SignAndSendAnswer>();
    const phantom = payingWallet("Phantom", { signAndSend: () => phantomSending.promise });
    register(slow.wallet, phantom.wallet);
    show();
    button("Pay with Slowpoke").click();
    await flush();
    expect(lines.at(-1)).toBe("Approve the payment in Slowpoke…");
    await vi.advanceTimersByTimeAsync(WALLET_ANSWER_MS);
    expect(lines.at(-1)).toBe("Slowpoke did not answer. Try again, or pay with the QR code or link.");
    expect(busy()).toEqual([null, null]);

    // The buyer tries another wallet; meanwhile the first one's answer arrives.
    button("Pay with Phantom").click();
    await flush();
    expect(lines.at(-1)).toBe("Approve the payment in Phantom…");
    slowSending.resolve([{ signature: new Uint8Array(64) }]);
    await flush();
    expect(lines.at(-1)).toBe("Approve the payment in Phantom…");
    expect(lines).not.toContain("Sent from Slowpoke. Waiting for the network to confirm it…");
    expect(busy()).toEqual(["true", "true"]);
    // A click meanwhile starts nothing: one payment at a time.
    button("Pay with Slowpoke").click();
    await flush();
    expect(slow.connect).toHaveBeenCalledTimes(1);

    phantomSending.resolve([{ signature: new Uint8Array(64) }]);
    await flush();
    expect(lines.at(-1)).toBe("Sent from Phantom. Waiting for the network to confirm it…");
    expect(busy()).toEqual([null, null]);
    expect(slow.signAndSendTransaction).toHaveBeenCalledTimes(1);
    expect(phantom.signAndSendTransaction).toHaveBeenCalledTimes(1);
    expect(transactionFetch).toHaveBeenCalledTimes(2);
  });
});
