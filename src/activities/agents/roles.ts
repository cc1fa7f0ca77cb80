/**
 * Agents in a role (planner, implementer, reviewer, resolver): the prompt comes from a template file in
 * `templates/`, so prompts are edited as text, not code. The machine-readable context goes below it.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { plannerMemory, renderPlannerMemory, type PlannerMemoryItem } from '../../domain/planning/memory';
import { classifyReview, type ReviewCounts } from '../../domain/fleet/review';
import { processEndWhy } from '../../domain/text/process-end';
import type { createAgentActivities, RunAgentInput, RunAgentResult } from './';
import { findSagaRoot } from '../config-loader';
import { readRepoMemory } from '../planning/memory';
import { specTreeText } from './spec-tree-text';

type Agents = ReturnType<typeof createAgentActivities>;
export type RoleAgentInput = Omit<RunAgentInput, 'prompt'> & {
  template: string;
  /**
   * Planner runs: the repository whose earlier sagas' decisions and learnings go into the prompt
   * (`{{memory}}`, cited) and the context (`memory`).
   */
  memory?: { repo: string };
};

/** What `{{request}}` says when the saga did not come from an issue. */
export const TYPED_REQUEST = 'The request was typed by the user: the goal above.';

/** `{{key}}` is replaced by the context value of that key (objects as JSON); unknown keys stay visible. */
export function renderTemplate(template: string, context: Record<string, unknown>): string {
  return template.replace(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g, (whole, key: string) => {
    const value = context[key];
    if (value === undefined || value === null) return whole;
    return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  });
}

export function createRoleAgentActivities(deps: {
  agents: Agents;
  templatesDir?: string;
  sagaHome?: string;
}) {
  const templatesDir = deps.templatesDir ?? path.join(findSagaRoot(), 'templates');

  /** Memory: what earlier sagas of the repo decided and learned, each with its citation. */
  async function withMemory(input: RoleAgentInput): Promise<Record<string, unknown>> {
    const context = input.context ?? {};
    if (!input.memory) return context;
    const entries = deps.sagaHome ? await readRepoMemory(deps.sagaHome, input.memory.repo) : [];
    return { ...context, memory: plannerMemory(entries, input.sagaName) };
  }

  async function runRoleAgent(input: RoleAgentInput): Promise<RunAgentResult> {
    if (!/^[a-z-]+$/.test(input.template)) {
      throw ApplicationFailure.nonRetryable(
        `Invalid prompt template name '${input.template}'`,
        'BadTemplate',
      );
    }
    const file = path.join(templatesDir, `${input.template}.md`);
    const template = await fs.readFile(file, 'utf8').catch(() => {
      throw ApplicationFailure.nonRetryable(`Prompt template ${file} is missing`, 'BadTemplate');
    });
    const { template: _name, memory: _memory, ...rest } = input;
    // The text goes into the prompt once, fenced and marked untrusted (tracker/intake-source.ts),
    // not again unfenced in the context block.
    const { request, ...context } = await withMemory(input);
    const memory = context.memory as PlannerMemoryItem[] | undefined;
    const prompt = renderTemplate(template, {
      ...context,
      request: typeof request === 'string' ? request : TYPED_REQUEST,
      // A planner step run without a repo to remember (none today) still gets a readable line.
      memory: memory ? renderPlannerMemory(memory) : 'Not consulted for this step.',
      // Prompt text only (not the context block): the plan reviewer cannot see the saga directory.
      ...(template.includes('{{spec_tree}}')
        ? { spec_tree: (await specTreeText(input.sagaDir)) ?? 'Not written yet: review the plan alone.' }
        : {}),
    });
    return deps.agents.runAgent({ ...rest, context, prompt });
  }

  return {
    runRoleAgent,

    /** A fresh reviewer session; its findings are classified here so history holds counts, not text. */
    async runReviewer(
      input: Omit<RoleAgentInput, 'template' | 'role' | 'attachments'>,
    ): Promise<{ counts: ReviewCounts; findingsPath: string; summary: string; exitCode: number | null }> {
      const run = await runRoleAgent({
        ...input,
        template: `reviewer-${input.stage}`,
        role: 'reviewer',
        attachments: [],
      });
      const findings = run.findings ?? '';
      const findingsPath = path.join(path.dirname(run.transcriptPath), 'findings.md');
      await fs.writeFile(findingsPath, findings);
      const counts =
        run.exitCode === 0
          ? classifyReview(findings)
          : { critical: 1, major: 0, substantive: 0, cosmetic: 0 };
      // The summary also goes back to the author agent, whose sandbox hides the saga directory: the path is for
      // the user, and says so.
      const summary =
        findings.length > 4000
          ? `${findings.slice(0, 4000)}\n[... the rest is in ${findingsPath} (the saga's record, for the user: not visible in an agent's sandbox)]`
          : findings;
      return {
        counts,
        findingsPath,
        summary:
          run.exitCode === 0
            ? summary
            : `CRITICAL: the reviewer failed (${processEndWhy(run)}); its transcript: ${run.transcriptPath} (the saga's record, for the user: not visible in an agent's sandbox)`,
        exitCode: run.exitCode,
      };
    },
  };
}
