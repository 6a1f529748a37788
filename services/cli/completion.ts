import type { Command, Option } from 'commander';

// `forewarn completion bash|zsh|fish`: shell completion scripts made from the program's own commands
// and flags, so they cannot drift from the command line. Subcommands, their flags, the values of
// flags with a fixed set (`-o`, `--fail-on`, `--color`) and file names for flags that take a path.
// zsh runs the bash function through bashcompinit, as kubectl's completion does for older setups.

export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

export interface CompletionFlag {
  /** `-o`, `--output`. */
  names: string[];
  description: string;
  value: 'none' | 'file' | 'any' | { choices: readonly string[] };
}

export interface CompletionCommand {
  name: string;
  description: string;
  flags: CompletionFlag[];
  /** Words of its first argument (completion: the shells). */
  arguments?: readonly string[];
}

export interface CompletionSpec {
  /** The executables completed: `forewarn`, `kubectl-forewarn`. */
  executables: readonly string[];
  globalFlags: CompletionFlag[];
  commands: CompletionCommand[];
}

function flagOf(option: Option): CompletionFlag {
  const names = [option.short, option.long].filter((name): name is string => name !== undefined);
  const takesValue = option.required || option.optional;
  const value: CompletionFlag['value'] = option.argChoices
    ? { choices: option.argChoices }
    : !takesValue || option.optional
      ? 'none'
      : /<(path|dir|file)/.test(option.flags)
        ? 'file'
        : 'any';
  return { names, description: option.description, value };
}

/** The spec of a commander program (its help flag included). */
export function completionSpecOf(
  program: Command,
  executables: readonly string[],
  argumentWords: Readonly<Record<string, readonly string[]>> = {},
): CompletionSpec {
  const help: CompletionFlag = { names: ['-h', '--help'], description: 'show this help', value: 'none' };
  return {
    executables,
    globalFlags: [...program.options.map(flagOf), help],
    commands: program.commands.map((command) => ({
      name: command.name(),
      description: command.description(),
      flags: [...command.options.map(flagOf), help],
      ...(argumentWords[command.name()] ? { arguments: argumentWords[command.name()] } : {}),
    })),
  };
}

function shellWords(words: readonly string[]): string {
  return words.map((word) => word.replace(/[^\w@%+=:,./-]/g, '')).join(' ');
}

function bashValueCases(flags: readonly CompletionFlag[]): string {
  const seen = new Set<string>();
  const cases: string[] = [];
  for (const flag of flags) {
    const names = flag.names.filter((name) => !seen.has(name));
    names.forEach((name) => seen.add(name));
    if (names.length === 0 || flag.value === 'none') continue;
    const reply =
      flag.value === 'file'
        ? 'COMPREPLY=($(compgen -f -- "$cur"))'
        : flag.value === 'any'
          ? 'COMPREPLY=()'
          : `COMPREPLY=($(compgen -W "${shellWords(flag.value.choices)}" -- "$cur"))`;
    cases.push(`    ${names.join('|')}) ${reply}; return ;;`);
  }
  return cases.join('\n');
}

function bashScript(spec: CompletionSpec): string {
  const globalNames = spec.globalFlags.flatMap((flag) => flag.names);
  const commandNames = spec.commands.map((command) => command.name);
  const allFlags = [...spec.globalFlags, ...spec.commands.flatMap((command) => command.flags)];
  const commandCases = spec.commands
    .map((command) => {
      const words = [
        ...(command.arguments ?? []),
        ...command.flags.flatMap((flag) => flag.names),
        ...globalNames,
      ];
      return `    ${command.name}) COMPREPLY=($(compgen -W "${shellWords([...new Set(words)])}" -- "$cur")) ;;`;
    })
    .join('\n');
  return `# forewarn completion for bash: source <(forewarn completion bash)
_forewarn() {
  local cur prev command word
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  case "$prev" in
${bashValueCases(allFlags)}
  esac
  command=""
  for word in "\${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case "$word" in
      ${commandNames.join('|')}) command="$word"; break ;;
    esac
  done
  case "$command" in
    "") COMPREPLY=($(compgen -W "${shellWords([...commandNames, ...globalNames])}" -- "$cur")) ;;
${commandCases}
  esac
}
complete -o default -F _forewarn ${spec.executables.join(' ')}
`;
}

function zshScript(spec: CompletionSpec): string {
  return `#compdef ${spec.executables.join(' ')}
# forewarn completion for zsh: source <(forewarn completion zsh)
autoload -U +X bashcompinit && bashcompinit
${bashScript(spec).replace(/^# forewarn completion for bash.*\n/, '')}`;
}

function fishQuote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function fishFlag(executable: string, condition: string, flag: CompletionFlag): string {
  const parts = [`complete -c ${executable}`, `-n ${fishQuote(condition)}`];
  for (const name of flag.names)
    parts.push(name.startsWith('--') ? `-l ${name.slice(2)}` : `-s ${name.slice(1)}`);
  if (flag.value === 'file') parts.push('-r -F');
  else if (flag.value === 'any') parts.push('-x');
  else if (flag.value !== 'none') parts.push(`-x -a ${fishQuote(flag.value.choices.join(' '))}`);
  parts.push(`-d ${fishQuote(flag.description)}`);
  return parts.join(' ');
}

function fishScript(spec: CompletionSpec): string {
  const lines = ['# forewarn completion for fish: forewarn completion fish | source'];
  for (const executable of spec.executables) {
    lines.push(`complete -c ${executable} -f`);
    for (const command of spec.commands)
      lines.push(
        `complete -c ${executable} -n '__fish_use_subcommand' -a ${command.name} -d ${fishQuote(command.description)}`,
      );
    for (const flag of spec.globalFlags) lines.push(fishFlag(executable, '__fish_use_subcommand', flag));
    for (const command of spec.commands) {
      const inCommand = `__fish_seen_subcommand_from ${command.name}`;
      for (const flag of [
        ...command.flags,
        ...spec.globalFlags.filter((global) => !global.names.includes('--help')),
      ])
        lines.push(fishFlag(executable, inCommand, flag));
      if (command.arguments)
        lines.push(
          `complete -c ${executable} -n ${fishQuote(`${inCommand}; and not __fish_seen_subcommand_from ${command.arguments.join(' ')}`)} -a ${fishQuote(command.arguments.join(' '))}`,
        );
    }
  }
  return `${lines.join('\n')}\n`;
}

export function completionScript(shell: CompletionShell, spec: CompletionSpec): string {
  if (shell === 'bash') return bashScript(spec);
  if (shell === 'zsh') return zshScript(spec);
  return fishScript(spec);
}
