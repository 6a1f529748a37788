// OPA built-in functions that a template compiled to WebAssembly asks its host for, and that the
// Wasm SDK (@open-policy-agent/opa-wasm) does not provide: given to `loadPolicy` as custom
// built-ins. Each is written from OPA's documentation (https://www.openpolicyagent.org/docs/policy-reference)
// and is a pure function of its JSON arguments, so it can run in whichever thread evaluates the
// policy. The SDK hands sets over as JSON lists.

/** An error the SDK reports as the evaluation's failure (the verdict is then `unknown`). */
export class RegoBuiltinError extends Error {}

/** A `string | array[string] | set[string]` argument as its strings. */
function stringsOf(value: unknown, name: string, position: string): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((entry) => typeof entry === 'string')) return value as string[];
  throw new RegoBuiltinError(`${name}: operand ${position} must be one of {string, array, set} of strings`);
}

/** `strings.any_prefix_match(search, base)`: some string of `search` starts with some of `base`. */
export function anyPrefixMatch(search: unknown, base: unknown): boolean {
  const candidates = stringsOf(search, 'strings.any_prefix_match', '1');
  const prefixes = stringsOf(base, 'strings.any_prefix_match', '2');
  return candidates.some((candidate) => prefixes.some((prefix) => candidate.startsWith(prefix)));
}

/** `strings.any_suffix_match(search, base)`: some string of `search` ends with some of `base`. */
export function anySuffixMatch(search: unknown, base: unknown): boolean {
  const candidates = stringsOf(search, 'strings.any_suffix_match', '1');
  const suffixes = stringsOf(base, 'strings.any_suffix_match', '2');
  return candidates.some((candidate) => suffixes.some((suffix) => candidate.endsWith(suffix)));
}

/** The custom built-ins every compiled template is loaded with, by OPA's name. */
export const REGO_HOST_BUILTINS: Readonly<Record<string, (...args: unknown[]) => unknown>> = {
  'strings.any_prefix_match': (search, base) => anyPrefixMatch(search, base),
  'strings.any_suffix_match': (search, base) => anySuffixMatch(search, base),
};
