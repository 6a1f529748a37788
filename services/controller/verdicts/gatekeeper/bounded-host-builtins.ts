import path from 'node:path';
import { RE2JS } from 're2js';
import { activeGuard } from '../guard/evaluation-guard';
import { jsonLengthWithin } from '../guard/bounded-size';
import { REGO_HOST_BUILTINS, RegoBuiltinError } from './rego-builtins';
import { goSprintf } from './rego-sprintf';

// The built-ins a compiled template calls on the host (the Wasm SDK's JSON, regex, sprintf and
// YAML functions, and ours in rego-builtins.ts) run in JavaScript, outside the module's fuel
// metering (wasm-fuel.ts). Each is bounded here, now that Rego runs on the event loop: its
// arguments are capped in size (measured without printing them), its work is charged to the
// evaluation's fuel (the exported global, written from here: a call that spends it throws, which
// unwinds through the Wasm call), its result is capped, and the guard's clock is read after it.
// regex.split uses RE2 (linear time) instead of JavaScript's backtracking RegExp.

/** An evaluation whose fuel a host built-in spent (fueled-rego.ts answers it as the spent budget). */
export class HostFuelSpent extends Error {}

/** The fuel global of the evaluation in progress (fueled-rego.ts sets it around each call). */
let activeFuel: { value: number } | undefined;

export function withHostFuel<Result>(fuel: { value: number }, evaluation: () => Result): Result {
  const previous = activeFuel;
  activeFuel = fuel;
  try {
    return evaluation();
  } finally {
    activeFuel = previous;
  }
}

/** Fuel units of one host call, besides its size: a call and its JSON round trip. */
export const HOST_CALL_UNITS = 2_000;
/**
 * Fuel units per character a host built-in reads or writes: JavaScript's work per character
 * (parsing, matching, formatting) against the Wasm instructions one unit stands for.
 */
export const HOST_UNITS_PER_CHARACTER = 64;
/** Largest arguments (as JSON characters) a host built-in takes. */
export const MAX_HOST_INPUT_CHARACTERS = 1024 * 1024;
/** YAML parsing is the slowest per character: its input is capped lower. */
export const MAX_YAML_INPUT_CHARACTERS = 64 * 1024;
/** Largest value a host built-in may return (as JSON characters): the limit of a built string. */
export const MAX_HOST_RESULT_CHARACTERS = 4 * 1024 * 1024;

function charge(units: number): void {
  if (!activeFuel) return;
  activeFuel.value = Math.max(-1, activeFuel.value - units);
  if (activeFuel.value < 0) throw new HostFuelSpent('the evaluation spent its fuel in a host built-in');
}

type Builtin = (...args: unknown[]) => unknown;

function bounded(name: string, implementation: Builtin, maxInput = MAX_HOST_INPUT_CHARACTERS): Builtin {
  return (...args: unknown[]) => {
    const input = jsonLengthWithin(args, maxInput);
    if (input === undefined)
      throw new RegoBuiltinError(
        `${name}: its arguments are larger than the ${maxInput} characters a built-in takes here`,
      );
    charge(HOST_CALL_UNITS + input * HOST_UNITS_PER_CHARACTER);
    const result = implementation(...args);
    const output = jsonLengthWithin(result, MAX_HOST_RESULT_CHARACTERS);
    if (output === undefined)
      throw new RegoBuiltinError(
        `${name}: its result is larger than the ${MAX_HOST_RESULT_CHARACTERS} characters a built-in may return here`,
      );
    charge(output * HOST_UNITS_PER_CHARACTER);
    activeGuard()?.checkDeadline();
    return result;
  };
}

/** OPA's regex.split with RE2's syntax and linear matching (the SDK's uses a JavaScript RegExp). */
function regexSplit(pattern: unknown, value: unknown): string[] {
  if (typeof pattern !== 'string' || typeof value !== 'string')
    throw new RegoBuiltinError('regex.split: operands must be strings');
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (error) {
    throw new RegoBuiltinError(`regex.split: ${error instanceof Error ? error.message : String(error)}`);
  }
  return compiled.split(value, -1);
}

/** The custom built-ins every compiled template is loaded with, each bounded. */
export const BOUNDED_CUSTOM_BUILTINS: Readonly<Record<string, Builtin>> = Object.fromEntries(
  Object.entries(REGO_HOST_BUILTINS).map(([name, implementation]) => [name, bounded(name, implementation)]),
);

let installed = false;

/**
 * Replaces the SDK's own built-ins by bounded ones (and sprintf by Go's formatting, rego-sprintf.ts).
 * Its table is a module-level object the SDK reads at each call; the package's exports hide it, so
 * it is reached through the file next to the SDK's entry.
 */
export function installBoundedSdkBuiltins(): void {
  if (installed) return;
  const entry = require.resolve('@open-policy-agent/opa-wasm');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const table = require(path.join(path.dirname(entry), 'builtins', 'index.js')) as Record<string, Builtin>;
  for (const name of Object.keys(table)) {
    const original = table[name];
    const maxInput = name.startsWith('yaml.') ? MAX_YAML_INPUT_CHARACTERS : MAX_HOST_INPUT_CHARACTERS;
    const implementation: Builtin =
      name === 'sprintf'
        ? (format, values) => goSprintf(format, values)
        : name === 'regex.split'
          ? (pattern, value) => regexSplit(pattern, value)
          : original;
    table[name] = bounded(name, implementation, maxInput);
  }
  installed = true;
}
