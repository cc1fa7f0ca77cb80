/**
 * The `runChecks` activity: runs the validation checks a plan author wrote in a checkout.
 * Each check is one command line given to `/bin/sh -c` as a single argv element, in its own process group,
 * with a timeout that kills its whole tree. Output goes to `<sagaDir>/runs/<label>/check-<n>.log`.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { commandEnvironment } from '../domain/config/agent-env';
import { namedPathsIn } from '../domain/fleet/milestone-failure';
import { stderrLines } from '../domain/text/stderr-lines';
import { zodIssueLines } from '../domain/text/zod-errors';
import { CommandSandboxSchema } from '../domain/config/sandbox';
import { runDirectory, SpawnError } from './process/process';
import { commandSandbox, runConfined, SandboxUnavailableError } from './sandbox';

const TAIL_MAX = 1024;

export const RunChecksInputSchema = z.object({
  sagaDir: z.string().refine((p) => path.isAbsolute(p), 'must be an absolute path'),
  cwd: z.string().refine((p) => path.isAbsolute(p), 'must be an absolute path'),
  checks: z.array(z.object({ text: z.string(), check: z.string().min(1, 'the check command is empty') })),
  /** e.g. `m1t2-a1-checks`; sanitised into one folder name under `<sagaDir>/runs/`. */
  label: z.string().min(1),
  /** Per check. */
  timeoutMs: z.number().int().positive(),
  env: z.record(z.string()).optional(),
  /** Worker variables the checks also get (saga.config.yaml `pass_env`). */
  passEnv: z.array(z.string()).optional(),
  /** Also list the paths a failing check's whole output names (milestone checks: who is to blame). */
  namePaths: z.boolean().optional(),
  /** Checks run confined like agents (saga.config.yaml `sandbox`, `network`). */
  sandbox: CommandSandboxSchema.default({}),
});
export type RunChecksInput = z.input<typeof RunChecksInputSchema>;

/** One check's run: its command, exit, time and output (a `saga doctor` finding is a CheckResult). */
export const CheckRunSchema = z.object({
  text: z.string(),
  check: z.string(),
  exitCode: z.number().int().nullable(),
  timedOut: z.boolean(),
  durationMs: z.number(),
  outputPath: z.string(),
  /** The last ~1 KB of output. */
  tail: z.string(),
  /** A failing check's last lines of stderr, on one line (absent from results of older workers). */
  stderrTail: z.string().optional(),
  /** With `namePaths`, for a failing check: paths its output names (capped; see `namedPathsIn`). */
  namedPaths: z.array(z.string()).optional(),
});
export type CheckRun = z.infer<typeof CheckRunSchema>;
export const RunChecksResultSchema = z.object({ passed: z.boolean(), results: z.array(CheckRunSchema) });
export type RunChecksResult = z.infer<typeof RunChecksResultSchema>;

/** The activity context when running as an activity; undefined when called directly (CLI, scripts). */
function currentContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

export function createValidationActivities(deps: { shell?: string; killGraceMs?: number } = {}) {
  const shell = deps.shell ?? '/bin/sh';

  return {
    async runChecks(rawInput: RunChecksInput): Promise<RunChecksResult> {
      const parsed = RunChecksInputSchema.safeParse(rawInput);
      if (!parsed.success) {
        const problems = zodIssueLines(parsed.error, '(input)');
        throw ApplicationFailure.nonRetryable(
          `Invalid runChecks input: ${problems.join('; ')}`,
          'InvalidInput',
        );
      }
      const input = parsed.data;
      const ctx = currentContext();
      const runDir = runDirectory(input.sagaDir, input.label);
      await fs.mkdir(runDir, { recursive: true });

      const results: CheckRun[] = [];
      for (const [index, { text, check }] of input.checks.entries()) {
        const n = index + 1;
        const outputPath = path.join(runDir, `check-${n}.log`);
        await fs.writeFile(outputPath, `$ ${check}\n`); // a retried run starts its evidence afresh
        ctx?.heartbeat({ check: n, of: input.checks.length, outputBytes: 0, lastLine: '', elapsedMs: 0 });
        const sandbox = commandSandbox(input.sandbox, path.dirname(input.sagaDir), input.sagaDir);
        const run = await runConfined(sandbox, {
          argv: [shell, '-c', check],
          cwd: input.cwd,
          env: commandEnvironment(process.env, input.env, input.passEnv), // never the worker's secrets
          outputPath,
          timeoutMs: input.timeoutMs,
          signal: ctx?.cancellationSignal,
          onProgress: (progress) => ctx?.heartbeat({ check: n, of: input.checks.length, ...progress }),
          killGraceMs: deps.killGraceMs,
        }).catch((err: unknown) => {
          if (err instanceof SpawnError) throw ApplicationFailure.nonRetryable(err.message, 'SpawnError');
          if (err instanceof SandboxUnavailableError) {
            throw ApplicationFailure.nonRetryable(
              `checks cannot run confined: ${err.message}`,
              'SandboxUnavailable',
            );
          }
          throw err;
        });
        if (run.aborted) {
          throw ctx?.cancellationSignal.reason ?? new CancelledFailure('Validation cancelled');
        }
        if (run.timedOut) {
          await fs.appendFile(outputPath, `\n[saga] check killed after ${input.timeoutMs} ms (timeout)\n`);
        }
        const failed = run.exitCode !== 0 || run.timedOut;
        results.push({
          text,
          check,
          exitCode: run.exitCode,
          timedOut: run.timedOut,
          durationMs: run.durationMs,
          outputPath,
          tail: tailOf(run.tail),
          ...(failed && run.stderrTail.trim() ? { stderrTail: stderrLines(run.stderrTail) } : {}),
          ...(input.namePaths && failed ? { namedPaths: namedPathsIn(await outputEnd(outputPath)) } : {}),
        });
      }
      return { passed: results.every((r) => r.exitCode === 0 && !r.timedOut), results };
    },
  };
}

/** Enough of an output to hold its failure summary and stack traces; a huge log is not read whole. */
const SCAN_MAX = 1024 * 1024;

/** The check's output as written to its log, without the `$ command` header line (the command is not output). */
async function outputEnd(file: string): Promise<string> {
  const handle = await fs.open(file, 'r');
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, SCAN_MAX);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    const text = buffer.toString('utf8');
    return length === size ? text.slice(text.indexOf('\n') + 1) : text;
  } finally {
    await handle.close();
  }
}

function tailOf(text: string): string {
  return text.length <= TAIL_MAX ? text : text.slice(-TAIL_MAX);
}
