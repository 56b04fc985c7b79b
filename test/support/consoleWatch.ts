import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import axe from 'axe-core';
import type { Page } from 'playwright-core';
import { repoRoot } from './cli.js';
import { checkResponse } from './openApiCheck.js';

/** Where the browser tests write their screenshots, for a reviewer to look at (not committed). */
export const SCREENSHOTS = join(repoRoot, 'test-results', 'admin');

const BODY_WAIT_MS = 5000;
/** Chromium reports every 4xx answer of a fetch as a console error; the test names those it provokes. */
const NETWORK_LINE = /^Failed to load resource: the server responded with a status of (\d{3})/;

/**
 * Watches a page of the admin console: console errors and warnings, uncaught exceptions, and every
 * API answer checked against openapi.json (so the console uses only the documented, public API).
 */
export class ConsoleWatch {
  readonly problems: string[] = [];
  /** Statuses of the API answers the page received, by `METHOD path`. */
  readonly answers: { method: string; path: string; status: number }[] = [];
  private readonly pending = new Set<Promise<void>>();

  constructor(
    readonly page: Page,
    private readonly expectedStatuses: number[] = [400, 401, 403, 404, 422],
    /** When set, what pages of other origins log (an OpenID provider's sign-in page) is theirs. */
    private readonly origin?: string,
  ) {
    page.on('console', (message) => {
      if (message.type() !== 'error' && message.type() !== 'warning') return;
      if (this.origin && !page.url().startsWith(this.origin)) return;
      const network = NETWORK_LINE.exec(message.text());
      if (network && this.expectedStatuses.includes(Number(network[1]))) return;
      this.problems.push(`console ${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => this.problems.push(`page error: ${error.message}`));
    page.on('response', (response) => {
      const url = new URL(response.url());
      if (!url.pathname.startsWith('/api/')) return;
      const method = response.request().method();
      this.answers.push({ method, path: url.pathname + url.search, status: response.status() });
      if (response.status() >= 500) this.problems.push(`${method} ${url.pathname}: ${response.status()}`);
      const check = (async () => {
        const type = response.headers()['content-type'] ?? null;
        let body: unknown;
        try {
          // A request the page aborted (a search typed over) never yields its body.
          body = type?.includes('json')
            ? await Promise.race([response.json(), new Promise((_, reject) => setTimeout(reject, BODY_WAIT_MS))])
            : undefined;
        } catch {
          return;
        }
        for (const problem of checkResponse(method, url.pathname + url.search, response.status(), type, body))
          this.problems.push(problem);
      })();
      this.pending.add(check);
      void check.finally(() => this.pending.delete(check));
    });
  }

  /** Every answer checked so far; then the problems, which a test expects to be none. */
  async settled(): Promise<string[]> {
    await Promise.all([...this.pending]);
    return this.problems;
  }

  async screenshot(name: string): Promise<void> {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await this.page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  }

  /** axe-core on the current page: the serious and critical violations, as `rule: target` lines. */
  async accessibility(): Promise<string[]> {
    // Strings, not functions: this file is compiled without the DOM's types.
    if (!(await this.page.evaluate<boolean>("'axe' in window"))) await this.page.evaluate(axe.source);
    const violations = await this.page.evaluate<{ id: string; impact: string | null; targets: string[] }[]>(`
      axe.run(document, { resultTypes: ['violations'] }).then((result) =>
        result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) })))
    `);
    return violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.targets.join(', ')}`);
  }
}
