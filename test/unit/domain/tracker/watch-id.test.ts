import { watchLabelProblem, watchWorkflowId } from '../../../../src/domain/tracker/watch-id';

describe('watchWorkflowId', () => {
  test('the scope and label read in the id, with a short hash of them', () => {
    expect(watchWorkflowId({ kind: 'gitea', owner: 'alice', repo: 'demo' }, 'saga')).toMatch(
      /^saga-watch-gitea-alice-demo-saga-[0-9a-f]{6}$/,
    );
    expect(watchWorkflowId({ kind: 'linear', team: 'ENG' }, 'saga')).toMatch(/^saga-watch-linear-eng-saga-/);
  });

  test('slugs that meet still give distinct ids', () => {
    const a = watchWorkflowId({ kind: 'gitea', owner: 'a', repo: 'b-c' }, 'd');
    const b = watchWorkflowId({ kind: 'gitea', owner: 'a', repo: 'b' }, 'c-d');
    expect(a).not.toBe(b);
  });

  test('labels that slug alike get distinct ids, each the same every time', () => {
    const scope = { kind: 'github', owner: 'acme', repo: 'app' } as const;
    const ids = ['to do', 'to-do', 'To Do', 'to.do'].map((label) => watchWorkflowId(scope, label));
    expect(new Set(ids).size).toBe(4);
    expect(watchWorkflowId(scope, 'To Do')).toBe(ids[2]);
    for (const id of ids) expect(id).toMatch(/^saga-watch-[a-z0-9-]+$/);
  });
});

describe('watchLabelProblem', () => {
  test.each([
    ['', /empty/],
    ['x'.repeat(51), /longer than 50/],
    ['sa\x1b[31mga', /control characters/],
    ['saga:planning', /phase labels/],
    ['SAGA:done', /phase labels/],
  ])('%j is refused', (label, problem) => {
    expect(watchLabelProblem(label)).toMatch(problem);
  });

  test('an ordinary label is fine', () => {
    expect(watchLabelProblem('saga')).toBeNull();
    expect(watchLabelProblem('good first issue')).toBeNull();
  });
});
