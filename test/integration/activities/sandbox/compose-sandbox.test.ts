/**
 * The Docker worker can confine agents: its image has bubblewrap and socat, docker-compose.yml gives
 * saga-worker the security options bubblewrap needs in a container (and no more: no privileged mode, no
 * capabilities), and where a container lacks them the worker refuses agents with the advice to set exactly
 * those options. Checked statically (no Docker engine here), and the refusal with a real process standing in
 * for a bubblewrap that cannot make namespaces, in this machine's own container.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { detectSandbox, inContainer, namespaceHelp } from '../../../../src/activities/sandbox/detect';
import { PROJECT_ROOT } from '../../../../src/project-root';

const ROOT = PROJECT_ROOT;
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

type Worker = { security_opt?: string[]; privileged?: boolean; cap_add?: string[] };
const worker = (parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Worker> })
  .services['saga-worker']!;
const NEEDED = ['seccomp=unconfined', 'apparmor=unconfined', 'systempaths=unconfined'];

describe('the Docker worker and the sandbox', () => {
  test('the runtime image installs bubblewrap and socat', () => {
    const runtime = read('Dockerfile').slice(read('Dockerfile').lastIndexOf('\nFROM '));
    const install = /apt-get install[^\n]*(?:\\\n[^\n]*)*/.exec(runtime)?.[0] ?? '';
    expect(install).toMatch(/\bbubblewrap\b/);
    expect(install).toMatch(/\bsocat\b/);
  });

  test('saga-worker gets the security options bubblewrap needs, and no privilege', () => {
    expect([...(worker.security_opt ?? [])].sort()).toEqual([...NEEDED].sort());
    expect(worker.privileged).toBeUndefined();
    expect(worker.cap_add).toBeUndefined();
  });

  test('the refusal in a container names the same options compose sets', () => {
    for (const option of NEEDED) expect(namespaceHelp(true)).toContain(`--security-opt ${option}`);
    expect(namespaceHelp(false)).toContain('kernel.unprivileged_userns_clone=1');
  });

  test('a bubblewrap that cannot make namespaces: agents are refused with that advice', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'saga-bwrap-'));
    const fake = path.join(dir, 'bwrap');
    writeFileSync(
      fake,
      '#!/bin/sh\n[ "$1" = --version ] && { echo "bubblewrap 0.8.0"; exit 0; }\n' +
        'echo "bwrap: No permissions to create new namespace" >&2; exit 1\n',
      { mode: 0o755 },
    );
    const saved = process.env.SAGA_BWRAP;
    process.env.SAGA_BWRAP = fake;
    try {
      const refused = detectSandbox();
      await expect(refused).rejects.toThrow(/No permissions to create new namespace/);
      await expect(refused).rejects.toThrow(namespaceHelp(inContainer()));
    } finally {
      if (saved === undefined) delete process.env.SAGA_BWRAP;
      else process.env.SAGA_BWRAP = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
