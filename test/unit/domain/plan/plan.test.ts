import * as fs from 'fs';
import * as path from 'path';
import fc from 'fast-check';
import YAML from 'yaml';
import { findTask, planSummary, taskRefsInOrder, validatePlan, type Plan } from '../../../../src/domain/plan';
import { parsePlanText } from '../../../../src/domain/plan/parse-text';
import { PROJECT_ROOT } from '../../../../src/project-root';

const FIXTURE = path.join(PROJECT_ROOT, 'test', 'fixtures', 'plans', 'greeting.yaml');
const fixtureText = fs.readFileSync(FIXTURE, 'utf8');
/** Loosely typed on purpose: tests break the plan in ways its type forbids. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type RawPlan = Record<string, any>;
const fixtureRaw = (): RawPlan => YAML.parse(fixtureText);

/** The fixture as a plain object, changed by `edit`, then validated as `plan.yaml`. */
function errorsAfter(edit: (raw: RawPlan) => void): string[] {
  const raw = fixtureRaw();
  edit(raw);
  const result = validatePlan(raw, 'plan.yaml');
  if (result.ok) throw new Error('expected the edited plan to be rejected');
  return result.errors;
}

function validPlan(): Plan {
  const result = parsePlanText(fixtureText, 'greeting.yaml');
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.plan;
}

const DESIGN_EXAMPLE = `
name: add-greeting               # optional slug
problem: One paragraph.
scope: { in: [greet function], out: [i18n], delegated: [] }
exit_criteria:
  - { id: E1, text: "Greeting works end to end", check: "npm test" }
milestones:
  - id: 1
    slug: core
    title: Core library
    depends_on: []               # milestone ids
    goal: What it delivers.
    validation:
      - { text: "unit tests pass", check: "npm test" }
    tasks:
      - id: 1                    # task 1.1
        slug: add-greet
        title: Add greet()
        depends_on: []           # task refs like "1.2"
        scope: What this worker does.
        owns: ["src/greet.js", "test/greet.test.js"]
        interfaces: Signatures other tasks rely on.
        validation_method: unit tests
        validation:
          - { text: "greet test passes", check: "node --test test/greet.test.js" }
        evidence: Named test output.
        agent: claude            # optional profile override
`;

describe('valid plans', () => {
  test('the plan file example of the README passes', () => {
    const result = parsePlanText(DESIGN_EXAMPLE, 'plan.yaml');
    expect(result).toMatchObject({
      ok: true,
      plan: { name: 'add-greeting', milestones: [{ id: 1, slug: 'core' }] },
    });
    if (result.ok) expect(result.plan.milestones[0].tasks[0].agent).toBe('claude');
  });

  test('the greeting fixture passes, as YAML and as JSON', () => {
    const plan = validPlan();
    expect(taskRefsInOrder(plan)).toEqual(['1.1', '1.2', '2.1']);
    const asJson = parsePlanText(JSON.stringify(fixtureRaw()), 'plan.json');
    expect(asJson).toEqual({ ok: true, plan });
    // JSON content is recognised without the extension too.
    expect(parsePlanText(JSON.stringify(fixtureRaw()), 'planner-output')).toEqual({ ok: true, plan });
  });

  test('defaults fill scope lists and depends_on', () => {
    const raw = fixtureRaw();
    delete raw.scope;
    delete raw.milestones[0].depends_on;
    delete raw.milestones[0].tasks[0].depends_on;
    const result = validatePlan(raw, 'plan.yaml');
    expect(result.ok && result.plan.scope).toEqual({ in: [], out: [], delegated: [] });
    expect(result.ok && result.plan.milestones[0].tasks[0].depends_on).toEqual([]);
  });

  test('a task may depend on tasks of milestones its milestone depends on, transitively', () => {
    const raw = fixtureRaw();
    raw.milestones.push({
      ...raw.milestones[1],
      id: 3,
      slug: 'docs',
      depends_on: [2],
      tasks: [
        { ...raw.milestones[1].tasks[0], slug: 'docs', depends_on: ['1.2', '2.1'], owns: ['README.md'] },
      ],
    });
    expect(validatePlan(raw, 'plan.yaml').ok).toBe(true);
  });

  test('the same path may be owned by tasks of different milestones', () => {
    const raw = fixtureRaw();
    raw.milestones[1].tasks[0].owns.push('src/greet.js');
    expect(validatePlan(raw, 'plan.yaml').ok).toBe(true);
  });
});

describe('schema errors name file, path and expectation', () => {
  test('owns given as a string', () => {
    expect(errorsAfter((p) => (p.milestones[0].tasks[1].owns = 'src/greet.js'))).toEqual([
      'plan.yaml: milestones[0].tasks[1].owns: expected an array of paths, got a string',
    ]);
  });

  test('an unquoted YAML task ref is a number, and the message says to quote it', () => {
    const text = fixtureText.replace(/depends_on: \['1\.1'\]/, 'depends_on: [1.1]');
    expect(parsePlanText(text, 'plan.yaml')).toEqual({
      ok: false,
      errors: [
        'plan.yaml: milestones[0].tasks[1].depends_on[0]: expected a task ref string like "1.2" (quote it in YAML), got a number',
      ],
    });
  });

  test('missing, empty and non-array milestones', () => {
    expect(errorsAfter((p) => delete p.milestones)).toEqual([
      'plan.yaml: milestones: missing; expected a non-empty array of milestones',
    ]);
    expect(errorsAfter((p) => (p.milestones = []))).toEqual([
      'plan.yaml: milestones: expected a non-empty array of milestones, got an empty array',
    ]);
    expect(errorsAfter((p) => (p.milestones[1].tasks = []))).toEqual([
      'plan.yaml: milestones[1].tasks: expected a non-empty array of tasks, got an empty array',
    ]);
  });

  test('empty checks anywhere', () => {
    expect(errorsAfter((p) => (p.exit_criteria[1].check = '  '))).toEqual([
      'plan.yaml: exit_criteria[1].check: expected a non-empty command, got an empty string',
    ]);
    expect(errorsAfter((p) => (p.milestones[0].validation[0].check = ''))).toEqual([
      'plan.yaml: milestones[0].validation[0].check: expected a non-empty command, got an empty string',
    ]);
    expect(errorsAfter((p) => delete p.milestones[1].tasks[0].validation[0].check)).toEqual([
      'plan.yaml: milestones[1].tasks[0].validation[0].check: missing; expected a non-empty command',
    ]);
  });

  test('owned paths must be relative and stay inside the repo', () => {
    const expected = 'expected a relative path inside the repo (no leading "/", no "..")';
    expect(
      errorsAfter((p) => (p.milestones[0].tasks[0].owns = ['/etc/passwd', 'src/../../x', 'C:\\win'])),
    ).toEqual([
      `plan.yaml: milestones[0].tasks[0].owns[0]: ${expected}, got "/etc/passwd"`,
      `plan.yaml: milestones[0].tasks[0].owns[1]: ${expected}, got "src/../../x"`,
      `plan.yaml: milestones[0].tasks[0].owns[2]: ${expected}, got "C:\\\\win"`,
    ]);
  });

  test('slugs, ids and unknown fields', () => {
    expect(errorsAfter((p) => (p.milestones[0].slug = 'Core Lib'))).toEqual([
      'plan.yaml: milestones[0].slug: expected a slug (a-z, 0-9 and "-", starting with a letter or digit), got "Core Lib"',
    ]);
    expect(errorsAfter((p) => (p.milestones[1].tasks[0].id = 0))).toEqual([
      'plan.yaml: milestones[1].tasks[0].id: expected a task id (an integer >= 1), got 0',
    ]);
    expect(errorsAfter((p) => (p.milestones[1].id = 1.5))).toEqual([
      'plan.yaml: milestones[1].id: expected a milestone id (an integer >= 1), got a non-integer number',
    ]);
    expect(
      errorsAfter((p) => {
        p.milestones[0].tasks[0].depend_on = [];
      }),
    ).toEqual(['plan.yaml: milestones[0].tasks[0]: unknown field "depend_on" (check the spelling)']);
  });

  test('not a plan at all', () => {
    expect(parsePlanText('just some words', 'plan.yaml')).toEqual({
      ok: false,
      errors: ['plan.yaml: expected a plan object (a YAML mapping or JSON object), got a string'],
    });
    expect(parsePlanText('', 'plan.yaml')).toEqual({
      ok: false,
      errors: ['plan.yaml: expected a plan object (a YAML mapping or JSON object), got null'],
    });
  });

  test('syntax errors name the format and position', () => {
    const yaml = parsePlanText('name: a\nname: b\n', 'plan.yaml');
    expect(yaml.ok === false && yaml.errors[0]).toMatch(
      /^plan\.yaml: not valid YAML: Map keys must be unique at line 2/,
    );
    const json = parsePlanText('{"name": ', 'plan.json');
    expect(json.ok === false && json.errors[0]).toMatch(/^plan\.json: not valid JSON: /);
  });
});

describe('semantic errors', () => {
  test('duplicate milestone, task and exit criterion ids', () => {
    expect(errorsAfter((p) => (p.milestones[1].id = 1))).toEqual(
      expect.arrayContaining(['plan.yaml: milestones[1].id: duplicate milestone id 1 (also milestones[0])']),
    );
    expect(errorsAfter((p) => (p.milestones[0].tasks[1].id = 1))).toEqual(
      expect.arrayContaining([
        'plan.yaml: milestones[0].tasks[1].id: duplicate task id 1 in milestone 1 (also milestones[0].tasks[0])',
      ]),
    );
    expect(errorsAfter((p) => (p.exit_criteria[1].id = 'E1'))).toEqual([
      'plan.yaml: exit_criteria[1].id: duplicate exit criterion id "E1" (also exit_criteria[0])',
    ]);
  });

  test('unknown milestone and task references', () => {
    expect(errorsAfter((p) => (p.milestones[1].depends_on = [7]))).toEqual(
      expect.arrayContaining(['plan.yaml: milestones[1].depends_on[0]: unknown milestone 7']),
    );
    expect(errorsAfter((p) => (p.milestones[0].tasks[1].depends_on = ['1.9']))).toEqual([
      'plan.yaml: milestones[0].tasks[1].depends_on[0]: unknown task "1.9"',
    ]);
  });

  test('a task cannot depend on a task of a milestone its milestone does not depend on', () => {
    expect(errorsAfter((p) => (p.milestones[0].tasks[1].depends_on = ['2.1']))).toEqual([
      'plan.yaml: milestones[0].tasks[1].depends_on[0]: task "2.1" is in milestone 2, which milestone 1 does not depend on',
    ]);
  });

  test('milestone cycles are named', () => {
    expect(errorsAfter((p) => (p.milestones[0].depends_on = [2]))).toEqual([
      'plan.yaml: milestones[0].depends_on: dependency cycle between milestones 1 -> 2 -> 1',
    ]);
    expect(errorsAfter((p) => (p.milestones[1].depends_on = [1, 2]))).toEqual([
      'plan.yaml: milestones[1].depends_on: dependency cycle between milestones 2 -> 2',
    ]);
  });

  test('task cycles are named', () => {
    expect(errorsAfter((p) => (p.milestones[0].tasks[0].depends_on = ['1.2']))).toEqual([
      'plan.yaml: milestones[0].tasks[0].depends_on: dependency cycle between tasks 1.1 -> 1.2 -> 1.1',
    ]);
    expect(errorsAfter((p) => (p.milestones[1].tasks[0].depends_on = ['2.1']))).toEqual([
      'plan.yaml: milestones[1].tasks[0].depends_on: dependency cycle between tasks 2.1 -> 2.1',
    ]);
  });

  test('two tasks of one milestone owning the same path, or a directory and a file inside it', () => {
    expect(errorsAfter((p) => p.milestones[0].tasks[1].owns.push('./src/greet.js'))).toEqual([
      'plan.yaml: milestones[0].tasks[1].owns[1]: "./src/greet.js" overlaps "src/greet.js" owned by task 1.1 ' +
        '(milestones[0].tasks[0].owns[0]); two tasks of one milestone must not own the same path',
    ]);
    expect(errorsAfter((p) => p.milestones[0].tasks[1].owns.push('src/'))).toEqual([
      'plan.yaml: milestones[0].tasks[1].owns[1]: "src/" overlaps "src/greet.js" owned by task 1.1 ' +
        '(milestones[0].tasks[0].owns[0]); two tasks of one milestone must not own the same path',
    ]);
    expect(errorsAfter((p) => p.milestones[0].tasks[1].owns.push('test/**'))).toHaveLength(1);
  });

  test('paths that only share a name prefix do not overlap', () => {
    const raw = fixtureRaw();
    raw.milestones[0].tasks[1].owns = ['src/greet.jsx', 'src/gree'];
    expect(validatePlan(raw, 'plan.yaml').ok).toBe(true);
  });
});

describe('helpers', () => {
  test('findTask and planSummary', () => {
    const plan = validPlan();
    expect(findTask(plan, '2.1')?.task.slug).toBe('add-cli');
    expect(findTask(plan, '2.1')?.milestone.slug).toBe('cli');
    expect(findTask(plan, '3.1')).toBeUndefined();
    expect(findTask(plan, 'nonsense')).toBeUndefined();
    expect(planSummary(plan)).toBe(
      [
        '2 milestones, 3 tasks, 2 exit criteria',
        '  M1 Core library (2 tasks)',
        '  M2 Command-line entry point (1 task; after M1)',
      ].join('\n'),
    );
  });
});

describe('never throws', () => {
  const isResult = (r: ReturnType<typeof validatePlan>) =>
    r.ok ? typeof r.plan === 'object' : r.errors.length > 0 && r.errors.every((e) => typeof e === 'string');

  test('arbitrary values', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => isResult(validatePlan(value, 'plan.yaml'))),
      { numRuns: 300 },
    );
  });

  test('arbitrary text as YAML and JSON', () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom('plan.yaml', 'plan.json', 'plan'), (text, name) =>
        isResult(parsePlanText(text, name)),
      ),
      { numRuns: 300 },
    );
  });

  test('a valid plan with one field replaced by arbitrary JSON', () => {
    const fields = ['id', 'slug', 'depends_on', 'owns', 'validation', 'scope', 'agent', 'interfaces'];
    fc.assert(
      fc.property(fc.constantFrom(...fields), fc.jsonValue(), fc.nat(2), (field, value, where) => {
        const raw = fixtureRaw();
        const target = where === 0 ? raw.milestones[0] : where === 1 ? raw.milestones[0].tasks[1] : raw;
        target[field] = value;
        return isResult(validatePlan(raw, 'plan.yaml'));
      }),
      { numRuns: 300 },
    );
  });
});
