#!/usr/bin/env node
/**
 * Deterministic demo agent for `saga demo` and the tests: a real process that follows the saga agent
 * protocol (DESIGN.md 4.4 and 4.6) without any AI. Plain Node.js, CommonJS, no dependencies.
 *
 * Inputs (environment): SAGA_ROLE, SAGA_STAGE, SAGA_TASK_ID, SAGA_ATTEMPT, SAGA_PROMPT_FILE,
 * SAGA_REPORT_FILE. The machine context is the LAST ```json fenced block of the prompt file.
 *
 * Behaviour comes from a script file: $SAGA_DEMO_SCRIPT, else `.saga/demo-script.json` in the working
 * directory (the worktree, so a demo repo commits it). A missing script means defaults everywhere.
 *
 * {
 *   "tasks": {
 *     "1.1": {                                  // task id as in the plan ("m1t1" works too)
 *       "attempts": [                           // attempt N uses attempts[N-1]; the last one repeats
 *         { "files": { "src/greet.js": "content" },   // written relative to the working directory
 *           "delete": ["old.js"],                     // optional: files removed
 *           "exit": 0,                                // exit code (default 0)
 *           "sleep_ms": 0,                            // pause before exiting, printing progress
 *           "hang": false,                            // never exit and print nothing (idle / cancel tests)
 *           "commit": false,                          // git add -A && git commit in the working directory
 *           "report": { "status": "done" },           // written to SAGA_REPORT_FILE
 *           "usage": { "input_tokens": 1000, "output_tokens": 200, "cost_usd": 0.01 } }
 *       ]
 *     }
 *   },
 *   "planner": {
 *     "problem": "One paragraph.",             // with "shape" and "unknowns": the round-1 restatement
 *     "questions": [ [ { "id", "text", "options", "recommended", "substantive", "why" } ], [ ... ] ],
 *                                               // round r (context.round, 1-based) asks questions[r-1]; none after
 *     "decisions": [ ... ],                     // returned with every questions answer (autonomous mode)
 *     "criteria": { "exit_criteria": [ ... ] }, // stage `criteria`; default: the plan's exit_criteria
 *     "plan": { ...plan JSON (DESIGN.md 4.3)... },
 *     "revise": { ...plan JSON... },            // stage `revise`; default: plan
 *     "usage": { "cost_usd": 0.3 }              // optional: printed by every planner run (as for tasks)
 *   },
 *   "reviewer": {                               // iteration i (context.iteration, else SAGA_ATTEMPT) uses [i-1];
 *     "task": ["CRITICAL: None\nMAJOR:\n- x"],   // past the end, or when absent: a clean review
 *     "plan": [ ... ]
 *   },
 *   "resolver": { "mode": "union" | "fail" }    // union keeps both sides of every conflict; fail exits 1
 * }
 *
 * If SAGA_DEMO_LOG is set, one JSON line {role, stage, taskId, attempt, pid} is appended per invocation.
 * An implementer task missing from the script prints a note and exits 0 without changes.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const env = process.env;
const role = env.SAGA_ROLE || 'implementer';
const stage = env.SAGA_STAGE || '';
const taskId = env.SAGA_TASK_ID || '';
const attempt = Math.max(1, Number(env.SAGA_ATTEMPT) || 1);
const cwd = process.cwd();

const CLEAN_REVIEW = [
  'CRITICAL: None',
  'MAJOR: None',
  'MINOR-substantive: None',
  'MINOR-cosmetic: None',
  'SUGGESTION-substantive: None',
  'SUGGESTION-cosmetic: None',
  '',
].join('\n');

function say(line) {
  process.stdout.write(`[demo-agent] ${line}\n`);
}

function fail(message) {
  process.stderr.write(`[demo-agent] error: ${message}\n`);
  process.exit(1);
}

function readJson(file, what) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    if (err.code === 'ENOENT') return null;
    return fail(`cannot read ${what} ${file}: ${err.message}`);
  }
}

/** The last ```json block of the prompt file, parsed; {} when there is none. */
function readContext() {
  if (!env.SAGA_PROMPT_FILE) return {};
  let text;
  try {
    text = fs.readFileSync(env.SAGA_PROMPT_FILE, 'utf8');
  } catch {
    return {};
  }
  const blocks = [...text.matchAll(/```json[^\S\n]*\r?\n([\s\S]*?)\r?\n?```/g)];
  if (blocks.length === 0) return {};
  try {
    return JSON.parse(blocks[blocks.length - 1][1]);
  } catch (err) {
    return fail(`the context block of ${env.SAGA_PROMPT_FILE} is not JSON: ${err.message}`);
  }
}

function writeReport(value) {
  if (!env.SAGA_REPORT_FILE) return say('no SAGA_REPORT_FILE; report not written');
  const text = typeof value === 'string' ? value : `${JSON.stringify(value, null, 2)}\n`;
  fs.writeFileSync(env.SAGA_REPORT_FILE, text);
}

/** A path from the script, kept inside the working directory. */
function inside(relative) {
  const full = path.resolve(cwd, relative);
  if (full !== cwd && !full.startsWith(cwd + path.sep))
    fail(`path '${relative}' leaves the working directory`);
  return full;
}

function pick(list, index) {
  if (!Array.isArray(list) || list.length === 0) return undefined;
  return list[Math.min(index, list.length) - 1];
}

function printUsage(usage) {
  const u = usage || {};
  const line = {
    type: 'result',
    subtype: 'success',
    usage: { input_tokens: u.input_tokens ?? 1000, output_tokens: u.output_tokens ?? 200 },
    total_cost_usd: u.cost_usd ?? 0,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function taskScript(tasks) {
  if (!tasks) return undefined;
  if (tasks[taskId]) return tasks[taskId];
  const key = /^m(\d+)t(\d+)$/.exec(taskId);
  return key ? tasks[`${key[1]}.${key[2]}`] : undefined;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function implement(script) {
  const task = taskScript(script.tasks);
  if (!task) {
    say(`task ${taskId || '(none)'} is not in the demo script; nothing to do`);
    return 0;
  }
  const step = pick(task.attempts, attempt) || {};
  say(`task ${taskId}, attempt ${attempt}: starting`);
  for (const [file, content] of Object.entries(step.files || {})) {
    const full = inside(file);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, content);
    say(`wrote ${file}`);
  }
  for (const file of step.delete || []) {
    fs.rmSync(inside(file), { force: true });
    say(`deleted ${file}`);
  }
  if (step.hang) {
    say('hanging (demo script says so)');
    // Silent forever: the idle timeout or a cancellation has to end this process.
    const forever = () => setTimeout(forever, 60_000);
    forever();
    return null;
  }
  let waited = 0;
  while (waited < (step.sleep_ms || 0)) {
    const slice = Math.min(200, step.sleep_ms - waited);
    await sleep(slice);
    waited += slice;
    say(`working... ${waited} ms`);
  }
  if (step.commit) {
    // The demo agent commits as itself, so no git identity needs to be configured.
    const git = (args) =>
      execFileSync(
        'git',
        ['-c', 'user.name=Saga demo agent', '-c', 'user.email=demo-agent@saga.invalid', ...args],
        {
          cwd,
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      );
    git(['add', '-A']);
    git(['commit', '-q', '--allow-empty', '-m', `demo agent: task ${taskId} attempt ${attempt}`]);
    say('committed');
  }
  if (step.report !== undefined) writeReport(step.report);
  printUsage(step.usage);
  const code = step.exit ?? 0;
  say(`done (exit ${code})`);
  return code;
}

function plan(script, context) {
  const planner = script.planner || {};
  if (planner.usage) printUsage(planner.usage);
  if (stage === 'questions') {
    const round = Math.max(1, Number(context.round) || 1);
    const rounds = Array.isArray(planner.questions) ? planner.questions : [];
    const questions = round <= rounds.length ? rounds[round - 1] : [];
    writeReport({
      problem: planner.problem || 'Demo problem statement.',
      ...(planner.shape ? { shape: planner.shape } : {}),
      ...(planner.unknowns ? { unknowns: planner.unknowns } : {}),
      questions,
      decisions: planner.decisions || [],
    });
    say(`planner questions round ${round}: ${questions.length} question(s)`);
    return 0;
  }
  if (stage === 'criteria') {
    const answer = planner.criteria || (planner.plan && { exit_criteria: planner.plan.exit_criteria });
    if (!answer) return fail('the demo script has no planner.criteria or planner.plan');
    writeReport(answer);
    say('planner criteria: exit criteria written');
    return 0;
  }
  if (stage === 'plan' || stage === 'revise') {
    const answer = stage === 'revise' ? planner.revise || planner.plan : planner.plan;
    if (!answer)
      return fail(`the demo script has no planner.${stage === 'revise' ? 'revise or planner.' : ''}plan`);
    writeReport(answer);
    say(`planner ${stage}: plan written`);
    return 0;
  }
  return fail(`unknown planner stage '${stage}'`);
}

function review(script, context) {
  const lists = script.reviewer || {};
  const iteration = Math.max(1, Number(context.iteration) || attempt);
  const list = lists[stage] || [];
  const findings = iteration <= list.length ? list[iteration - 1] : CLEAN_REVIEW;
  writeReport(findings.endsWith('\n') ? findings : `${findings}\n`);
  say(`reviewer ${stage} iteration ${iteration}: findings written`);
  return 0;
}

/** Removes conflict markers, keeping both sides (and dropping a diff3 base section). */
function unionResolve(text) {
  const out = [];
  let state = 'plain';
  for (const line of text.split(/(?<=\n)/)) {
    if (line.startsWith('<<<<<<< ')) state = 'ours';
    else if (state !== 'plain' && line.startsWith('||||||| ')) state = 'base';
    else if (state !== 'plain' && /^=======\r?\n?$/.test(line)) state = 'theirs';
    else if (state !== 'plain' && line.startsWith('>>>>>>> ')) state = 'plain';
    else if (state !== 'base') out.push(line);
  }
  return out.join('');
}

function resolve(script, context) {
  const mode = (script.resolver && script.resolver.mode) || 'union';
  const files = Array.isArray(context.conflictedFiles) ? context.conflictedFiles : [];
  if (mode === 'fail') {
    say(`resolver: giving up on ${files.length} conflicted file(s) (demo script says fail)`);
    return 1;
  }
  for (const file of files) {
    const full = inside(file);
    fs.writeFileSync(full, unionResolve(fs.readFileSync(full, 'utf8')));
    say(`resolved ${file} (union)`);
  }
  return 0;
}

async function main() {
  if (env.SAGA_DEMO_LOG) {
    const entry = { role, stage, taskId, attempt, pid: process.pid };
    fs.appendFileSync(env.SAGA_DEMO_LOG, `${JSON.stringify(entry)}\n`);
  }
  const scriptPath = env.SAGA_DEMO_SCRIPT
    ? path.resolve(cwd, env.SAGA_DEMO_SCRIPT)
    : path.join(cwd, '.saga', 'demo-script.json');
  const script = readJson(scriptPath, 'demo script') || {};
  const context = readContext();
  say(
    `${role}${stage ? `/${stage}` : ''} for task ${taskId || '-'} attempt ${attempt} (script: ${scriptPath})`,
  );
  switch (role) {
    case 'implementer':
      return implement(script);
    case 'planner':
      return plan(script, context);
    case 'reviewer':
      return review(script, context);
    case 'resolver':
      return resolve(script, context);
    default:
      return fail(`unknown SAGA_ROLE '${role}'`);
  }
}

main().then(
  (code) => {
    if (code !== null) process.exitCode = code;
  },
  (err) => fail(err && err.stack ? err.stack : String(err)),
);
