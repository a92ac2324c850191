/**
 * A mint the store cannot sell for stops the start (docs/decisions/2026-11-28-refuse-mints-the-
 * store-cannot-sell-for.md): real service processes over a local chain whose Token-2022 mints and
 * accounts the real Token-2022 program made, each refused with exit code 2, one fatal line naming
 * the extension and what to do, and the port never opened. Mints whose extensions change nothing a
 * purchase relies on are taken, in process.
 */
import { type Address, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { getCreateAssociatedTokenIdempotentInstruction } from "@solana-program/token";
import { describe, expect, it } from "vitest";
import { startChainRpcServer } from "../../../scripts/harness/chainRpcServer.ts";
import { withTimeout } from "../../../scripts/harness/childProcess.ts";
import { LocalChain } from "../../../scripts/harness/localChain.ts";
import type { MintExtension } from "../../../scripts/harness/token2022Extensions.ts";
import { openPaymentService, waitForPaymentsAvailable } from "../harness/paymentChain.ts";
import { jsonLines, serviceProcessEnv, spawnService } from "../harness/serviceProcess.ts";
import { cleanUpAfter, databaseForThisTest, locationForThisTest } from "../harness/stores.ts";

const DECIMALS = 6;
const FATAL = 60;

/** A chain of its own for the current test, served over JSON-RPC. */
async function testChain() {
  const chain = await LocalChain.create();
  const rpc = await startChainRpcServer(chain);
  cleanUpAfter(() => rpc.stop());
  const mint = (extensions: readonly MintExtension[]) =>
    chain.createMint({ decimals: DECIMALS, program: "token-2022", extensions });
  return { chain, rpc, mint };
}

/** Runs the service with payments on `mint` for `recipient` until it exits: its code, fatal lines and output. */
async function start(rpcUrl: string, mint: Address, recipient: Address) {
  const database = await databaseForThisTest();
  const service = spawnService(
    serviceProcessEnv({
      dataDir: "/nonexistent",
      databaseUrl: database.url,
      env: { SOLANA_RPC_URL: rpcUrl, PUBLIC_PAYMENT_ADDRESS: recipient, PUBLIC_CONTRACT_ADDRESS: mint },
    }),
  );
  const code = await withTimeout(service.exited, 60_000, "the service exiting");
  const fatal = jsonLines(service.stdout()).filter((line) => line.level === FATAL);
  return { code, fatal, output: service.output() };
}

async function expectRefused(
  started: Awaited<ReturnType<typeof start>>,
  extension: string,
  msg: string,
): Promise<void> {
  expect(started.output).not.toContain(" is open at ");
  expect(started.fatal.map((line) => line.msg)).toEqual([msg]);
  expect(started.fatal[0]).toMatchObject({ extension });
  expect(started.fatal[0]).not.toHaveProperty("err");
  expect(started.code).toBe(2);
}

const newAddress = async () => (await generateKeyPairSigner()).address;

describe("a mint the store cannot sell for stops the start with exit code 2, naming the extension", () => {
  it("a transfer fee (TransferFeeConfig): every purchase would arrive short", async () => {
    const { rpc, mint } = await testChain();
    const feeMint = await mint([
      { kind: "TransferFeeConfig", basisPoints: 100, maximumFee: 10n ** 12n, authority: await newAddress() },
    ]);
    const started = await start(rpc.url, feeMint, await newAddress());
    await expectRefused(
      started,
      "TransferFeeConfig",
      `PUBLIC_CONTRACT_ADDRESS ${feeMint} has a transfer fee (TransferFeeConfig): every purchase would arrive short; choose a mint without one`,
    );
    expect(started.fatal[0]).toMatchObject({ basisPoints: 100, maximumFee: "1000000000000" });
  });

  it("a transfer hook (TransferHook): every purchase would fail", async () => {
    const { rpc, mint } = await testChain();
    const program = await newAddress();
    const hookMint = await mint([{ kind: "TransferHook", program }]);
    await expectRefused(
      await start(rpc.url, hookMint, await newAddress()),
      "TransferHook",
      `PUBLIC_CONTRACT_ADDRESS ${hookMint} has a transfer hook (TransferHook, program ${program}): every purchase would fail, since the store's transfers do not carry the hook's accounts; choose a mint without one`,
    );
  });

  it("non-transferable (NonTransferable)", async () => {
    const { rpc, mint } = await testChain();
    const soulbound = await mint([{ kind: "NonTransferable" }]);
    await expectRefused(
      await start(rpc.url, soulbound, await newAddress()),
      "NonTransferable",
      `PUBLIC_CONTRACT_ADDRESS ${soulbound} is non-transferable (NonTransferable): no purchase could be paid; choose a transferable mint`,
    );
  });

  it("a permanent delegate (PermanentDelegate): every payment could be taken back", async () => {
    const { rpc, mint } = await testChain();
    const delegate = await newAddress();
    const clawback = await mint([{ kind: "PermanentDelegate", delegate }]);
    await expectRefused(
      await start(rpc.url, clawback, await newAddress()),
      "PermanentDelegate",
      `PUBLIC_CONTRACT_ADDRESS ${clawback} has a permanent delegate (PermanentDelegate, ${delegate}): it could take any payment back out of the store's token account; choose a mint without one`,
    );
  });

  it("new accounts frozen (DefaultAccountState) while the store's does not exist, or exists frozen", async () => {
    const { chain, rpc, mint } = await testChain();
    const frozenByDefault = await mint([{ kind: "DefaultAccountState", state: "frozen" }]);
    const recipient = await newAddress();
    const tokenAccount = await chain.tokenAccount(recipient, frozenByDefault);
    await expectRefused(
      await start(rpc.url, frozenByDefault, recipient),
      "DefaultAccountState",
      `PUBLIC_CONTRACT_ADDRESS ${frozenByDefault} freezes every new token account (DefaultAccountState frozen), and PUBLIC_PAYMENT_ADDRESS ${recipient}'s token account ${tokenAccount} does not exist yet: it would be created frozen and every purchase would fail; create it and have the mint's freeze authority thaw it, or choose a mint without one`,
    );

    // Created, as a first buyer's wallet would: frozen.
    const payer = await chain.wallet();
    await chain.send(payer, [
      getCreateAssociatedTokenIdempotentInstruction({
        payer,
        ata: tokenAccount,
        owner: recipient,
        mint: frozenByDefault,
        tokenProgram: chain.programOf(frozenByDefault),
      }),
    ]);
    await expectRefused(
      await start(rpc.url, frozenByDefault, recipient),
      "frozen",
      `PUBLIC_PAYMENT_ADDRESS ${recipient}'s token account ${tokenAccount} is frozen: every purchase would fail; have the mint's freeze authority thaw it, or choose another address`,
    );
  });

  it("the store's token account requires memos (MemoTransfer): the store's transfers carry none before the transfer", async () => {
    const { chain, rpc, mint } = await testChain();
    const plain = await mint([]);
    const recipient: KeyPairSigner = await generateKeyPairSigner();
    const tokenAccount = await chain.requireMemos(recipient, plain);
    await expectRefused(
      await start(rpc.url, plain, recipient.address),
      "MemoTransfer",
      `PUBLIC_PAYMENT_ADDRESS ${recipient.address}'s token account ${tokenAccount} requires a memo on incoming transfers (MemoTransfer): the store's transfers carry none before the transfer, so every purchase would fail; turn it off (spl-token disable-required-transfer-memos ${tokenAccount}) or choose another address`,
    );
  });
});

describe("a Token-2022 mint whose extensions a purchase does not feel is taken", () => {
  const cases: [string, MintExtension[], boolean][] = [
    [
      "a transfer fee of nothing that no authority can raise",
      [{ kind: "TransferFeeConfig", basisPoints: 0, maximumFee: 0n, authority: null }],
      false,
    ],
    [
      "confidential transfers allowed (the store's account is not configured for them)",
      [{ kind: "ConfidentialTransferMint" }],
      false,
    ],
    [
      "new accounts frozen, the store's thawed by the freeze authority",
      [{ kind: "DefaultAccountState", state: "frozen" }],
      true,
    ],
  ];
  it.each(cases)("%s", async (_, extensions, thaw) => {
    const shop = await openPaymentService(await locationForThisTest("postgres"), {
      decimals: DECIMALS,
      mint: { program: "token-2022", extensions },
      prepare: async (local) => {
        if (thaw) await local.chain.thaw(local.recipient, local.mint);
      },
    });
    await waitForPaymentsAvailable(shop.url);
    expect(shop.logs.filter((line) => line.level === 50)).toEqual([]);
  });
});
