/**
 * A small scripted agent (one CommonJS file, no dependencies, so it runs confined from wherever it is
 * written), used as a custom-command profile: neither claude nor demo.
 * - implementer: sleeps STAMP_SLEEP_MS, tries a commit of its own, then writes `stamps/<task>.json` in its
 *   worktree with its own start and end times, what its prompt said about committing and how the commit went;
 * - reviewer `plan`: reads the spec tree where its prompt says it is (a "## Spec tree" section of the prompt
 *   itself; else the saga directory the prompt file lives in) and lists the first line of each file it read
 *   as a cosmetic finding; a spec tree it cannot read is a critical one;
 * - reviewer `task`: a clean review;
 * - planner, the earlier protocol (no `criteria` stage): `questions` none, `criteria` NOTHING (no report, no
 *   JSON, exit 0), `plan` the plan in `.saga/old-planner-plan.json` of its working directory.
 */

/** What each implementer run writes. */
export interface Stamp {
  task: string;
  pid: number;
  start: number;
  end: number;
  prompt: { saysSagaCommits: boolean; saysMayCommit: boolean };
  ownCommit: string;
}

export const SCRIPTED_AGENT = String.raw`'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const env = process.env;
const start = Date.now();
const prompt = fs.readFileSync(env.SAGA_PROMPT_FILE, 'utf8');
const answer = (obj) => fs.writeFileSync(env.SAGA_REPORT_FILE, JSON.stringify(obj));

function implementer() {
  setTimeout(() => {
    const r = spawnSync('git', ['-c', 'user.name=a', '-c', 'user.email=a@b.invalid', 'commit', '--allow-empty', '-m', 'mine'], { encoding: 'utf8' });
    const ownCommit = r.status === 0 ? 'committed' : 'refused: ' + (r.stderr || String(r.error)).trim().split('\n').pop();
    fs.mkdirSync('stamps', { recursive: true });
    const task = env.SAGA_TASK_ID;
    fs.writeFileSync(path.join('stamps', task.replace(/[^0-9a-z]/gi, '-') + '.json'), JSON.stringify({
      task, pid: process.pid, start, end: Date.now(),
      prompt: { saysSagaCommits: /saga\s+commits/i.test(prompt), saysMayCommit: /you may commit/i.test(prompt) },
      ownCommit,
    }));
  }, Number(env.STAMP_SLEEP_MS || 0));
}

/** [path, text] of each spec tree file, from the prompt's own section or from the saga directory. */
function specTree() {
  const at = prompt.indexOf('\n## Spec tree\n');
  if (at >= 0) {
    const files = [];
    const fenced = /^### (.+)\n\n~~~~markdown\n([\s\S]*?)\n~~~~$/gm;
    const section = prompt.slice(at);
    for (let m; (m = fenced.exec(section)); ) files.push([m[1], m[2]]);
    return files;
  }
  // The prompt file is <saga directory>/runs/<run>/prompt.md.
  const sagaDir = path.dirname(path.dirname(path.dirname(env.SAGA_PROMPT_FILE)));
  const files = ['SAGA.md'];
  const milestones = path.join(sagaDir, 'milestones');
  for (const m of fs.readdirSync(milestones))
    for (const t of fs.readdirSync(path.join(milestones, m, 'tasks'))) files.push(path.join('milestones', m, 'tasks', t));
  return files.map((f) => [f, fs.readFileSync(path.join(sagaDir, f), 'utf8')]);
}

function planReview() {
  let read;
  try {
    read = specTree();
  } catch (e) {
    console.log('CRITICAL:\n- cannot read the spec tree: ' + e.message + '\nMAJOR: None\nMINOR-substantive: None\nMINOR-cosmetic: None');
    return;
  }
  const lines = read.map(([f, text]) => '- read ' + f + ': ' + text.split('\n')[0]);
  console.log('CRITICAL: None\nMAJOR: None\nMINOR-substantive: None\nMINOR-cosmetic:\n' + lines.join('\n'));
}

function planner() {
  if (env.SAGA_STAGE === 'questions') return answer({ problem: 'Three stamps.', questions: [] });
  if (env.SAGA_STAGE === 'criteria') return; // the earlier protocol has no such stage: nothing at all
  answer(JSON.parse(fs.readFileSync('.saga/old-planner-plan.json', 'utf8')));
}

if (env.SAGA_ROLE === 'implementer') implementer();
else if (env.SAGA_ROLE === 'reviewer' && env.SAGA_STAGE === 'plan') planReview();
else if (env.SAGA_ROLE === 'reviewer') console.log('CRITICAL: None\nMAJOR: None\nMINOR-substantive: None\nMINOR-cosmetic: None');
else if (env.SAGA_ROLE === 'planner') planner();
else { console.error('unexpected role ' + env.SAGA_ROLE); process.exit(1); }
`;
