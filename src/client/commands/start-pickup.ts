/**
 * `saga start --repo R` with an empty goal picks up the repository's unfinished saga, as `saga continue`
 * would (docs/PROCEDURE.md §7.1): one unfinished saga of R is continued, saying so; several are
 * listed and asked about at a terminal (refused with their names in a script); none is the usual error.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { checkRepo } from '../../activities/git-ops';
import { FLAG_VOCABULARY, flagName, parseFlags } from '../../domain/request/flags';
import { bool, str } from '../args';
import type { ParsedArgs } from '../command-decl';
import { UserError } from '../errors';
import { listSagas } from '../saga-client';
import { loadSageConfigDefaults } from '../sage-config';
import { chooseSaga, CLOSED_RESUMABLE, describeActive, type Terminal } from './continue-locate';
import type { Io } from '../io';

/** What `saga start` says when there is no goal and nothing to pick up (the error of a missing goal). */
export const NO_GOAL = 'Say what the saga should deliver: saga start --repo PATH -- "Ship dark mode".';

/** Options that shape a new saga: with nothing new to start, they would be silently ignored. */
const NEW_SAGA_OPTIONS = ['agent', 'config', 'name', 'base', 'trust-repo-config', 'deliver'] as const;

/**
 * The repository's toplevel and the flags, when the command gives no goal and no plan: the saga to pick up
 * is looked for. Null: a new saga starts (or `prepareSaga` names what is wrong with the request).
 */
export async function emptyGoalRequest(
  args: ParsedArgs,
  argumentsText: string,
): Promise<{ repo: string; modes: string[] } | null> {
  const repoArg = str(args, 'repo');
  if (!repoArg || str(args, 'plan') || !existsSync(path.resolve(repoArg))) return null;
  const repo = await checkRepo({ repo: path.resolve(repoArg) }).then(
    (info) => info.repo,
    () => null,
  );
  if (!repo) return null;
  const flags = parseFlags(argumentsText, loadSageConfigDefaults(path.join(repo, '.sage', 'config.yaml')));
  if (flags.error || flags.goal) return null;
  const given = NEW_SAGA_OPTIONS.filter((o) => str(args, o) !== undefined || bool(args, o));
  if (given.length)
    throw new UserError(
      `${given.map((o) => `--${o}`).join(', ')}: an empty goal picks up the repository's unfinished saga, ` +
        `which keeps its own settings. Say what a new saga should deliver (saga start --repo PATH -- "Ship ` +
        `dark mode"), or drop ${given.length > 1 ? 'them' : 'it'}.`,
    );
  const modes = FLAG_VOCABULARY.keys
    .filter((k) => flags[`${k}_source`] === 'flag')
    .map((k) => (flags[k] ? flagName(k) : `--no-${flagName(k).slice(2)}`));
  return { repo, modes };
}

/** Finds the repository's unfinished saga (asking which when several) and continues it. */
export async function pickUpSaga(
  client: Client,
  request: { repo: string; modes: string[]; follow: boolean },
  io: Io,
  terminal: Terminal,
): Promise<number> {
  const unfinished = (await listSagas(client))
    .filter((s) => s.status === 'RUNNING' || CLOSED_RESUMABLE.includes(s.status))
    // Numbered in the order they started, so the numbers mean the same at every call.
    .sort((a, b) => a.startTime.localeCompare(b.startTime));
  const rows = (await describeActive(client, unfinished)).filter((r) => r.repo === request.repo);
  if (!rows.length) throw new UserError(`${NO_GOAL} (${request.repo} has no unfinished saga to pick up.)`);
  let name: string;
  if (rows.length === 1) name = rows[0]!.name;
  else if (terminal.input.isTTY)
    name = await chooseSaga(rows, terminal, `Several unfinished sagas of ${request.repo}`);
  else
    throw new UserError(
      `Several unfinished sagas of ${request.repo}; say which one: saga continue NAME\n` +
        rows.map((r) => `  ${r.line}`).join('\n'),
    );
  io.out(
    `No goal given: picking up the unfinished saga '${name}' of ${request.repo}, as 'saga continue ${name}' would.`,
  );
  if (request.modes.length)
    io.out(
      `It keeps the modes it started with (manifest.md flags); ${request.modes.join(', ')} given here ` +
        'changes nothing.',
    );
  // Loaded here: the continue path brings the worker, which starting a new saga does not need. Its core
  // runtime (and log level) goes in before the worker's native connection, as for `saga continue`.
  (await import('../../worker/worker')).installRuntime();
  const { continueSaga } = await import('./continue');
  return continueSaga(client, name, io, { follow: request.follow, terminal });
}
