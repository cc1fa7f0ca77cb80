/** A server command's end: it runs until Ctrl-C (SIGINT) or SIGTERM, then says so and closes what it served. */
export async function untilStopped(
  say: (line: string) => void,
  what: string,
  close: () => Promise<void>,
): Promise<0> {
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  say(`Stopping the ${what}...`);
  await close();
  return 0;
}
