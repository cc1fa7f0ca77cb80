/** `saga completion bash|zsh`: shell completion scripts generated from the command declarations. */
import type { CommandDecl, ParsedArgs } from './command-decl';
import type { Io } from './io';
import { EXIT } from './errors';

const words = (decl: CommandDecl): string[] => [
  ...(decl.subcommands ?? []).map((s) => s.name),
  ...(decl.options ?? []).map((o) => `--${o.name}`),
  ...(decl.args ?? []).flatMap((a) => a.choices ?? []),
  '--help',
];

/** `case` branches keyed by "COMMAND" or "COMMAND SUBCOMMAND"; the words are fixed declaration text. */
function branches(decls: readonly CommandDecl[]): { key: string; words: string[] }[] {
  const out: { key: string; words: string[] }[] = [];
  for (const decl of decls) {
    out.push({ key: decl.name, words: words(decl) });
    for (const sub of decl.subcommands ?? [])
      out.push({ key: `${decl.name} ${sub.name}`, words: words(sub) });
  }
  return out;
}

const top = (decls: readonly CommandDecl[]): string[] => [
  ...decls.map((c) => c.name),
  'help',
  '--help',
  '--version',
];

export function bashCompletion(decls: readonly CommandDecl[]): string {
  const cases = branches(decls)
    .map((b) => `    '${b.key}') words='${b.words.join(' ')}' ;;`)
    .join('\n');
  return `# saga completion for bash: source <(saga completion bash)
_saga() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" words key
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W '${top(decls).join(' ')}' -- "$cur"))
    return
  fi
  key="\${COMP_WORDS[1]}"
  if [ "$COMP_CWORD" -gt 2 ]; then
    case "\${COMP_WORDS[1]} \${COMP_WORDS[2]}" in
${branches(decls)
  .filter((b) => b.key.includes(' '))
  .map((b) => `      '${b.key}') key="\${COMP_WORDS[1]} \${COMP_WORDS[2]}" ;;`)
  .join('\n')}
    esac
  fi
  case "$key" in
${cases}
    help) words='${decls.map((c) => c.name).join(' ')}' ;;
    *) words='' ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _saga saga
`;
}

export function zshCompletion(decls: readonly CommandDecl[]): string {
  const describe = (name: string, summary: string) => `'${name}:${summary.replace(/[':]/g, ' ')}'`;
  const cases = branches(decls)
    .map((b) => `    '${b.key}') compadd -- ${b.words.join(' ')} ;;`)
    .join('\n');
  return `#compdef saga
# saga completion for zsh: source <(saga completion zsh)
_saga() {
  if (( CURRENT == 2 )); then
    local -a commands
    commands=(
${decls.map((c) => `      ${describe(c.name, c.summary)}`).join('\n')}
      ${describe('help', 'help for a command')}
    )
    _describe 'saga command' commands
    return
  fi
  local key="\${words[2]}"
  if (( CURRENT > 3 )) && [[ -n "\${words[3]}" && "\${words[3]}" != -* ]]; then
    case "\${words[2]} \${words[3]}" in
${branches(decls)
  .filter((b) => b.key.includes(' '))
  .map((b) => `      '${b.key}') key="\${words[2]} \${words[3]}" ;;`)
  .join('\n')}
    esac
  fi
  case "$key" in
${cases}
    help) compadd -- ${decls.map((c) => c.name).join(' ')} ;;
    *) _files ;;
  esac
}
compdef _saga saga
`;
}

/** `saga completion bash|zsh` for the command table `decls` (declarations.ts passes its own). */
export async function completionCommand(
  decls: readonly CommandDecl[],
  args: ParsedArgs,
  io: Io,
): Promise<number> {
  io.out((args.positionals[0] === 'zsh' ? zshCompletion(decls) : bashCompletion(decls)).trimEnd());
  return EXIT.ok;
}
