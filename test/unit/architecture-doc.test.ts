/**
 * docs/ARCHITECTURE.md is the newcomer's map: every file it names must exist (a move that forgets the map fails
 * here), and the questions it promises to answer in one hop each have their row.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/project-root';

const DOC = readFileSync(path.join(PROJECT_ROOT, 'docs', 'ARCHITECTURE.md'), 'utf8');

describe('docs/ARCHITECTURE.md', () => {
  test('every src/, test/ and docs/ path it names exists', () => {
    const named = [...DOC.matchAll(/`((?:src|test|docs|bench|scripts)\/[\w./-]+)`/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(100);
    const missing = named
      .filter((p) => !p.includes('*') && !p.includes('<'))
      .filter((p) => !existsSync(path.join(PROJECT_ROOT, p.replace(/\/$/, ''))));
    expect([...new Set(missing)]).toEqual([]);
  });

  test.each([
    'Where is an agent launched?',
    'How is a milestone integrated?',
    'How does a Slack answer reach the workflow?',
    'Where is a flag parsed?',
    'Where is the bwrap command built?',
    'What does the saga board read, and how often?',
  ])('answers "%s" in its own row', (question) => {
    const row = DOC.split('\n').find((line) => line.startsWith(`| ${question} |`));
    expect(row).toMatch(/`src\/[\w/.-]+\.ts`/);
  });
});
