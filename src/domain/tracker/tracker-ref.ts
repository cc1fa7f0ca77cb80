/**
 * Where a saga's request comes from: an issue on GitHub, Gitea/Forgejo or Linear (`saga start --from REF`,
 * `saga watch`). The reference is the issue's identity: the saga's name, and so its workflow id, is made
 * from it, which is what makes `saga watch` start one saga per issue, exactly once.
 */
import { z } from 'zod';
import { TRACKER_KINDS, type TrackerKind } from '../config/intake-keys';

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

export { TRACKER_KINDS };

/** STAND-IN until the domain helper's issueSagaName lands (theirs replaces it at merge). */
export function issueSagaName(ref: TrackerRef): string {
  const text =
    ref.kind === 'linear'
      ? `linear-${ref.team}-${ref.number}`
      : `${ref.kind}-${ref.owner}-${ref.repo}-${ref.number}`;
  return text
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, 63);
}
