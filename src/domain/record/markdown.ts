/** Markdown building blocks of the saga directory's projections: one-line text, inline code, tables. Pure. */

const flat = (s: string): string => s.replace(/\s*[\r\n]+\s*/g, ' ').trim();
/**
 * Text (much of it agents') on one line, loading nothing when the Markdown is viewed: no image (`![` is
 * escaped) and no raw HTML tag (`<` before a tag name is `&lt;`), so a viewer fetches no remote image that
 * would report the record was opened. Links stay text the reader chooses to follow.
 */
export const oneLine = (s: string): string =>
  flat(s)
    .replace(/!\[/g, '!\\[')
    .replace(/<(?=[A-Za-z/!?])/g, '&lt;');
/** Inline code that survives backticks inside the text (shown literally: nothing in it renders). */
export const code = (s: string): string => (s.includes('`') ? `\`\` ${flat(s)} \`\`` : `\`${flat(s)}\``);
/** A table cell: one line, pipes escaped. */
export const cell = (s: string): string => oneLine(s).replace(/\|/g, '\\|') || '—';
export const bullets = (items: string[], empty = 'None.'): string =>
  items.length ? items.map((i) => `- ${oneLine(i)}`).join('\n') : empty;
export const table = (header: string[], rows: string[][]): string =>
  [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
/** Preformatted text (keeps line breaks), fenced so backticks inside cannot close it. */
export const fenced = (s: string): string => {
  const fence = '`'.repeat(Math.max(3, ...(s.match(/`+/g) ?? []).map((run) => run.length + 1)));
  return `${fence}text\n${s.trim()}\n${fence}`;
};
export const section = (title: string, body: string): string => `## ${title}\n\n${body.trim()}\n`;
export const doc = (parts: (string | false | undefined)[]): string =>
  `${parts
    .filter((p): p is string => typeof p === 'string' && p.trim() !== '')
    .map((p) => p.trim())
    .join('\n\n')}\n`;

/** A commit as its first 12 characters in code, or a dash when there is none. */
export const shortCommit = (commit: string | null): string => (commit ? code(commit.slice(0, 12)) : '—');

/** For display only (nothing here is ever executed): quote an argument the way a POSIX shell would read it. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
