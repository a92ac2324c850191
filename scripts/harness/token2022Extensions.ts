/**
 * Token-2022's extensions for the local chain (localChain.ts): the instructions that initialise
 * them on a new mint, and require memos on a token account, encoded by hand after spl-token-2022's
 * instruction layouts (@solana-program/token-2022 wants @solana/kit 7, this repository has 8). The
 * real Token-2022 program in LiteSVM executes them, so a wrong encoding fails there, and the
 * accounts it writes are the program's own: the service's reading of them (payments/
 * tokenExtensions.ts) is checked against the program, not against this file.
 */
import {
  AccountRole,
  type AccountSignerMeta,
  type Address,
  getAddressEncoder,
  type Instruction,
  type TransactionSigner,
} from "@solana/kit";
import { TOKEN_2022_PROGRAM_ADDRESS } from "../../service/payments/chain.ts";

/** A mint extension createMint can initialise. */
export type MintExtension =
  | { kind: "TransferFeeConfig"; basisPoints: number; maximumFee: bigint; authority: Address | null }
  | { kind: "TransferHook"; program: Address }
  | { kind: "DefaultAccountState"; state: "initialized" | "frozen" }
  | { kind: "NonTransferable" }
  | { kind: "PermanentDelegate"; delegate: Address }
  | { kind: "ConfidentialTransferMint" };

const BASE_ACCOUNT_SIZE = 165;
/** The extension's value length in its TLV entry (spl-token-2022's Pod layouts). */
const VALUE_SIZE: Record<MintExtension["kind"], number> = {
  TransferFeeConfig: 108,
  TransferHook: 64,
  DefaultAccountState: 1,
  NonTransferable: 0,
  PermanentDelegate: 32,
  ConfidentialTransferMint: 65,
};
const SYSTEM_PROGRAM_ADDRESS = "11111111111111111111111111111111" as Address;
/** TokenInstruction's numbers, and ExtensionType's for MemoTransfer. */
const TRANSFER_FEE_EXTENSION = 26;
const CONFIDENTIAL_TRANSFER_EXTENSION = 27;
const DEFAULT_ACCOUNT_STATE_EXTENSION = 28;
const REALLOCATE = 29;
const MEMO_TRANSFER_EXTENSION = 30;
const INITIALIZE_NON_TRANSFERABLE_MINT = 32;
const INITIALIZE_PERMANENT_DELEGATE = 35;
const TRANSFER_HOOK_EXTENSION = 36;
const MEMO_TRANSFER_TYPE = 8;
const ACCOUNT_STATE = { initialized: 1, frozen: 2 } as const;

const signing = (
  signer: TransactionSigner,
  role: AccountRole.WRITABLE_SIGNER | AccountRole.READONLY_SIGNER,
): AccountSignerMeta => ({
  address: signer.address,
  role,
  signer,
});

const addressBytes = (address: Address) => new Uint8Array(getAddressEncoder().encode(address));

function bytes(...parts: (number | Uint8Array)[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((part) => (typeof part === "number" ? [part] : [...part])));
}

function u16(value: number): Uint8Array {
  return Uint8Array.of(value & 0xff, value >> 8);
}

function u64(value: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, value, true);
  return out;
}

/** The space a mint with `extensions` needs: the base account, its type, and a TLV entry each. */
export function mintSpace(extensions: readonly MintExtension[]): number {
  return BASE_ACCOUNT_SIZE + 1 + extensions.reduce((sum, extension) => sum + 4 + VALUE_SIZE[extension.kind], 0);
}

const onMint = (mint: Address, data: Uint8Array): Instruction => ({
  programAddress: TOKEN_2022_PROGRAM_ADDRESS,
  accounts: [{ address: mint, role: AccountRole.WRITABLE }],
  data,
});

/** The instruction that initialises `extension` on `mint`, before InitializeMint2. */
export function initializeExtension(mint: Address, extension: MintExtension): Instruction {
  switch (extension.kind) {
    case "TransferFeeConfig": {
      // COption<Pubkey> in an instruction: 0, or 1 and the key. Withdraw authority: none.
      const authority = extension.authority ? bytes(1, addressBytes(extension.authority)) : bytes(0);
      return onMint(
        mint,
        bytes(TRANSFER_FEE_EXTENSION, 0, authority, 0, u16(extension.basisPoints), u64(extension.maximumFee)),
      );
    }
    case "TransferHook":
      // OptionalNonZeroPubkey authority (none: zeros), then the hook's program.
      return onMint(mint, bytes(TRANSFER_HOOK_EXTENSION, 0, new Uint8Array(32), addressBytes(extension.program)));
    case "DefaultAccountState":
      return onMint(mint, bytes(DEFAULT_ACCOUNT_STATE_EXTENSION, 0, ACCOUNT_STATE[extension.state]));
    case "NonTransferable":
      return onMint(mint, bytes(INITIALIZE_NON_TRANSFERABLE_MINT));
    case "PermanentDelegate":
      return onMint(mint, bytes(INITIALIZE_PERMANENT_DELEGATE, addressBytes(extension.delegate)));
    case "ConfidentialTransferMint":
      // No authority, accounts not approved automatically, no auditor.
      return onMint(mint, bytes(CONFIDENTIAL_TRANSFER_EXTENSION, 0, new Uint8Array(32), 0, new Uint8Array(32)));
  }
}

/** Reallocate `account` for MemoTransfer, then require memos on incoming transfers; `owner` signs. */
export function requireMemoInstructions(
  account: Address,
  owner: TransactionSigner,
  payer: TransactionSigner,
): Instruction[] {
  return [
    {
      programAddress: TOKEN_2022_PROGRAM_ADDRESS,
      accounts: [
        { address: account, role: AccountRole.WRITABLE },
        signing(payer, AccountRole.WRITABLE_SIGNER),
        { address: SYSTEM_PROGRAM_ADDRESS, role: AccountRole.READONLY },
        signing(owner, AccountRole.READONLY_SIGNER),
      ],
      data: bytes(REALLOCATE, u16(MEMO_TRANSFER_TYPE)),
    },
    {
      programAddress: TOKEN_2022_PROGRAM_ADDRESS,
      accounts: [{ address: account, role: AccountRole.WRITABLE }, signing(owner, AccountRole.READONLY_SIGNER)],
      data: bytes(MEMO_TRANSFER_EXTENSION, 0),
    },
  ];
}
