/**
 * The sandbox's added cost per agent run: the same short process started plain and confined
 * (bubblewrap with the seccomp filter and limits; and with one allowed endpoint, which adds the network
 * sandbox around it: a second bwrap, the socat forwarder and its readiness wait), in
 * a real git worktree, alternately so machine load hits both alike. Figures: the median difference.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runProcess } from '../src/activities/process/process';
import { privateHomeOf, runConfined } from '../src/activities/sandbox';
import { AGENT_PRESETS } from '../src/domain/config/agent-presets';
import { figure, quantile, type Figure } from './figures';

const RUNS = 40;

export async function sandboxFigures(): Promise<Figure[]> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'saga-bench-sandbox-'));
  try {
    const repo = path.join(root, 'repo');
    const worktree = path.join(root, 'saga-bench-m1t1');
    mkdirSync(repo);
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=B', '-c', 'user.email=b@x', ...args], { cwd: repo });
    git('init', '-q', '-b', 'main');
    writeFileSync(path.join(repo, 'README.md'), 'bench\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'bench');
    git('worktree', 'add', '-q', '-b', 'saga/bench/m1t1-x', worktree);
    const opts = {
      argv: ['/bin/true'],
      cwd: worktree,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir() },
      outputPath: path.join(root, 'out.log'),
    };
    const sagaHome = path.join(root, 'home');
    const timed = async (run: () => Promise<unknown>) => {
      const started = process.hrtime.bigint();
      await run();
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    // As an agent run: the saga's private copy of its CLI's state and caches over the user's.
    const claude = AGENT_PRESETS.claude!;
    const agentState = {
      privateHome: privateHomeOf(path.join(sagaHome, 'bench')),
      stateKey: 'claude',
      stateFiles: claude.stateFiles ?? [],
      configFiles: claude.configFiles ?? [],
      loginFiles: claude.cli?.loginFiles ?? [],
    };
    const plain: number[] = [];
    const confined: number[] = [];
    const networked: number[] = [];
    const agent: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      plain.push(await timed(() => runProcess(opts)));
      confined.push(await timed(() => runConfined({ mode: 'auto', sagaHome }, opts)));
      networked.push(
        await timed(() =>
          runConfined({ mode: 'auto', sagaHome, network: [{ host: 'api.example.com', port: 443 }] }, opts),
        ),
      );
      agent.push(await timed(() => runConfined({ mode: 'auto', sagaHome, ...agentState }, opts)));
    }
    const base = quantile(plain, 0.5);
    const scenario = `${RUNS} runs of /bin/true in a git worktree; plain median ${base.toFixed(1)} ms`;
    return [
      figure('sandbox_added_ms', 'median', quantile(confined, 0.5) - base, 'ms', 50, scenario),
      figure('sandbox_added_ms', 'p95', quantile(confined, 0.95) - base, 'ms', null, scenario),
      figure('sandbox_added_ms', 'median, 1 endpoint', quantile(networked, 0.5) - base, 'ms', 50, scenario),
      figure('sandbox_added_ms', 'median, claude state', quantile(agent, 0.5) - base, 'ms', 50, scenario),
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

// `node dist/bench/sandbox.js` prints these figures alone.
if (require.main === module) {
  void sandboxFigures().then((figures) => {
    for (const f of figures) process.stdout.write(`${JSON.stringify(f)}\n`);
  });
}
