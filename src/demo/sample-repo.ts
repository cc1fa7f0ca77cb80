/**
 * The sample repo `saga demo` and the tests run sagas on: a tiny Node library, a greeting plan, and a
 * script for the deterministic demo agent (one task fails its first attempt, one review round).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { PROJECT_ROOT } from '../project-root';

export const GREETING_PLAN_FILE = path.join(PROJECT_ROOT, 'test', 'fixtures', 'plans', 'greeting.yaml');

const GREET_OK = `'use strict';\nfunction greet(name = 'world') {\n  return \`Hello, \${name}!\`;\n}\nmodule.exports = { greet };\n`;
const GREET_BUGGY = `'use strict';\nfunction greet(name) {\n  return 'Hello ' + name;\n}\nmodule.exports = { greet };\n`;
const GREET_TEST = `const test = require('node:test');\nconst assert = require('node:assert');\nconst { greet } = require('../src/greet');\ntest('greets by name', () => assert.strictEqual(greet('Ada'), 'Hello, Ada!'));\n`;
const DEFAULT_TEST = `const test = require('node:test');\nconst assert = require('node:assert');\nconst { greet } = require('../src/greet');\ntest('greets the world by default', () => assert.strictEqual(greet(), 'Hello, world!'));\n`;
const CLI = `#!/usr/bin/env node\n'use strict';\nconst { greet } = require('../src/greet');\nconsole.log(greet(process.argv[2]));\n`;
const README_FIXED = `# Greeting sample\n\nA tiny library the saga demo extends.\n\n## Usage\n\n\`\`\`sh\nnode bin/greet.js Ada   # prints: Hello, Ada!\n\`\`\`\n`;
const CLI_TEST = `const test = require('node:test');\nconst assert = require('node:assert');\nconst { execFileSync } = require('node:child_process');\nconst path = require('node:path');\ntest('prints the greeting', () => {\n  const out = execFileSync(process.execPath, [path.join(__dirname, '..', 'bin', 'greet.js'), 'Ada'], { encoding: 'utf8' });\n  assert.strictEqual(out.trim(), 'Hello, Ada!');\n});\n`;

export interface SampleRepoOptions {
  /** Task 1.1 writes a buggy greet() first, so its first validation fails. */
  failFirstAttempt?: boolean;
  /** The reviewer asks for one revision of task results (quality-locked runs). */
  reviewRound?: boolean;
  /** Planner question rounds (when no --plan is given). */
  questionRounds?: number;
  /** Extra demo-script entries merged over the defaults. */
  script?: Record<string, unknown>;
  /** Extra saga.config.yaml content (YAML text) appended. */
  configExtra?: string;
}

export function greetingPlan(): Record<string, unknown> {
  return YAML.parse(readFileSync(GREETING_PLAN_FILE, 'utf8')) as Record<string, unknown>;
}

export function demoScript(options: SampleRepoOptions = {}): Record<string, unknown> {
  const rounds = options.questionRounds ?? 2;
  const questions = [
    [
      {
        id: 'style',
        text: 'How should the greeting be punctuated?',
        options: ['Hello, NAME!', 'Hello NAME'],
        recommended: 0,
        substantive: true,
        why: 'It is the output contract.',
      },
      {
        id: 'default',
        text: 'What should greet() say without a name?',
        options: ['Hello, world!', 'an error'],
        recommended: 0,
        substantive: true,
      },
    ],
    [
      {
        id: 'cli',
        text: 'Should the CLI print to stdout or stderr?',
        options: ['stdout', 'stderr'],
        recommended: 0,
        substantive: false,
      },
    ],
  ].slice(0, rounds);
  // Each finished attempt says what it did, as a real agent's report would: REPORT.md quotes it.
  const done = (summary: string) => ({ status: 'done', summary });
  return {
    tasks: {
      '1.1': {
        attempts: [
          ...(options.failFirstAttempt
            ? [{ files: { 'src/greet.js': GREET_BUGGY, 'test/greet.test.js': GREET_TEST } }]
            : []),
          {
            files: { 'src/greet.js': GREET_OK, 'test/greet.test.js': GREET_TEST },
            report: done('Added greet(name) in src/greet.js with its unit test.'),
          },
        ],
      },
      '1.2': {
        attempts: [
          {
            files: { 'test/greet-default.test.js': DEFAULT_TEST },
            report: done('Covered the default name with test/greet-default.test.js.'),
          },
        ],
      },
      '2.1': {
        attempts: [
          {
            files: { 'bin/greet.js': CLI, 'test/cli.test.js': CLI_TEST },
            report: done('Added bin/greet.js, which prints greet() of its first argument, with a CLI test.'),
          },
        ],
      },
      // The issue the demo user reports at acceptance becomes task 3.1.
      '3.1': {
        attempts: [
          {
            files: { 'README.md': README_FIXED },
            report: done('The README now shows how to run bin/greet.js.'),
          },
        ],
      },
    },
    planner: {
      problem: 'The sample library cannot greet anyone yet; add greet(name) and a CLI that prints it.',
      questions,
      plan: greetingPlan(),
    },
    reviewer: options.reviewRound
      ? { task: ['CRITICAL: None\nMAJOR:\n- please double-check the edge cases\n'] }
      : {},
    resolver: { mode: 'union' },
    ...options.script,
  };
}

function git(cwd: string, args: string[]): void {
  execFileSync('git', ['-c', 'user.name=Saga Demo', '-c', 'user.email=demo@saga.local', ...args], {
    cwd,
    stdio: 'ignore',
  });
}

/** Creates the sample repo (a git repo on `main` with one commit) and returns its path. */
export function createSampleRepo(dir: string, options: SampleRepoOptions = {}): string {
  mkdirSync(path.join(dir, '.saga'), { recursive: true });
  mkdirSync(path.join(dir, 'src'), { recursive: true });
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify(
      { name: 'greeting-sample', version: '1.0.0', private: true, scripts: { test: 'node --test' } },
      null,
      2,
    ),
  );
  writeFileSync(path.join(dir, 'README.md'), '# Greeting sample\n\nA tiny library the saga demo extends.\n');
  writeFileSync(path.join(dir, 'src', 'index.js'), "'use strict';\nmodule.exports = {};\n");
  writeFileSync(path.join(dir, '.saga', 'demo-script.json'), JSON.stringify(demoScript(options), null, 2));
  writeFileSync(
    path.join(dir, 'saga.config.yaml'),
    `# Agent profiles for this repo (README: Plans, agents and configuration). The demo agent needs no API key.\ndefault_agent: demo\nattempts: 3\n${options.configExtra ?? ''}`,
  );
  git(dir, ['init', '-q', '-b', 'main']);
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'Sample repo']);
  return dir;
}
