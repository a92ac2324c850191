/**
 * `<certificate-dialog>` (CertificateDialog.astro): fills the page's one certificate dialog with a
 * tier's certificate and opens it. Loaded by the first "View Certificate" click (TierCard.astro),
 * not with the page: a phone evaluates none of it, nor its dates and formats, until asked
 * (docs/decisions/2026-11-27-the-phone-renders-what-it-shows.md). Importing it defines the element,
 * which upgrades the one in the page at once.
 */
import { type CertificateTier, certificateIcon, generateSerial } from "../lib/certificate.ts";
import { formatLongUsDate, localCalendarDate } from "../lib/dates.ts";
import { formatZn } from "../lib/format.ts";

/**
 * Makes the printed copy keep the certificate's dark card and coloured border. Set through the
 * CSSOM: the popup inherits the page's CSP, which refuses a new <style> element it has no hash for.
 */
const PRINT_BODY_STYLE =
  "margin:0;padding:2rem;background:var(--c-void);print-color-adjust:exact;-webkit-print-color-adjust:exact";

class CertificateDialog extends HTMLElement {
  #opener: HTMLElement | undefined;
  #tierName = "";

  get #dialog() {
    return this.querySelector("dialog") as HTMLDialogElement;
  }

  get #card() {
    return this.querySelector("[data-certificate-card]") as HTMLElement;
  }

  connectedCallback() {
    const dialog = this.#dialog;
    this.querySelector("[data-certificate-close]")?.addEventListener("click", () => dialog.close());
    this.querySelector("[data-certificate-download]")?.addEventListener("click", () => this.download());
    // A click on the backdrop reaches the dialog itself, outside its box: dismiss (docs/product-behaviour.md#4).
    dialog.addEventListener("click", (event) => {
      if (event.target !== dialog) return;
      const box = dialog.getBoundingClientRect();
      const inside =
        event.clientX >= box.left &&
        event.clientX <= box.right &&
        event.clientY >= box.top &&
        event.clientY <= box.bottom;
      if (!inside) dialog.close();
    });
    // Escape closes a modal dialog natively; every way out hands focus back to the opening button.
    dialog.addEventListener("close", () => this.#opener?.focus());
  }

  /** Shows `tier`'s certificate with today's date and a fresh serial; `opener` gets focus back on close. */
  open(tier: CertificateTier, opener: HTMLElement) {
    this.#opener = opener;
    this.#tierName = tier.name;
    const icon = certificateIcon(tier.price);
    this.#set("[data-certificate-title]", `Certificate Preview - ${tier.name}`);
    this.#set("[data-certificate-name]", tier.name);
    this.#set("[data-certificate-price]", formatZn(tier.price));
    this.#set("[data-certificate-date]", formatLongUsDate(localCalendarDate(new Date())));
    this.#set("[data-certificate-serial]", generateSerial(Math.random));
    this.#card.dataset.variant = tier.variant;
    for (const node of this.querySelectorAll<HTMLElement>("[data-icon]")) {
      node.toggleAttribute("hidden", node.dataset.icon !== icon);
    }
    this.#dialog.showModal();
  }

  /** Opens the certificate alone in a new window and prints it; a blocked popup means nothing happens. */
  download() {
    const popup = window.open("", "_blank");
    if (!popup) return;
    const doc = popup.document;
    doc.documentElement.lang = "en";
    doc.title = `Certificate of Nothing - ${this.#tierName}`;
    // The page's stylesheet is inlined in <style> elements: the copy looks the same.
    for (const style of document.querySelectorAll("style")) doc.head.append(doc.importNode(style, true));
    doc.body.style.cssText = PRINT_BODY_STYLE;
    doc.body.append(doc.importNode(this.#card, true));
    popup.focus();
    popup.print();
  }

  #set(selector: string, text: string) {
    const node = this.querySelector(selector);
    if (node) node.textContent = text;
  }
}

customElements.define("certificate-dialog", CertificateDialog);
