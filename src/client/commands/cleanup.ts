/**
 * `saga cleanup NAME [--repo PATH] [--force]`: removes the worktrees a crashed run left behind (branches
 * stay). A worktree with uncommitted work is kept and reported unless `--force` says to discard it. A saga
 * that is still running owns its worktrees, so cleanup refuses until it has ended.
 */
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { cleanupSagaWorktrees } from '../../activities/git-ops';
import { assertSagaName } from '../../domain/contract/naming';
import { SagaRepo } from '../../domain/contract/search-attributes';
import { bool, str } from '../args';
import type { ParsedArgs } from '../command-decl';
import { UserError } from '../errors';
import { describeSaga } from '../saga-client';
import type { Io } from '../io';

export async function cleanupCommand(
  args: ParsedArgs,
  io: Io,
  connect: () => Promise<Client>,
): Promise<number> {
  const name = args.positionals[0]!;
  try {
    assertSagaName(name);
  } catch (error) {
    throw new UserError((error as Error).message);
  }
  let repo = str(args, 'repo');
  let known = true;
  try {
    const desc = await describeSaga(await connect(), name);
    if (desc.status.name === 'RUNNING') {
      throw new UserError(
        `Saga '${name}' is still running and its tasks use their worktrees; cancel it (saga cancel ${name}) or let it finish first.`,
      );
    }
    repo ??= desc.typedSearchAttributes.get(SagaRepo);
  } catch (error) {
    // A saga the server no longer knows can still have leftovers: --repo says where.
    if (!(error instanceof UserError) || !/^No saga named/.test(error.message)) throw error;
    known = false;
  }
  if (!repo) {
    throw new UserError(
      known
        ? `Saga '${name}' does not record its repository; pass --repo PATH.`
        : `No saga named '${name}' on this server; pass --repo PATH to clean up its worktrees anyway.`,
    );
  }
  const result = await cleanupSagaWorktrees({
    repo: path.resolve(repo),
    sagaName: name,
    force: bool(args, 'force'),
  });
  for (const removed of result.removed) io.out(`Removed worktree ${removed}`);
  for (const kept of result.kept) io.out(`Kept ${kept.path}: ${kept.reason}`);
  if (result.removed.length === 0 && result.kept.length === 0) io.out(`No worktrees of saga '${name}' left.`);
  if (result.kept.length > 0) {
    io.err('Worktrees with uncommitted work were kept; commit or discard it, or run again with --force.');
    return 1;
  }
  return 0;
}
