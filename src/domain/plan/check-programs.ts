/**
 * The programs a plan's checks run, so a check that cannot run here is found at plan approval instead of
 * after paid attempts. Each check is a `/bin/sh -c` line: the first word of each simple command is its
 * program (after `VAR=value` assignments and redirections); shell builtins and keywords need nothing, and a
 * word the shell expands (`$X`, `` `…` ``, globs) cannot be known before it runs. Pure.
 */
import { filesOutsideOwns } from './owns';
import type { Plan } from './schema';

/** What the shell runs itself: always there. */
const BUILTINS = new Set(
  (
    '. : [ [[ alias bg break cd command continue echo eval exec exit export false fg getopts hash jobs ' +
    'kill local printf pwd read readonly return set shift source test times trap true type ulimit umask ' +
    'unalias unset wait'
  ).split(' '),
);
/** Words that open or join compound commands: the program is the word after them. */
const PREFIX_KEYWORDS = new Set(['!', '{', 'if', 'then', 'else', 'elif', 'do', 'while', 'until', 'time']);
/** Compound commands whose words are no program (`for x in …`, `case …`), and closing keywords. */
const SKIP_KEYWORDS = new Set(['for', 'case', 'esac', 'fi', 'done', '}', 'in', 'function', 'select']);

/** The command line's words and operators, quotes removed; a word keeps `$`/`` ` `` when it expands. */
function tokens(command: string): { word: string; expands: boolean }[] {
  const out: { word: string; expands: boolean }[] = [];
  let word = '';
  let started = false;
  let expands = false;
  const end = () => {
    if (started) out.push({ word, expands });
    word = '';
    started = false;
    expands = false;
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === "'") {
      const close = command.indexOf("'", i + 1);
      const stop = close < 0 ? command.length : close;
      word += command.slice(i + 1, stop);
      started = true;
      i = stop;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < command.length && command[j] !== '"'; j++) {
        if (command[j] === '\\') j++;
        else if (command[j] === '$' || command[j] === '`') expands = true;
        word += command[j] ?? '';
      }
      started = true;
      i = j;
    } else if (c === '\\') {
      word += command[i + 1] ?? '';
      started = true;
      i++;
    } else if (/\s/.test(c)) end();
    else if (c === '<' || c === '>' || (c === '&' && command[i + 1] === '>')) {
      // A redirection (`>`, `>>`, `2>&1`, `&>`, `<<`): one token; the word after it is a file or fd.
      end();
      while ('<>&|'.includes(command[i + 1] ?? ' ')) i++;
      out.push({ word: '>', expands: false });
    } else if ('|&;()'.includes(c)) {
      end();
      out.push({ word: c, expands: false });
    } else {
      if ('$`*?['.includes(c)) expands = true;
      word += c;
      started = true;
    }
  }
  end();
  return out;
}

const OPERATORS = new Set(['|', '&', ';', '(', ')']);

/** The program of each simple command in `command` (known ones only), in order, without duplicates. */
export function checkPrograms(command: string): string[] {
  const programs: string[] = [];
  let atStart = true;
  let skipping = false;
  let redirect = false;
  for (const t of tokens(command)) {
    if (OPERATORS.has(t.word)) {
      atStart = true;
      skipping = false;
      continue;
    }
    if (t.word === '>') {
      redirect = true; // the next word is a file, not a program
      continue;
    }
    if (redirect) {
      redirect = false;
      continue;
    }
    if (!atStart || skipping) continue;
    if (/^\d+$/.test(t.word) && !t.expands) continue; // `2>file`: the fd before a redirection
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(t.word)) continue; // an assignment before the program
    if (PREFIX_KEYWORDS.has(t.word)) continue;
    if (SKIP_KEYWORDS.has(t.word)) {
      skipping = true;
      continue;
    }
    atStart = false;
    if (t.expands || !t.word || BUILTINS.has(t.word) || programs.includes(t.word)) continue;
    programs.push(t.word);
  }
  return programs;
}

/** Every check of the plan with where it is: exit criteria, milestone validation, task validation. */
export function planChecks(plan: Plan): { where: string; check: string }[] {
  return [
    ...plan.exit_criteria.map((c) => ({ where: `exit criterion ${c.id}`, check: c.check })),
    ...plan.milestones.flatMap((m) => [
      ...m.validation.map((v) => ({ where: `milestone ${m.id} validation`, check: v.check })),
      ...m.tasks.flatMap((t) => t.validation.map((v) => ({ where: `task ${m.id}.${t.id}`, check: v.check }))),
    ]),
  ];
}

/** A relative program path some task of the plan owns: the plan creates it, so its absence is no finding. */
export function ownedByPlan(plan: Plan, program: string): boolean {
  const rel = program.replace(/^\.\//, '');
  const owns = plan.milestones.flatMap((m) => m.tasks.flatMap((t) => t.owns));
  return !program.startsWith('/') && filesOutsideOwns(owns, [rel]).length === 0;
}

export interface UnresolvedCheck {
  where: string;
  check: string;
  program: string;
  why: string;
}

/** The approval question's lines naming the checks that cannot run here (none: no lines). */
export function unresolvedCheckLines(found: readonly UnresolvedCheck[]): string[] {
  if (!found.length) return [];
  return [
    `Warning: ${found.length} check${found.length > 1 ? 's' : ''} cannot run here (their program is missing); ` +
      `approved as they are, each would fail with exit 127 and be put to you then. Revise to fix them:`,
    ...found.map((f) => `- ${f.where}: \`${f.check}\`: ${f.program} ${f.why}`),
  ];
}
