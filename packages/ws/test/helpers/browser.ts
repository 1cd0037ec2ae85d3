import { chromium, type Browser, type BrowserServer } from 'playwright-core';

/** Debian's chromium; playwright-core is only ever pointed at it, it never downloads a browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * The flags every test browser gets. playwright-core adds a fresh temporary `--user-data-dir`
 * of its own to every launch (and refuses one in `args`), so each browser starts from an empty profile.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Starts headless Chromium and connects to it. `launchServer()` rather than `launch()`, because
 * its `process()` gives the browser's pid, which the tests kill with SIGKILL.
 */
export async function startBrowser(): Promise<{
  server: BrowserServer;
  browser: Browser;
  pid: number;
  close: () => Promise<void>;
}> {
  const server = await chromium.launchServer({
    executablePath: CHROMIUM_PATH,
    headless: true,
    chromiumSandbox: false,
    args: CHROMIUM_ARGS,
    timeout: 60_000,
  });
  const browser = await chromium.connect(server.wsEndpoint());
  const pid = server.process().pid!;
  const close = async (): Promise<void> => {
    await browser.close().catch(() => undefined);
    await server.kill().catch(() => undefined);
  };
  return { server, browser, pid, close };
}
