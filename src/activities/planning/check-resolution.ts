/**
 * The `resolvePlanChecks` activity: each plan check's programs looked up where the check will run (a
 * program name on the PATH checks get, a path in the repository), so a check that cannot run is named at
 * plan approval, before any agent is paid. What counts is decided in src/domain/plan/check-programs.ts.
 */
import { isExecutableFile, onPath } from '../process/on-path';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { commandEnvironment } from '../../domain/config/agent-env';
import {
  checkPrograms,
  ownedByPlan,
  planChecks,
  type UnresolvedCheck,
} from '../../domain/plan/check-programs';
import type { Plan } from '../../domain/plan';

export interface ResolvePlanChecksInput {
  repo: string;
  plan: Plan;
  /** Worker variables the checks also get (saga.config.yaml `pass_env`): a PATH among them counts. */
  passEnv?: string[];
}

/** Most findings returned (they go into the approval question). */
const MAX_FOUND = 20;

/** Why `program` cannot run from `cwd` with `pathDirs`; null when it can (or the plan creates it). */
async function whyNot(program: string, plan: Plan, repo: string, pathDirs: string[]): Promise<string | null> {
  if (program.includes('/')) {
    const file = path.resolve(repo, program);
    if (isExecutableFile(file)) return null;
    const exists = await fs.stat(file).then(
      () => true,
      () => false,
    );
    if (exists) return 'is not executable (exit 126)';
    return ownedByPlan(plan, program) ? null : 'does not exist and no task owns it';
  }
  return onPath(program, pathDirs.join(path.delimiter)) ? null : 'is not on the PATH checks run with';
}

export function createCheckResolutionActivities() {
  return {
    async resolvePlanChecks(input: ResolvePlanChecksInput): Promise<UnresolvedCheck[]> {
      const env = commandEnvironment(process.env, {}, input.passEnv ?? []);
      const pathDirs = (env.PATH ?? '').split(path.delimiter).filter((d) => path.isAbsolute(d));
      const found: UnresolvedCheck[] = [];
      const known = new Map<string, string | null>();
      for (const { where, check } of planChecks(input.plan)) {
        for (const program of checkPrograms(check)) {
          if (!known.has(program))
            known.set(program, await whyNot(program, input.plan, input.repo, pathDirs));
          const why = known.get(program);
          if (why && found.length < MAX_FOUND) found.push({ where, check, program, why });
        }
      }
      return found;
    },
  };
}
