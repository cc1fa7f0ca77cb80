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

/**
 * Sagas on the server `env` points at: `running` waits for an answer (its workflow is cached in the
 * worker), `finished` has completed (a query replays its history first). `respondMs`: wall times of
 * `bin/saga respond` runs that answered a real pending question (each answer can be given once, so the
 * interaction bench makes them).
 */
export function cliStartupFigures(
  env: NodeJS.ProcessEnv,
  sagas: { running: string; finished: string },
  respondMs: number[],
): Figure[] {
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
      medianWallMs([SAGA_BIN, 'status', sagas.running, '--json'], env),
      'ms',
      400,
      `median of ${RUNS}, a running saga, local server`,
    ),
    figure(
      'cli_wall_ms',
      'saga status --json finished',
      medianWallMs([SAGA_BIN, 'status', sagas.finished, '--json'], env),
      'ms',
      null,
      `median of ${RUNS}, a completed saga (the query replays its history), local server`,
    ),
    ...(respondMs.length === 0
      ? []
      : [
          figure(
            'cli_wall_ms',
            'saga respond',
            quantile(respondMs, 0.5),
            'ms',
            400,
            `median of ${respondMs.length} answers to pending questions, local server`,
          ),
        ]),
  ];
}
