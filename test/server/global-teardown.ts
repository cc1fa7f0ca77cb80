import { rmSync } from 'node:fs';
import { stackInfo, stopStack } from './stack';

export default async function globalTeardown(): Promise<void> {
  const { dir } = stackInfo();
  await stopStack(dir);
  if (!process.env.SAGA_KEEP_TEST_ARTIFACTS) {
    rmSync(dir, { recursive: true, force: true });
    if (process.env.JEST_SAGA_ARTIFACTS)
      rmSync(process.env.JEST_SAGA_ARTIFACTS, { recursive: true, force: true });
  }
}
