/**
 * Whether the store can sell for a mint (docs/decisions/2026-11-28-refuse-mints-the-store-cannot-
 * sell-for.md): what Token-2022's extensions on the mint and on the store's token account would do
 * to a purchase, read from the accounts the start reads anyway. A purchase is credited by what
 * arrives in the store's token account (verify.ts), through a plain TransferChecked that wallets
 * or the store's transaction request build; an extension that makes it arrive short, fail, or
 * leave again is a refusal. Others (metadata, interest-bearing or scaled display amounts, a close
 * authority, confidential transfers into an account never configured for them) change nothing
 * the store relies on.
 *
 * Token-2022 writes an account's extensions after the base token account's 165 bytes and one byte
 * of account type, as TLV entries: u16 type (spl-token-2022's ExtensionType), u16 length, value.
 */
import { type Address, getAddressDecoder } from "@solana/kit";
import { AccountState, getTokenDecoder } from "@solana-program/token";

const BASE_ACCOUNT_SIZE = 165;
const TLV_START = BASE_ACCOUNT_SIZE + 1;
/** spl-token-2022's ExtensionType numbers. */
const EXTENSION = {
  TransferFeeConfig: 1,
  DefaultAccountState: 6,
  MemoTransfer: 8,
  NonTransferable: 9,
  PermanentDelegate: 12,
  TransferHook: 14,
} as const;
const FROZEN = 2;

/** Why a purchase could not work, as one line for the operator, and its details for the log. */
export interface Unsellable {
  extension: string;
  msg: string;
  fields: Record<string, unknown>;
}

/** The TLV entries of a Token-2022 account, by type; empty for an account without extensions. */
function tokenExtensions(data: Uint8Array): Map<number, Uint8Array> {
  const found = new Map<number, Uint8Array>();
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let at = TLV_START;
  while (at + 4 <= data.length) {
    const type = view.getUint16(at, true);
    const length = view.getUint16(at + 2, true);
    // Type 0 (Uninitialized) is the zeroed space no extension took yet.
    if (type === 0 || at + 4 + length > data.length) break;
    found.set(type, data.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return found;
}

const decodeAddress = (bytes: Uint8Array) => getAddressDecoder().decode(bytes);
/** An OptionalNonZeroPubkey: 32 zero bytes are none. */
const optionalAddress = (bytes: Uint8Array): Address | null =>
  bytes.some((byte) => byte !== 0) ? decodeAddress(bytes) : null;

/**
 * The fee TransferFeeConfig takes (the older or the newer, whichever charges): null when neither
 * takes anything (a zero rate or a zero maximum) and no authority can change that.
 */
function transferFee(value: Uint8Array): { basisPoints: number; maximumFee: string; authority: Address | null } | null {
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength);
  const authority = optionalAddress(value.subarray(0, 32));
  // authority 32, withdraw authority 32, withheld u64, then older and newer: epoch u64, maximum u64, rate u16.
  const fees = [72, 90].map((at) => ({
    maximumFee: view.getBigUint64(at + 8, true),
    basisPoints: view.getUint16(at + 16, true),
  }));
  const charged = fees.find((fee) => fee.basisPoints > 0 && fee.maximumFee > 0n);
  if (!charged && authority === null) return null;
  const { basisPoints, maximumFee } = charged ?? { basisPoints: 0, maximumFee: 0n };
  return { basisPoints, maximumFee: maximumFee.toString(), authority };
}

/** What the mint alone rules out. */
function mintRefusal(mint: Address, extensions: Map<number, Uint8Array>): Unsellable | null {
  const name = `PUBLIC_CONTRACT_ADDRESS ${mint}`;
  if (extensions.has(EXTENSION.NonTransferable)) {
    return {
      extension: "NonTransferable",
      msg: `${name} is non-transferable (NonTransferable): no purchase could be paid; choose a transferable mint`,
      fields: {},
    };
  }
  const hook = extensions.get(EXTENSION.TransferHook);
  const hookProgram = hook && optionalAddress(hook.subarray(32, 64));
  if (hookProgram) {
    return {
      extension: "TransferHook",
      msg: `${name} has a transfer hook (TransferHook, program ${hookProgram}): every purchase would fail, since the store's transfers do not carry the hook's accounts; choose a mint without one`,
      fields: { hookProgram },
    };
  }
  const feeConfig = extensions.get(EXTENSION.TransferFeeConfig);
  const fee = feeConfig && transferFee(feeConfig);
  if (fee) {
    return {
      extension: "TransferFeeConfig",
      msg:
        fee.basisPoints > 0
          ? `${name} has a transfer fee (TransferFeeConfig): every purchase would arrive short; choose a mint without one`
          : `${name} has a transfer fee its authority can raise at any time (TransferFeeConfig, none yet): purchases would then arrive short; choose a mint without one`,
      fields: fee,
    };
  }
  const delegate = extensions.get(EXTENSION.PermanentDelegate);
  const delegateAddress = delegate && optionalAddress(delegate);
  if (delegateAddress) {
    return {
      extension: "PermanentDelegate",
      msg: `${name} has a permanent delegate (PermanentDelegate, ${delegateAddress}): it could take any payment back out of the store's token account; choose a mint without one`,
      fields: { delegate: delegateAddress },
    };
  }
  return null;
}

export interface SellableCheck {
  mint: Address;
  mintData: Uint8Array;
  recipient: Address;
  /** The recipient's associated token account for the mint, and its data (null: it does not exist yet). */
  tokenAccount: Address;
  tokenAccountData: Uint8Array | null;
}

/** Why the store could not sell for this mint and token account; null when it can. */
export function unsellable({
  mint,
  mintData,
  recipient,
  tokenAccount,
  tokenAccountData,
}: SellableCheck): Unsellable | null {
  const mintExtensions = tokenExtensions(mintData);
  const refusal = mintRefusal(mint, mintExtensions);
  if (refusal) return { ...refusal, fields: { mint, extension: refusal.extension, ...refusal.fields } };
  const fields = { mint, recipient, tokenAccount };
  const account = `PUBLIC_PAYMENT_ADDRESS ${recipient}'s token account ${tokenAccount}`;
  const state = tokenAccountData
    ? getTokenDecoder().decode(tokenAccountData.subarray(0, BASE_ACCOUNT_SIZE)).state
    : AccountState.Uninitialized;
  if (state === AccountState.Frozen) {
    return {
      extension: "frozen",
      msg: `${account} is frozen: every purchase would fail; have the mint's freeze authority thaw it, or choose another address`,
      fields: { ...fields, extension: "frozen" },
    };
  }
  if (state !== AccountState.Initialized && mintExtensions.get(EXTENSION.DefaultAccountState)?.[0] === FROZEN) {
    return {
      extension: "DefaultAccountState",
      msg: `PUBLIC_CONTRACT_ADDRESS ${mint} freezes every new token account (DefaultAccountState frozen), and ${account} does not exist yet: it would be created frozen and every purchase would fail; create it and have the mint's freeze authority thaw it, or choose a mint without one`,
      fields: { ...fields, extension: "DefaultAccountState" },
    };
  }
  if (tokenAccountData && tokenExtensions(tokenAccountData).get(EXTENSION.MemoTransfer)?.[0] === 1) {
    return {
      extension: "MemoTransfer",
      msg: `${account} requires a memo on incoming transfers (MemoTransfer): the store's transfers carry none before the transfer, so every purchase would fail; turn it off (spl-token disable-required-transfer-memos ${tokenAccount}) or choose another address`,
      fields: { ...fields, extension: "MemoTransfer" },
    };
  }
  return null;
}
