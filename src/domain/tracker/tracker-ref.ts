/**
 * Where a saga's request comes from: an issue on GitHub, Gitea/Forgejo or Linear (`saga start --from REF`,
 * `saga watch`). The reference is the issue's identity: the saga's name, and so its workflow id, is made
 * from it, which is what makes `saga watch` start one saga per issue, exactly once.
 */
import { z } from 'zod';
import { TRACKER_KINDS, type TrackerKind } from '../config/intake-keys';
import { SAGA_NAME_PATTERN, slugify } from '../contract/naming';

const OwnerOrRepo = z.string().regex(/^[\w.-]+$/, 'must be letters, digits, ., _ or -');

export const TrackerRefSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('github'),
    owner: OwnerOrRepo,
    repo: OwnerOrRepo,
    number: z.number().int().positive(),
  }),
  z.object({
    kind: z.literal('gitea'),
    owner: OwnerOrRepo,
    repo: OwnerOrRepo,
    number: z.number().int().positive(),
  }),
  /** `TEAM-N`: the team's key and the issue's number in it. */
  z.object({
    kind: z.literal('linear'),
    team: z.string().regex(/^[A-Z][A-Z0-9]{0,9}$/),
    number: z.number().int().positive(),
  }),
]);
export type TrackerRef = z.infer<typeof TrackerRefSchema>;

/** Where `saga watch` looks: a repository's issues, or a Linear team's. */
export const TrackerScopeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('github'), owner: OwnerOrRepo, repo: OwnerOrRepo }),
  z.object({ kind: z.literal('gitea'), owner: OwnerOrRepo, repo: OwnerOrRepo }),
  z.object({ kind: z.literal('linear'), team: z.string().regex(/^[A-Z][A-Z0-9]{0,9}$/) }),
]);
export type TrackerScope = z.infer<typeof TrackerScopeSchema>;

const REF_FORMS = 'github:OWNER/REPO#N, gitea:OWNER/REPO#N or linear:TEAM-N';
const SCOPE_FORMS = 'github:OWNER/REPO, gitea:OWNER/REPO or linear:TEAM';

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** `github:OWNER/REPO#N`, `gitea:OWNER/REPO#N` or `linear:TEAM-N`; an error names the forms. */
export function parseTrackerRef(text: string): Parsed<TrackerRef> {
  const trimmed = text.trim();
  const repoForm = /^(github|gitea):([\w.-]+)\/([\w.-]+)#(\d+)$/.exec(trimmed);
  if (repoForm) {
    const [, kind, owner, repo, number] = repoForm as unknown as [
      string,
      'github' | 'gitea',
      string,
      string,
      string,
    ];
    if (Number(number) > 0) return { ok: true, value: { kind, owner, repo, number: Number(number) } };
  }
  const linear = /^linear:([A-Z][A-Z0-9]{0,9})-(\d+)$/.exec(trimmed);
  if (linear && Number(linear[2]) > 0)
    return { ok: true, value: { kind: 'linear', team: linear[1]!, number: Number(linear[2]) } };
  return { ok: false, error: `'${text}' is not an issue reference: use ${REF_FORMS}` };
}

/** `github:OWNER/REPO`, `gitea:OWNER/REPO` or `linear:TEAM`, for `saga watch --from`. */
export function parseTrackerScope(text: string): Parsed<TrackerScope> {
  const trimmed = text.trim();
  const repoForm = /^(github|gitea):([\w.-]+)\/([\w.-]+)$/.exec(trimmed);
  if (repoForm) {
    const [, kind, owner, repo] = repoForm as unknown as [string, 'github' | 'gitea', string, string];
    return { ok: true, value: { kind, owner, repo } };
  }
  const linear = /^linear:([A-Z][A-Z0-9]{0,9})$/.exec(trimmed);
  if (linear) return { ok: true, value: { kind: 'linear', team: linear[1]! } };
  return { ok: false, error: `'${text}' is not a tracker to watch: use ${SCOPE_FORMS}` };
}

/** The reference as the user writes it (`gitea:acme/app#12`, `linear:ENG-42`). */
export function trackerRefText(ref: TrackerRef): string {
  return ref.kind === 'linear'
    ? `linear:${ref.team}-${ref.number}`
    : `${ref.kind}:${ref.owner}/${ref.repo}#${ref.number}`;
}

export function trackerScopeText(scope: TrackerScope): string {
  return scope.kind === 'linear' ? `linear:${scope.team}` : `${scope.kind}:${scope.owner}/${scope.repo}`;
}

/** The scope an issue belongs to. */
export function scopeOf(ref: TrackerRef): TrackerScope {
  return ref.kind === 'linear'
    ? { kind: 'linear', team: ref.team }
    : { kind: ref.kind, owner: ref.owner, repo: ref.repo };
}

/** Which tracker a reference or scope names. */
export const trackerKindOf = (ref: { kind: TrackerKind }): TrackerKind => ref.kind;

/**
 * The saga's name for an issue, from its reference alone (`gitea-acme-app-12`, `linear-eng-42`): the saga's
 * workflow id is made from it, so one issue is one saga however often `saga watch` or `saga start --from`
 * meets it. Owners and repositories are compared case-insensitively (GitHub and Gitea do). A name is kept
 * readable when it can be read back (the owner a plain word, the repository words joined by single dashes,
 * the whole within SAGA_NAME_PATTERN); any other reference gets a slug and a stable hash of the whole
 * reference, `-h` + 8 characters: a readable name's last part is the number, a hashed one's starts with `h`,
 * so the two never meet.
 */
export function issueSagaName(ref: TrackerRef): string {
  if (ref.kind === 'linear') return `linear-${ref.team.toLowerCase()}-${ref.number}`;
  const owner = ref.owner.toLowerCase();
  const repo = ref.repo.toLowerCase();
  const readable = `${ref.kind}-${owner}-${repo}-${ref.number}`;
  if (
    /^[a-z0-9]+$/.test(owner) &&
    /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(repo) &&
    SAGA_NAME_PATTERN.test(readable)
  )
    return readable;
  const tail = `-${ref.number}-h${hashText(`${ref.kind}:${owner}/${repo}#${ref.number}`)}`;
  const room = Math.max(1, 63 - ref.kind.length - 1 - tail.length);
  return `${ref.kind}-${slugify(`${owner}-${repo}`, room)}${tail}`;
}

/**
 * 8 base-36 characters of a 53-bit hash of `text` (cyrb53, computed by hand: workflow code has no crypto).
 * Not a secret, only a tie-breaker between references whose slugs meet.
 */
export function hashText(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const value = 4294967296 * (2097151 & h2) + (h1 >>> 0);
  return value.toString(36).padStart(8, '0').slice(-8);
}

export { TRACKER_KINDS };
