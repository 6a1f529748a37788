import { Command, CommanderError, Help, InvalidArgumentError, Option } from 'commander';
import type { LevelWithSilent } from 'pino';
import { isLogLevel } from '../logging/log-levels';
import { errorMessage } from '../model/error-message';

// One way to declare a flag for every Forewarn process: name, environment variable, parser, default
// and help, in one entry of a table whose keys are the fields of the parsed configuration. commander
// parses; the environment is read from the env given to parseFlags (never by swapping process.env),
// and a flag on the command line wins over its variable.

export interface FlagSpec<V> {
  /** commander syntax: `--port <port>`, `--mcp [enabled]`, `-o, --output <format>`. */
  flags: string;
  help: string;
  /** Environment variable that sets the flag when the command line does not. */
  env?: string;
  /** Parses one value; `previous` is the value so far, for repeatable flags. */
  parse?(text: string, previous: V): V;
  default?: V;
  /** How `--help` shows the default when the value itself would read badly (`5m` for 300000). */
  defaultText?: string;
  /** The value of a flag given without one (`--mcp` alone means `--mcp=true`). */
  preset?: string;
  /** The only values accepted (commander lists them in `--help`). */
  choices?: readonly string[];
}

/** A flag's declaration; the value type is inferred from the parser and the default. */
export function flag<V = string>(spec: FlagSpec<V> & { default: V }): FlagSpec<V> & { default: V };
export function flag<V = string>(spec: FlagSpec<V>): FlagSpec<V>;
export function flag<V>(spec: FlagSpec<V>): FlagSpec<V> {
  return spec;
}

type AnyFlagSpec = FlagSpec<unknown>;
export type FlagTable = Record<string, AnyFlagSpec>;

/** The parsed values of a flag table: its keys, each typed by its flag (undefined if it has no default). */
export type FlagValues<T extends FlagTable> = {
  [K in keyof T]: T[K] extends { default: infer D }
    ? D
    : T[K] extends FlagSpec<infer V>
      ? V | undefined
      : never;
};

/** A usage error: print `output` (help, or the error) and exit with `exitCode` (0 for --help, 2 otherwise). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly exitCode: 0 | 2,
    readonly output: string = message,
  ) {
    super(message);
  }
}

/** A commander Option tagged with its environment variable, shown in `--help` beside the default. */
class EnvironmentOption extends Option {
  environment?: string;
}

class FlagHelp extends Help {
  override optionDescription(option: Option): string {
    const description = super.optionDescription(option);
    const environment = option instanceof EnvironmentOption ? option.environment : undefined;
    if (!environment) return description;
    // commander appends its extras (default, preset, choices) as one parenthesis; the variable joins it.
    return description === option.description
      ? `${description} (env: ${environment})`
      : `${description.slice(0, -1)}, env: ${environment})`;
  }
}

function toOption(spec: AnyFlagSpec): EnvironmentOption {
  const option = new EnvironmentOption(spec.flags, spec.help);
  option.environment = spec.env;
  if (spec.choices) option.choices(spec.choices);
  const parse = spec.parse;
  if (parse) option.argParser((text: string, previous: unknown) => parse(text, previous));
  if (spec.default !== undefined) option.default(spec.default, spec.defaultText);
  if (spec.preset !== undefined) option.preset(spec.preset);
  return option;
}

/** Adds the table's flags to a command; the option of each key is found again by its key. */
export function addFlags(command: Command, table: FlagTable): Command {
  for (const spec of Object.values(table)) command.addOption(toOption(spec));
  command.createHelp = () => Object.assign(new FlagHelp(), command.configureHelp());
  return command.helpOption('-h, --help', 'show this help');
}

function optionOf(command: Command, spec: AnyFlagSpec): Option {
  const long = new Option(spec.flags).long;
  const option = command.options.find((candidate) => candidate.long === long);
  if (!option) throw new Error(`flag ${spec.flags} is not declared on ${command.name()}`);
  return option;
}

/** Values from the environment for flags the command line did not set. */
export function applyEnvironment(command: Command, table: FlagTable, env: NodeJS.ProcessEnv): void {
  for (const spec of Object.values(table)) {
    const value = spec.env === undefined ? undefined : env[spec.env];
    const option = optionOf(command, spec);
    const key = option.attributeName();
    if (value === undefined || command.getOptionValueSource(key) === 'cli') continue;
    try {
      if (option.argChoices && !option.argChoices.includes(value))
        throw new InvalidArgumentError(`expected one of ${option.argChoices.join(', ')}`);
      const parsed: unknown = spec.parse ? spec.parse(value, spec.default) : value;
      command.setOptionValueWithSource(key, parsed, 'env');
    } catch (error) {
      const message = `invalid ${spec.env} (${option.long}) '${value}': ${errorMessage(error)}`;
      throw new UsageError(message, 2);
    }
  }
}

/** A process's command: the table's flags, no positional arguments. */
export function flagCommand(name: string, description: string, table: FlagTable): Command {
  return addFlags(new Command(name).description(description), table).allowExcessArguments(false);
}

/**
 * Parses argv (without node and script) and the environment into the table's values. Throws
 * UsageError for --help (exit 0, the help as output) and for invalid flags (exit 2), including a
 * problem `crossFlagProblem` finds between valid flags (e.g. two that cannot go together).
 */
export function parseFlags<T extends FlagTable>(
  command: Command,
  table: T,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  crossFlagProblem: (values: FlagValues<T>) => string | undefined = () => undefined,
): FlagValues<T> {
  let output = '';
  command
    .exitOverride()
    .configureOutput({ writeOut: (text) => (output += text), writeErr: (text) => (output += text) });
  try {
    command.parse([...argv], { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (error.exitCode === 0) throw new UsageError(output || command.helpInformation(), 0, output);
    const message = error.message.replace(/^error: /, '');
    throw new UsageError(message, 2, output || error.message);
  }
  applyEnvironment(command, table, env);
  const values = flagValues(command, table);
  const problem = crossFlagProblem(values);
  if (problem !== undefined) throw new UsageError(problem, 2);
  return values;
}

/** The table's values as the command holds them after parsing (and applyEnvironment). */
export function flagValues<T extends FlagTable>(command: Command, table: T): FlagValues<T> {
  const values: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(table))
    values[key] = command.getOptionValue(optionOf(command, spec).attributeName());
  return values as FlagValues<T>;
}

export function parseLogLevel(text: string): LevelWithSilent {
  if (!isLogLevel(text))
    throw new InvalidArgumentError('expected fatal, error, warn, info, debug, trace or silent');
  return text;
}

/** `--log-level`, the same in every process. */
export const LOG_LEVEL_FLAG = flag({
  flags: '--log-level <level>',
  help: 'log level',
  env: 'FOREWARN_LOG_LEVEL',
  parse: parseLogLevel,
  default: 'info' as LevelWithSilent,
});
