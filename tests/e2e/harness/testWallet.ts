/**
 * A browser wallet for the e2e suite, registered through Wallet Standard as an extension would
 * register it (both halves of the protocol: it announces itself, and answers the app's ready
 * event). In the page it is only the Wallet Standard object; it signs in this process with a local
 * key and sends to the local chain, as a real wallet signs and sends to the network.
 */

import type { Page } from "@playwright/test";
import { getBase58Encoder, getTransactionDecoder, type KeyPairSigner, signTransaction } from "@solana/kit";
import type { LocalChain } from "../../../scripts/harness/localChain.ts";

export const TEST_WALLET_NAME = "Test Wallet";
/** A square SVG as Wallet Standard asks: an image data: URI. */
const ICON = `data:image/svg+xml;base64,${Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><rect width="24" height="24" rx="6" fill="#7c3aed"/></svg>',
).toString("base64")}`;

export interface TestWallet {
  /** What the page asked the wallet to sign and send: the chain and the account, in order. */
  readonly requests: { chain: string; account: string }[];
  /** The next signature request is declined, as a person pressing "Reject" does. */
  declineNext(): void;
}

/** Installs the wallet in every page of `page`'s context loaded from now on; `buyer` is its one account. */
export async function installTestWallet(page: Page, chain: LocalChain, buyer: KeyPairSigner): Promise<TestWallet> {
  const requests: TestWallet["requests"] = [];
  let decline = false;
  await page.exposeFunction(
    "nothingTestWalletSignAndSend",
    async (base64: string, account: string, chainName: string) => {
      requests.push({ chain: chainName, account });
      if (decline) {
        decline = false;
        return { declined: true };
      }
      const transaction = getTransactionDecoder().decode(Buffer.from(base64, "base64"));
      const signature = await chain.submit(await signTransaction([buyer.keyPair], transaction));
      return { signature: [...getBase58Encoder().encode(signature)] };
    },
  );
  const publicKey = [...getBase58Encoder().encode(buyer.address)];
  await page.addInitScript(
    ({ name, icon, address, publicKey }) => {
      type Answer = { declined?: boolean; signature?: number[] };
      // The binding exposeFunction added: looked up when called, as the page sees it then.
      const send = (...args: string[]) =>
        (
          window as unknown as { nothingTestWalletSignAndSend: (...args: string[]) => Promise<Answer> }
        ).nothingTestWalletSignAndSend(...args);
      const chains = ["solana:mainnet"] as const;
      const account = {
        address,
        publicKey: new Uint8Array(publicKey),
        chains,
        features: ["solana:signAndSendTransaction"] as const,
      };
      const toBase64 = (bytes: Uint8Array) => btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(""));
      let accounts: (typeof account)[] = [];
      const wallet = {
        version: "1.0.0",
        name,
        icon,
        chains,
        get accounts() {
          return accounts;
        },
        features: {
          "standard:connect": {
            version: "1.0.0",
            connect: async () => {
              accounts = [account];
              return { accounts };
            },
          },
          "standard:events": { version: "1.0.0", on: () => () => {} },
          "solana:signAndSendTransaction": {
            version: "1.0.0",
            supportedTransactionVersions: ["legacy", 0],
            signAndSendTransaction: (
              ...inputs: { transaction: Uint8Array; account: { address: string }; chain: string }[]
            ) =>
              Promise.all(
                inputs.map(async (input) => {
                  const answer = await send(toBase64(input.transaction), input.account.address, input.chain);
                  // As Phantom and Solflare decline: EIP-1193's code 4001.
                  if (answer.declined) throw Object.assign(new Error("User rejected the request."), { code: 4001 });
                  return { signature: new Uint8Array(answer.signature ?? []) };
                }),
              ),
          },
        },
      };
      const register = ({ register }: { register: (wallet: unknown) => unknown }) => register(wallet);
      window.dispatchEvent(new CustomEvent("wallet-standard:register-wallet", { detail: register }));
      window.addEventListener("wallet-standard:app-ready", (event) =>
        register((event as CustomEvent<{ register: (wallet: unknown) => unknown }>).detail),
      );
    },
    { name: TEST_WALLET_NAME, icon: ICON, address: buyer.address, publicKey },
  );
  return {
    requests,
    declineNext: () => {
      decline = true;
    },
  };
}

/** A wallet whose connect never answers, as one left waiting on a locked or crashed extension; its name longer than a button. */
export const HANGING_WALLET_NAME = "A Wallet That Never Answers, However Long You Wait";

/**
 * Installs wallets that misbehave, before `installTestWallet`'s, in every page of `page`'s context
 * loaded from now on: five that throw while listed (a getter of `features`, `name`, `icon` or
 * `chains`, or a `features` that throws on every read), and HANGING_WALLET_NAME.
 */
export async function installMisbehavingWallets(page: Page): Promise<void> {
  await page.addInitScript(
    ({ icon, hangingName }) => {
      const chains = ["solana:mainnet"] as const;
      const wallet = (name: string, connect: () => Promise<unknown>) => ({
        version: "1.0.0",
        name,
        icon,
        chains,
        accounts: [],
        features: {
          "standard:connect": { version: "1.0.0", connect },
          "solana:signAndSendTransaction": {
            version: "1.0.0",
            supportedTransactionVersions: ["legacy", 0],
            signAndSendTransaction: () => new Promise(() => {}),
          },
        },
      });
      const never = () => new Promise(() => {});
      const throwsOn = (property: string) =>
        Object.defineProperty(wallet(`Throws on ${property}`, never), property, {
          get() {
            throw new Error(`no ${property}`);
          },
        });
      const hostileFeatures = {
        ...wallet("Hostile features", never),
        features: new Proxy(
          {},
          {
            get() {
              throw new Error("no features");
            },
          },
        ),
      };
      const wallets = [
        ...["features", "name", "icon", "chains"].map(throwsOn),
        hostileFeatures,
        wallet(hangingName, never),
      ];
      const register = ({ register }: { register: (...wallets: unknown[]) => unknown }) => register(...wallets);
      window.dispatchEvent(new CustomEvent("wallet-standard:register-wallet", { detail: register }));
      window.addEventListener("wallet-standard:app-ready", (event) =>
        register((event as CustomEvent<{ register: (...wallets: unknown[]) => unknown }>).detail),
      );
    },
    { icon: ICON, hangingName: HANGING_WALLET_NAME },
  );
}
