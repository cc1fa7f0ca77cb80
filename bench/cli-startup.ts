/**
 * How long a `saga` command takes from the shell, against `node -e 0` in the same run (the floor any Node
 * CLI pays): users and scripts call `saga status`, `saga respond` and `saga flags` all the time.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { PROJECT_ROOT } from '../src/project-root';
import { figure, quantile, type Figure } from './figures';

const RUNS = 10;
const SAGA_BIN = path.join(PROJECT_ROOT, 'bin', 'saga');

/** Median wall time of RUNS runs of one command; a run that fails makes the figure meaningless: it throws. */
function medianWallMs(args: string[], env: NodeJS.ProcessEnv): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    const run = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
    times.push(performance.now() - start);
    if (run.status !== 0) throw new Error(`${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  }
  return quantile(times, 0.5);
}

/** `sagaName` is a saga that exists on the server `env` points at. */
export function cliStartupFigures(env: NodeJS.ProcessEnv, sagaName: string): Figure[] {
  const floor = medianWallMs(['-e', '0'], env);
  const light: Array<[string, string[]]> = [
    ['saga --help', ['--help']],
    ['saga flags parse', ['flags', 'parse', '--', '--parallel=3 Ship it']],
  ];
  const scenario = `median of ${RUNS}; node -e 0: ${Math.round(floor)} ms in the same run`;
  return [
    figure('cli_wall_ms', 'node -e 0', floor, 'ms', null, `median of ${RUNS}: the floor`),
    ...light.flatMap(([label, args]) => {
      const ms = medianWallMs([SAGA_BIN, ...args], env);
      return [
        figure('cli_wall_ms', label, ms, 'ms', null, scenario),
        figure('cli_ratio_to_node', label, ms / floor, 'ratio', 2, scenario),
      ];
    }),
    figure(
      'cli_wall_ms',
      'saga status --json',
      medianWallMs([SAGA_BIN, 'status', sagaName, '--json'], env),
      'ms',
      400,
      `median of ${RUNS}, local server`,
    ),
  ];
}
