/**
 * `qrcode` for @solana-mobile/wallet-standard-mobile (aliased in astro.config.mjs). The library
 * draws a QR code only for its remote association, a desktop scanning a phone, which the store
 * never registers (mobileWallet.ts registers on Android, without a reflector). The real encoder is
 * CommonJS: its interop helper would join the bundler's shared runtime, which every page loads
 * before interaction (+233 B gzip). Should it ever be called, it fails as a missing feature.
 */
export default {
  toCanvas(): never {
    throw new Error("No QR code here: the store does not offer remote association.");
  },
};
