/** The headless Chromium the board's benchmark and browser tests drive: Debian's `chromium`, or SAGA_CHROMIUM. */
export const CHROMIUM = process.env.SAGA_CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
];
