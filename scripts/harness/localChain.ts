/**
 * A local Solana chain for the payment tests (docs/design.md#8): LiteSVM, an in-process Solana
 * runtime with the real Token and Token-2022 programs, holds the mints, payers and recipients, and
 * every transaction is a real signed one built with @solana/kit and @solana-program/token. LiteSVM
 * keeps no ledger an RPC could serve, so this keeps one: each executed transaction with its slot,
 * block time, compiled message and the meta a validator records (err, fee, pre and post lamport
 * and token balances, logs). chainRpcServer.ts answers JSON-RPC from it.
 *
 *   const chain = await LocalChain.create({ now: () => clock });
 *   const mint = await chain.createMint({ decimals: 6, program: "token" });
 *   const feeMint = await chain.createMint({ decimals: 6, program: "token-2022", extensions: [{ kind: "NonTransferable" }] });
 *   const payer = await chain.wallet(); await chain.mintTo(mint, payer.address, 1_000_000_000n);
 *   const signature = await chain.pay({ payer, recipient, mint, amount: 25_000_000n, references: [reference] });
 *   await chain.submit(signedElsewhere);  // a wallet's transaction, on chain.svm.latestBlockhash()
 */
import {
  AccountRole,
  type Address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  type GetTransactionApiResponseJson,
  generateKeyPairSigner,
  getBase58Decoder,
  getCompiledTransactionMessageDecoder,
  type Instruction,
  type KeyPairSigner,
  lamports,
  pipe,
  type Signature,
  setTransactionMessageFeePayerSigner,
  signTransactionMessageWithSigners,
  type TokenBalance,
  type Transaction,
  type TransactionError,
} from "@solana/kit";
import { getCreateAccountInstruction } from "@solana-program/system";
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintToCheckedInstruction,
  getThawAccountInstruction,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import { FailedTransactionMetadata, LiteSVM } from "litesvm";
import { TOKEN_2022_PROGRAM_ADDRESS } from "../../service/payments/chain.ts";
import { initializeExtension, type MintExtension, mintSpace, requireMemoInstructions } from "./token2022Extensions.ts";

export type TokenProgramName = "token" | "token-2022";
const TOKEN_PROGRAMS: Record<TokenProgramName, Address> = {
  token: TOKEN_PROGRAM_ADDRESS,
  "token-2022": TOKEN_2022_PROGRAM_ADDRESS,
};

/** getTransaction's `json` answer for a version 0 transaction: what the chain server sends. */
export type ExecutedTransaction = GetTransactionApiResponseJson<0> & { signature: Signature };

const MINT_SIZE = 82;
const TOKEN_ACCOUNT_SIZE = 165;
const ACCOUNT_TYPE_ACCOUNT = 2;
const LAMPORTS_PER_SIGNATURE = 5_000n;
const FIRST_SLOT = 1_000n;
const base58 = getBase58Decoder();

function u64(bytes: Uint8Array, offset: number): bigint {
  return new DataView(bytes.buffer, bytes.byteOffset + offset, 8).getBigUint64(0, true);
}

function formatUi(amount: bigint, decimals: number): string {
  const digits = amount.toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole;
}

type LiteSvmError = ReturnType<FailedTransactionMetadata["err"]>;

/** An instruction's failure (LiteSVM's TransactionErrorInstructionError, not exported by its entry point). */
function instructionFailure(error: LiteSvmError): { index: number; code: number | null } | null {
  const candidate = error as { index?: unknown; err?: unknown };
  if (typeof candidate !== "object" || typeof candidate.index !== "number" || typeof candidate.err !== "function") {
    return null;
  }
  const inner = (candidate.err as () => unknown).call(error) as { code?: unknown };
  return { index: candidate.index, code: typeof inner?.code === "number" ? inner.code : null };
}

/** LiteSVM's error as the RPC spells it (the token programs fail with Custom codes). */
function rpcError(failure: { index: number; code: number | null }): TransactionError {
  return { InstructionError: [failure.index, failure.code === null ? "GenericError" : { Custom: failure.code }] };
}

export class LocalChain {
  readonly svm: LiteSVM;
  /** Every transaction that made it into a block, oldest first. */
  readonly executed: ExecutedTransaction[] = [];
  private readonly now: () => number;
  private slot = FIRST_SLOT;
  private readonly funder: KeyPairSigner;

  private constructor(svm: LiteSVM, funder: KeyPairSigner, now: () => number) {
    this.svm = svm;
    this.funder = funder;
    this.now = now;
  }

  /** `now` gives the block time of each new transaction (ms; default the wall clock). */
  static async create(options: { now?: () => number } = {}): Promise<LocalChain> {
    const svm = new LiteSVM();
    const funder = await generateKeyPairSigner();
    svm.airdrop(funder.address, lamports(1_000_000_000_000n));
    return new LocalChain(svm, funder, options.now ?? Date.now);
  }

  /** A new wallet with SOL for fees and rent. */
  async wallet(sol = 10n): Promise<KeyPairSigner> {
    const signer = await generateKeyPairSigner();
    this.svm.airdrop(signer.address, lamports(sol * 1_000_000_000n));
    return signer;
  }

  /**
   * `extensions` (Token-2022 only) are initialised before the mint, as spl-token does; the funder is
   * its mint authority, and its freeze authority too when new accounts start frozen.
   */
  async createMint({
    decimals,
    program,
    extensions = [],
  }: {
    decimals: number;
    program: TokenProgramName;
    extensions?: readonly MintExtension[];
  }): Promise<Address> {
    if (extensions.length > 0 && program !== "token-2022") throw new Error("only Token-2022 mints have extensions");
    const mint = await generateKeyPairSigner();
    const programAddress = TOKEN_PROGRAMS[program];
    const space = extensions.length > 0 ? mintSpace(extensions) : MINT_SIZE;
    const freezes = extensions.some((extension) => extension.kind === "DefaultAccountState");
    await this.sendOrThrow(this.funder, [
      getCreateAccountInstruction({
        payer: this.funder,
        newAccount: mint,
        lamports: this.svm.minimumBalanceForRentExemption(BigInt(space)),
        space,
        programAddress,
      }),
      ...extensions.map((extension) => initializeExtension(mint.address, extension)),
      getInitializeMint2Instruction(
        {
          mint: mint.address,
          decimals,
          mintAuthority: this.funder.address,
          freezeAuthority: freezes ? this.funder.address : null,
        },
        { programAddress },
      ),
    ]);
    return mint.address;
  }

  /** Creates `owner`'s associated token account if missing, and thaws it (the funder is the freeze authority). */
  async thaw(owner: Address, mint: Address): Promise<Address> {
    const tokenProgram = this.programOf(mint);
    const ata = await this.tokenAccount(owner, mint);
    await this.sendOrThrow(this.funder, [
      getCreateAssociatedTokenIdempotentInstruction({ payer: this.funder, ata, owner, mint, tokenProgram }),
      getThawAccountInstruction({ account: ata, mint, owner: this.funder }, { programAddress: tokenProgram }),
    ]);
    return ata;
  }

  /** Creates `owner`'s associated token account for a Token-2022 `mint` if missing, and makes it require memos. */
  async requireMemos(owner: KeyPairSigner, mint: Address): Promise<Address> {
    const tokenProgram = this.programOf(mint);
    const ata = await this.tokenAccount(owner.address, mint);
    await this.sendOrThrow(this.funder, [
      getCreateAssociatedTokenIdempotentInstruction({
        payer: this.funder,
        ata,
        owner: owner.address,
        mint,
        tokenProgram,
      }),
      ...requireMemoInstructions(ata, owner, this.funder),
    ]);
    return ata;
  }

  programOf(mint: Address): Address {
    const account = this.svm.getAccount(mint);
    if (!account.exists) throw new Error(`no mint ${mint}`);
    return account.programAddress;
  }

  decimalsOf(mint: Address): number {
    const account = this.svm.getAccount(mint);
    if (!account.exists) throw new Error(`no mint ${mint}`);
    return account.data[44] as number;
  }

  async tokenAccount(owner: Address, mint: Address): Promise<Address> {
    const [address] = await findAssociatedTokenPda({ owner, mint, tokenProgram: this.programOf(mint) });
    return address;
  }

  /** Mints to the owner's associated token account, creating it first when missing. */
  async mintTo(mint: Address, owner: Address, amount: bigint): Promise<Signature> {
    const tokenProgram = this.programOf(mint);
    const ata = await this.tokenAccount(owner, mint);
    return this.send(this.funder, [
      getCreateAssociatedTokenIdempotentInstruction({ payer: this.funder, ata, owner, mint, tokenProgram }),
      getMintToCheckedInstruction(
        { mint, token: ata, mintAuthority: this.funder, amount, decimals: this.decimalsOf(mint) },
        { programAddress: tokenProgram },
      ),
    ]);
  }

  /** The balance of the owner's associated token account (0 when it does not exist). */
  async balance(owner: Address, mint: Address): Promise<bigint> {
    const account = this.svm.getAccount(await this.tokenAccount(owner, mint));
    return account.exists ? u64(account.data, 64) : 0n;
  }

  /**
   * A Solana Pay transfer as wallets make it: create the recipient's associated token account if
   * missing, then TransferChecked (or the plain Transfer some wallets still send) with each
   * reference added as a read-only, non-signer account key. `decimals` other than the mint's
   * makes TransferChecked fail on chain.
   */
  async pay(options: {
    payer: KeyPairSigner;
    recipient: Address;
    mint: Address;
    amount: bigint;
    references?: readonly Address[];
    decimals?: number;
  }): Promise<Signature> {
    const { payer, recipient, mint, amount } = options;
    const tokenProgram = this.programOf(mint);
    const source = await this.tokenAccount(payer.address, mint);
    const destination = await this.tokenAccount(recipient, mint);
    const transfer = getTransferCheckedInstruction(
      { source, mint, destination, authority: payer, amount, decimals: options.decimals ?? this.decimalsOf(mint) },
      { programAddress: tokenProgram },
    );
    const withReferences: Instruction = {
      ...transfer,
      accounts: [
        ...transfer.accounts,
        ...(options.references ?? []).map((address) => ({ address, role: AccountRole.READONLY })),
      ],
    };
    return this.send(payer, [
      getCreateAssociatedTokenIdempotentInstruction({ payer, ata: destination, owner: recipient, mint, tokenProgram }),
      withReferences,
    ]);
  }

  /**
   * Records `count` more copies of the failed transaction `signature`, each with a signature and a
   * slot of its own, as an RPC would list a flood of failed transactions touching the same
   * accounts: what a stranger pays about 5,000 lamports each for, without executing each again.
   */
  repeatFailed(signature: Signature, count: number): void {
    const failed = this.executed.find((transaction) => transaction.signature === signature);
    if (!failed?.meta?.err) throw new Error(`${signature} is no failed transaction of this chain`);
    for (let copy = 0; copy < count; copy++) {
      this.slot += 1n;
      const copied = base58.decode(crypto.getRandomValues(new Uint8Array(64))) as Signature;
      this.executed.push({ ...failed, signature: copied, slot: this.slot });
    }
  }

  /** send(), for the chain's own setup: an instruction that fails throws, with the program's logs. */
  private async sendOrThrow(feePayer: KeyPairSigner, instructions: readonly Instruction[]): Promise<Signature> {
    const signature = await this.send(feePayer, instructions);
    const meta = this.executed.at(-1)?.meta;
    if (meta?.err) throw new Error(`setup failed: ${JSON.stringify(meta.err)}\n${meta.logMessages?.join("\n")}`);
    return signature;
  }

  /** Signs and executes, then records the transaction with its meta, as a validator's ledger would. */
  async send(feePayer: KeyPairSigner, instructions: readonly Instruction[]): Promise<Signature> {
    // A new block, a new blockhash: two identical transfers are two transactions, as on a cluster.
    this.svm.expireBlockhash();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (tx) => setTransactionMessageFeePayerSigner(feePayer, tx),
      (tx) => this.svm.setTransactionMessageLifetimeUsingLatestBlockhash(tx),
      (tx) => appendTransactionMessageInstructions(instructions, tx),
    );
    return this.submit(await signTransactionMessageWithSigners(message));
  }

  /**
   * Executes a transaction signed elsewhere (a wallet's, as a transaction request's buyer sends
   * it) and records it as send() does. Its blockhash must be the latest: the one getLatestBlockhash
   * answered, with no transaction of this chain in between.
   */
  async submit(transaction: Transaction): Promise<Signature> {
    const compiled = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
    if (compiled.version !== 0) throw new Error("the local chain sends version 0 transactions only");
    const accountKeys = compiled.staticAccounts;
    this.slot += 1n;
    const blockTime = BigInt(Math.floor(this.now() / 1000));
    this.svm.warpToSlot(this.slot);
    const clock = this.svm.getClock();
    clock.unixTimestamp = blockTime;
    this.svm.setClock(clock);

    const preBalances = accountKeys.map((key) => lamports(this.svm.getBalance(key) ?? 0n));
    const preTokenBalances = this.tokenBalances(accountKeys);
    const result = this.svm.sendTransaction(transaction);
    const failed = result instanceof FailedTransactionMetadata;
    const failure = failed ? instructionFailure(result.err()) : null;
    // Only an instruction's failure lands in a block (fee charged); a transaction refused before
    // execution (bad blockhash, no fee) never reaches the ledger.
    if (failed && !failure) throw new Error(`the transaction was refused: ${result.toString()}`);
    const err = failure ? rpcError(failure) : null;
    const meta = failed ? result.meta() : result;
    const signatures = Object.values(transaction.signatures).map((bytes) => base58.decode(bytes as Uint8Array));
    const signature = signatures[0] as Signature;
    const header = {
      numRequiredSignatures: compiled.header.numSignerAccounts,
      numReadonlySignedAccounts: compiled.header.numReadonlySignerAccounts,
      numReadonlyUnsignedAccounts: compiled.header.numReadonlyNonSignerAccounts,
    };
    this.executed.push({
      signature,
      slot: this.slot,
      blockTime: blockTime as ExecutedTransaction["blockTime"],
      version: 0,
      meta: {
        err,
        fee: lamports(LAMPORTS_PER_SIGNATURE * BigInt(signatures.length)),
        preBalances,
        postBalances: accountKeys.map((key) => lamports(this.svm.getBalance(key) ?? 0n)),
        preTokenBalances,
        postTokenBalances: this.tokenBalances(accountKeys),
        logMessages: meta.logs(),
        innerInstructions: [],
        loadedAddresses: { writable: [], readonly: [] },
        rewards: [],
        status: err === null ? { Ok: null } : { Err: err },
        computeUnitsConsumed: meta.computeUnitsConsumed(),
      },
      transaction: {
        signatures: signatures as unknown as ExecutedTransaction["transaction"]["signatures"],
        message: {
          accountKeys,
          header,
          recentBlockhash: compiled.lifetimeToken as ExecutedTransaction["transaction"]["message"]["recentBlockhash"],
          instructions: (compiled.instructions ?? []).map((instruction) => ({
            programIdIndex: instruction.programAddressIndex,
            accounts: instruction.accountIndices ?? [],
            data: base58.decode(
              instruction.data ?? new Uint8Array(),
            ) as ExecutedTransaction["transaction"]["message"]["instructions"][number]["data"],
            stackHeight: 1,
          })),
          addressTableLookups: [],
        },
      },
    });
    return signature;
  }

  /** The token accounts among the keys, as a validator's pre/postTokenBalances list them. */
  private tokenBalances(keys: readonly Address[]): TokenBalance[] {
    const balances: TokenBalance[] = [];
    keys.forEach((key, accountIndex) => {
      const account = this.svm.getAccount(key);
      if (!account.exists) return;
      const { data, programAddress } = account;
      const isTokenProgram = programAddress === TOKEN_PROGRAM_ADDRESS || programAddress === TOKEN_2022_PROGRAM_ADDRESS;
      const isTokenAccount =
        data.length === TOKEN_ACCOUNT_SIZE ||
        (data.length > TOKEN_ACCOUNT_SIZE && data[TOKEN_ACCOUNT_SIZE] === ACCOUNT_TYPE_ACCOUNT);
      if (!isTokenProgram || !isTokenAccount) return;
      const mint = base58.decode(data.subarray(0, 32)) as Address;
      const owner = base58.decode(data.subarray(32, 64)) as Address;
      const amount = u64(data, 64);
      const decimals = this.decimalsOf(mint);
      const ui = formatUi(amount, decimals);
      balances.push({
        accountIndex,
        mint,
        owner,
        programId: programAddress,
        uiTokenAmount: {
          amount: amount.toString() as TokenBalance["uiTokenAmount"]["amount"],
          decimals,
          uiAmount: Number(ui),
          uiAmountString: ui as TokenBalance["uiTokenAmount"]["uiAmountString"],
        },
      });
    });
    return balances;
  }
}
