import path from 'node:path';
import { RegoBuiltinError } from './rego-builtins';

// OPA's `sprintf` as the Go engine formats it, for the Wasm SDK. Compiled policies call sprintf on
// the host, and @open-policy-agent/opa-wasm answers with sprintf-js, which prints `%v` of a list as
// `a,b` where Gatekeeper (OPA in Go) prints `["a", "b"]`: the messages a developer sees must be the
// ones Gatekeeper returns. OPA converts each argument (strings as they are, numbers as numbers,
// everything else as its Rego text) and hands them to Go's fmt; this does the same for the verbs
// Rego messages use. One difference remains: the SDK passes a set as a JSON list, so a set prints
// as `["a"]` where Go prints `{"a"}`.

function regoText(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(regoText).join(', ')}]`;
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort()
      .map((key) => `${JSON.stringify(key)}: ${regoText(record[key])}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value);
}

/** Go's `%v` of a float64: shortest representation, exponent from 1e21 as Go writes it. */
function goFloat(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return String(value);
  const text = String(value);
  return text.replace(/e([+-])(\d)$/, 'e$10$2');
}

function argumentText(verb: string, value: unknown, precision: string | undefined): string {
  const isNumber = typeof value === 'number';
  const plain = typeof value === 'string' ? value : isNumber ? goFloat(value) : regoText(value);
  switch (verb) {
    case 'd':
      return isNumber && Number.isInteger(value) ? String(value) : `%!d(${plain})`;
    case 'f':
      return isNumber ? value.toFixed(precision === undefined ? 6 : Number(precision)) : `%!f(${plain})`;
    case 'q':
      return JSON.stringify(plain);
    case 'x':
      return typeof value === 'string'
        ? Buffer.from(value).toString('hex')
        : isNumber
          ? Math.trunc(value).toString(16)
          : plain;
    case 't':
      return typeof value === 'boolean' ? String(value) : `%!t(${plain})`;
    default:
      return plain;
  }
}

/**
 * Go's fmt refuses widths and precisions above 1e6 (`tooLarge`): it prints `%!(BADWIDTH)` or
 * `%!(BADPREC)` and formats the value without them. So does this, so a template's
 * `sprintf("%200000000v", ...)` prints a short message instead of building a 200 MB string.
 */
const MAX_WIDTH = 1_000_000;

/** The longest message sprintf builds (widths add up over many verbs): the limit of a built string. */
export const MAX_FORMATTED_LENGTH = 4 * 1024 * 1024;

const VERB = /%([-+# 0]*)(\d*)(?:\.(\d+))?([vsdqfxtT%])/g;

export function goSprintf(format: unknown, values: unknown): string {
  if (typeof format !== 'string') return '';
  const list = Array.isArray(values) ? values : [];
  let next = 0;
  let built = format.length;
  const formatted = format.replace(
    VERB,
    (_whole, flags: string, width: string, precision: string | undefined, verb: string) => {
      if (verb === '%') return '%';
      let refused = '';
      let size = Number(width || 0);
      if (size > MAX_WIDTH) {
        refused += '%!(BADWIDTH)';
        size = 0;
      }
      if (precision !== undefined && Number(precision) > MAX_WIDTH) {
        refused += '%!(BADPREC)';
        precision = undefined;
      }
      if (next >= list.length) return `${refused}%!${verb}(MISSING)`;
      const value: unknown = list[next++];
      const text = verb === 'T' ? typeof value : argumentText(verb, value, precision);
      built += Math.max(text.length, size);
      if (built > MAX_FORMATTED_LENGTH)
        throw new RegoBuiltinError(
          `sprintf: the message would be longer than ${MAX_FORMATTED_LENGTH} characters`,
        );
      return (
        refused + (text.length >= size ? text : flags.includes('-') ? text.padEnd(size) : text.padStart(size))
      );
    },
  );
  return next < list.length
    ? `${formatted}%!(EXTRA ${list
        .slice(next)
        .map((value) => regoText(value))
        .join(', ')})`
    : formatted;
}

let installed = false;

/**
 * Replaces the SDK's sprintf. Its built-ins table is a module-level object the SDK reads at each
 * call; the package's exports hide it, so it is reached through the file next to the SDK's entry.
 */
export function installGoSprintf(): void {
  if (installed) return;
  const entry = require.resolve('@open-policy-agent/opa-wasm');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const builtins = require(path.join(path.dirname(entry), 'builtins', 'index.js')) as Record<string, unknown>;
  builtins.sprintf = goSprintf;
  installed = true;
}
