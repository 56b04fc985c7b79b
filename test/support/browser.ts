import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { repoRoot } from './cli.js';

/** Debian's Chromium (installed by scripts/ensure-chromium.sh), headless, without the background traffic this closed network refuses. */
export async function launchChromium(): Promise<Browser> {
  execFileSync('bash', [join(repoRoot, 'scripts', 'ensure-chromium.sh')], { stdio: 'inherit' });
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
