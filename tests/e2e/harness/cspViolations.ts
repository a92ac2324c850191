import type { BrowserContext, Page } from "@playwright/test";

/** A Content-Security-Policy violation as the page's securitypolicyviolation event tells it. */
interface Violation {
  directive: string;
  blocked: string;
  sample: string;
  page: string;
}

/**
 * Records every CSP violation of the context's pages (popups included): the DOM event, and the
 * console messages Chromium writes for violations the event may not reach (a frame, a popup).
 */
export async function watchViolations(context: BrowserContext) {
  await context.addInitScript(() => {
    const seen: unknown[] = [];
    (window as unknown as { cspViolations: unknown[] }).cspViolations = seen;
    document.addEventListener("securitypolicyviolation", (event) => {
      seen.push({
        directive: event.effectiveDirective,
        blocked: event.blockedURI,
        sample: event.sample,
        page: location.href,
      });
    });
  });
  const console: string[] = [];
  context.on("console", (message) => {
    if (/Content Security Policy|Content-Security-Policy/i.test(message.text())) console.push(message.text());
  });
  return {
    console,
    async events(page: Page): Promise<Violation[]> {
      // A popup written by its opener may not run init scripts: the console messages cover it then.
      return page.evaluate(() => (window as unknown as { cspViolations?: Violation[] }).cspViolations ?? []);
    },
  };
}
