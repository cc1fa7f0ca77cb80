import { SAGA_NAME_PATTERN } from '../../../../src/domain/contract/naming';
import { issueSagaName, parseTrackerRef, type TrackerRef } from '../../../../src/domain/tracker/tracker-ref';

const ref = (text: string): TrackerRef => {
  const parsed = parseTrackerRef(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
};
const name = (text: string) => issueSagaName(ref(text));

describe('issueSagaName: one issue, one saga name', () => {
  test('plain references read as themselves', () => {
    expect(name('gitea:acme/app#12')).toBe('gitea-acme-app-12');
    expect(name('github:acme/web-app#7')).toBe('github-acme-web-app-7');
    expect(name('linear:ENG-42')).toBe('linear-eng-42');
  });

  test('the same issue written in other case is the same saga (GitHub and Gitea ignore case)', () => {
    expect(name('github:Acme/App#3')).toBe(name('github:acme/app#3'));
    expect(name('github:My.Org/App_X#3')).toBe(name('github:my.org/app_x#3'));
  });

  test('references whose slugs meet get distinct names, each stable', () => {
    const pairs = [
      ['github:a-b/c#1', 'github:a/b-c#1'],
      ['gitea:acme/my.app#1', 'gitea:acme/my-app#1'],
      ['gitea:acme/my_app#1', 'gitea:acme/my-app#1'],
      ['github:acme/app#1', 'gitea:acme/app#1'],
      ['github:acme/app--x#1', 'github:acme/app-x#1'],
      // A readable name whose repository ends in digits against a hashed one.
      ['gitea:my-org/app#12', 'gitea:my/org-app-12#12'],
    ];
    for (const [a, b] of pairs) {
      expect(name(a!)).not.toBe(name(b!));
      expect(name(a!)).toBe(name(a!));
    }
    expect(name('github:a-b/c#1')).toMatch(/^github-a-b-c-1-h[0-9a-z]{8}$/);
  });

  test('long references are cut to a valid name and stay distinct', () => {
    const long = 'x'.repeat(90);
    const a = name(`github:${long}/repo-one#123456`);
    const b = name(`github:${long}/repo-two#123456`);
    for (const n of [a, b]) {
      expect(n).toMatch(SAGA_NAME_PATTERN);
      expect(n.length).toBeLessThanOrEqual(63);
      expect(n).toContain('-123456-h');
    }
    expect(a).not.toBe(b);
  });

  test('every name is a valid saga name', () => {
    for (const text of [
      'github:-x-/_y_#1',
      'gitea:a.b/.c#99',
      'linear:A1234567890-1',
      'github:UPPER/Case.Repo#5',
      'gitea:acme/app#1',
    ]) {
      const parsed = parseTrackerRef(text);
      if (!parsed.ok) continue;
      expect(issueSagaName(parsed.value)).toMatch(SAGA_NAME_PATTERN);
    }
  });
});
