/** A preset's command line as saga runs it: resuming a session, capping a run's cost, inside the sandbox. Pure. */
import { AGENT_PRESETS } from './agent-presets';

/** The command that resumes a session of the preset `name`'s CLI, from the profile's own command; null if none. */
export function resumeCommandFor(name: string, command: readonly string[]): string[] | null {
  const resume = AGENT_PRESETS[name]?.resume;
  if (!resume) return null;
  const at = resume.before === undefined ? -1 : command.lastIndexOf(resume.before);
  return at < 0
    ? [...command, ...resume.args]
    : [...command.slice(0, at), ...resume.args, ...command.slice(at)];
}

/** The arguments that cap a run of the preset `name`'s CLI at `usd`; none without a cap or a flag for it. */
export function budgetArgsFor(name: string, usd: number | null | undefined): string[] {
  const args = AGENT_PRESETS[name]?.budgetArgs;
  if (!args || usd === null || usd === undefined) return [];
  // A CLI cap must be above 0 and not above what is left: down to a hundredth of a cent, at least that.
  const cap = Math.max(Math.floor(usd * 10_000), 1) / 10_000;
  return args.map((a) => a.replace('{usd}', String(cap)));
}

/** The command as it runs inside saga's sandbox: the preset's own sandbox flags swapped (see `insideSandbox`). */
export function commandInsideSandbox(name: string, command: readonly string[]): string[] {
  const swap = AGENT_PRESETS[name]?.insideSandbox;
  if (!swap) return [...command];
  if (swap.replace.length === 0) return [...command, ...swap.with];
  const at = command.findIndex((_, i) => swap.replace.every((arg, k) => command[i + k] === arg));
  return at < 0
    ? [...command]
    : [...command.slice(0, at), ...swap.with, ...command.slice(at + swap.replace.length)];
}
