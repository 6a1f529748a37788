import {
  compile,
  registerFunction,
  TreeInterpreter,
  TYPE_ANY,
  TYPE_ARRAY,
  TYPE_NUMBER,
  TYPE_OBJECT,
  TYPE_STRING,
  type JSONValue,
} from '@jmespath-community/jmespath';
import { isMainThread } from 'node:worker_threads';
import { parse as parseYaml } from 'yaml';
import { activeGuard } from '../guard/evaluation-guard';
import { evaluationIsolate } from '../guard/evaluation-isolate';
import { isRecord } from '../../../model/kubernetes';
import { wildcardMatches } from './scalar-pattern';
import { KyvernoRuleError, NotEvaluable } from './kyverno-errors';
import {
  kyvernoAdd,
  kyvernoDivide,
  kyvernoModulo,
  kyvernoMultiply,
  kyvernoSubtract,
  kyvernoSum,
} from './kyverno-arithmetic';
import { RE2JS } from 're2js';

// JMESPath as Kyverno evaluates it: the standard language (@jmespath-community/jmespath, a maintained
// TypeScript implementation that takes custom functions) plus Kyverno's own pure functions
// (https://kyverno.io/docs/writing-policies/jmespath/), written here from their documentation.
// Functions that read the clock, randomness or the cluster make the rule `unknown`.

type Arguments = Array<JSONValue | unknown>;

const text = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

// Go's regexp is RE2: linear in the subject, which is the caller's. re2js (as CEL's find uses) keeps
// it so here; a JavaScript RegExp would backtrack on patterns such as `^(a+)+$`.
const compiledRegexes = new Map<string, RE2JS>();
const COMPILED_REGEXES_KEPT = 1_024;

function goRegex(pattern: string): RE2JS {
  let compiled = compiledRegexes.get(pattern);
  if (compiled) return compiled;
  try {
    compiled = RE2JS.compile(pattern);
  } catch {
    throw new KyvernoRuleError(`invalid regular expression ${pattern}`);
  }
  if (compiledRegexes.size >= COMPILED_REGEXES_KEPT) compiledRegexes.clear();
  compiledRegexes.set(pattern, compiled);
  return compiled;
}

function numberOf(value: unknown, name: string): number {
  if (typeof value === 'number') return value;
  throw new NotEvaluable(`${name} is evaluated here on numbers only`);
}

const KYVERNO_FUNCTIONS: Array<[string, (args: Arguments) => unknown, number[][]]> = [
  [
    'compare',
    ([a, b]) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0),
    [[TYPE_STRING], [TYPE_STRING]],
  ],
  [
    'equal_fold',
    ([a, b]) => String(a).toLowerCase() === String(b).toLowerCase(),
    [[TYPE_STRING], [TYPE_STRING]],
  ],
  [
    'replace',
    ([subject, old, replacement, count]) => {
      let result = String(subject);
      let remaining = Number(count);
      let from = 0;
      while (remaining !== 0) {
        const at = result.indexOf(String(old), from);
        if (at === -1) break;
        result = result.slice(0, at) + String(replacement) + result.slice(at + String(old).length);
        from = at + String(replacement).length;
        remaining--;
        if (String(old) === '') break;
      }
      return result;
    },
    [[TYPE_STRING], [TYPE_STRING], [TYPE_STRING], [TYPE_NUMBER]],
  ],
  [
    'replace_all',
    ([subject, old, replacement]) => String(subject).replaceAll(String(old), String(replacement)),
    [[TYPE_STRING], [TYPE_STRING], [TYPE_STRING]],
  ],
  ['to_upper', ([value]) => String(value).toUpperCase(), [[TYPE_STRING]]],
  ['to_lower', ([value]) => String(value).toLowerCase(), [[TYPE_STRING]]],
  [
    'trim',
    ([value, cut]) => {
      const characters = new Set(String(cut));
      const chars = [...String(value)];
      let start = 0;
      let end = chars.length;
      while (start < end && characters.has(chars[start])) start++;
      while (end > start && characters.has(chars[end - 1])) end--;
      return chars.slice(start, end).join('');
    },
    [[TYPE_STRING], [TYPE_STRING]],
  ],
  [
    'trim_prefix',
    ([value, prefix]) =>
      String(value).startsWith(String(prefix)) ? String(value).slice(String(prefix).length) : value,
    [[TYPE_STRING], [TYPE_STRING]],
  ],
  ['split', ([value, separator]) => String(value).split(String(separator)), [[TYPE_STRING], [TYPE_STRING]]],
  [
    'regex_replace_all',
    ([pattern, value, replacement]) =>
      goRegex(String(pattern)).matcher(text(value)).replaceAll(String(replacement)),
    [[TYPE_STRING], [TYPE_STRING, TYPE_NUMBER], [TYPE_STRING, TYPE_NUMBER]],
  ],
  [
    'regex_replace_all_literal',
    ([pattern, value, replacement]) =>
      goRegex(String(pattern))
        .matcher(text(value))
        .replaceAll(() => text(replacement)),
    [[TYPE_STRING], [TYPE_STRING, TYPE_NUMBER], [TYPE_STRING, TYPE_NUMBER]],
  ],
  [
    'regex_match',
    ([pattern, value]) => goRegex(String(pattern)).test(text(value)),
    [[TYPE_STRING], [TYPE_STRING, TYPE_NUMBER]],
  ],
  [
    'pattern_match',
    ([pattern, value]) => wildcardMatches(String(pattern), text(value)),
    [[TYPE_STRING], [TYPE_STRING, TYPE_NUMBER]],
  ],
  [
    'label_match',
    ([selector, labels]) =>
      isRecord(selector) &&
      isRecord(labels) &&
      Object.entries(selector).every(([key, value]) => labels[key] === value),
    [[TYPE_OBJECT], [TYPE_OBJECT]],
  ],
  [
    'to_boolean',
    ([value]) => {
      const lowered = String(value).toLowerCase();
      if (lowered === 'true') return true;
      if (lowered === 'false') return false;
      throw new KyvernoRuleError(`to_boolean: ${String(value)} is not a boolean`);
    },
    [[TYPE_STRING]],
  ],
  // Numbers, quantities and durations, as Kyverno's arithmetic takes them (kyverno-arithmetic.ts).
  ['add', ([a, b]) => kyvernoAdd(a, b), [[TYPE_ANY], [TYPE_ANY]]],
  ['subtract', ([a, b]) => kyvernoSubtract(a, b), [[TYPE_ANY], [TYPE_ANY]]],
  ['multiply', ([a, b]) => kyvernoMultiply(a, b), [[TYPE_ANY], [TYPE_ANY]]],
  ['divide', ([a, b]) => kyvernoDivide(a, b), [[TYPE_ANY], [TYPE_ANY]]],
  ['modulo', ([a, b]) => kyvernoModulo(a, b), [[TYPE_ANY], [TYPE_ANY]]],
  ['sum', ([items]) => kyvernoSum(items), [[TYPE_ARRAY]]],
  [
    'round',
    ([value, digits]) => {
      const factor = 10 ** Number(digits);
      return Math.round(Number(value) * factor) / factor;
    },
    [[TYPE_NUMBER], [TYPE_NUMBER]],
  ],
  ['base64_decode', ([value]) => Buffer.from(String(value), 'base64').toString('utf8'), [[TYPE_STRING]]],
  ['base64_encode', ([value]) => Buffer.from(String(value), 'utf8').toString('base64'), [[TYPE_STRING]]],
  [
    'truncate',
    ([value, length]) => [...String(value)].slice(0, Math.max(0, Number(length))).join(''),
    [[TYPE_STRING], [TYPE_NUMBER]],
  ],
  ['parse_json', ([value]) => JSON.parse(String(value)) as unknown, [[TYPE_STRING]]],
  ['parse_yaml', ([value]) => parseYaml(String(value)) as unknown, [[TYPE_STRING]]],
  [
    'lookup',
    ([collection, key]) => {
      if (Array.isArray(collection)) return collection[numberOf(key, 'lookup')] ?? null;
      if (isRecord(collection)) return collection[String(key)] ?? null;
      return null;
    },
    [
      [TYPE_OBJECT, TYPE_ARRAY],
      [TYPE_STRING, TYPE_NUMBER],
    ],
  ],
  [
    'items',
    ([collection, keyName, valueName]) => {
      if (Array.isArray(collection))
        return collection.map((item, index) => ({
          [String(keyName)]: index,
          [String(valueName)]: item as unknown,
        }));
      return Object.keys(collection as Record<string, unknown>)
        .sort()
        .map((key) => ({
          [String(keyName)]: key,
          [String(valueName)]: (collection as Record<string, unknown>)[key],
        }));
    },
    [[TYPE_OBJECT, TYPE_ARRAY], [TYPE_STRING], [TYPE_STRING]],
  ],
  [
    'object_from_lists',
    ([keys, values]) =>
      Object.fromEntries(
        (keys as unknown[]).map((key, index) => [String(key), (values as unknown[])[index] ?? null]),
      ),
    [[TYPE_ARRAY], [TYPE_ARRAY]],
  ],
];

const IMPURE_FUNCTIONS = [
  'time_now',
  'time_now_utc',
  'time_since',
  'random',
  'x509_decode',
  'image_normalize',
  'is_external_url',
];

let registered = false;

function registerKyvernoFunctions(): void {
  if (registered) return;
  registered = true;
  for (const [name, implementation, signature] of KYVERNO_FUNCTIONS)
    registerFunction(
      name,
      (args) => implementation(args) as JSONValue,
      signature.map((types) => ({ types })),
      { override: true, warn: false },
    );
  for (const name of IMPURE_FUNCTIONS)
    registerFunction(
      name,
      () => {
        throw new NotEvaluable(`it calls ${name}, whose result depends on when or where Kyverno runs`);
      },
      [{ types: [TYPE_ANY], variadic: true, optional: true }],
      { override: true, warn: false },
    );
}

type Expression = ReturnType<typeof compile>;

// A plain path (fields, indexes, quoted names, literals, `@`) only selects a part of its input, in
// time linear in its own text: it runs here. Everything else (functions, projections, filters,
// multiselects, comparisons, pipes) can build values of any size with no checkpoint inside the
// interpreter (24 context variables `[v, v]` then `to_string(v24)`: 23 s, then out of memory), so
// it runs in the evaluation isolate (guard/evaluation-isolate.ts), bounded by the guard's time
// left and the isolate's heap, and what comes back is refused there past MAX_RESULT_LENGTH.
const PLAIN_PATH_NODES = new Set([
  'Field',
  'Subexpression',
  'IndexExpression',
  'Index',
  'Identity',
  'Current',
  'Literal',
]);

function isPlainPath(node: unknown): boolean {
  if (node === null || typeof node !== 'object') return true;
  const { type, left, right, children } = node as {
    type?: unknown;
    left?: unknown;
    right?: unknown;
    children?: unknown;
  };
  if (typeof type !== 'string' || !PLAIN_PATH_NODES.has(type)) return false;
  if (Array.isArray(children) && !children.every(isPlainPath)) return false;
  return isPlainPath(left) && isPlainPath(right);
}

const compiled = new Map<string, { ast: Expression; plainPath: boolean }>();
const CACHE_LIMIT = 2000;

function compiledExpression(expression: string): { ast: Expression; plainPath: boolean } {
  let known = compiled.get(expression);
  if (!known) {
    let ast: Expression;
    try {
      ast = compile(expression);
    } catch (error) {
      throw new KyvernoRuleError(
        `invalid JMESPath ${expression}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (compiled.size >= CACHE_LIMIT) compiled.clear();
    known = { ast, plainPath: isPlainPath(ast) };
    compiled.set(expression, known);
  }
  return known;
}

function queryInIsolate(expression: string, data: unknown): unknown {
  const guard = activeGuard();
  const { replies, finished, starting } = evaluationIsolate.call(
    { kind: 'jmespath', expression, data },
    guard ? guard.remainingWallMilliseconds(Number.POSITIVE_INFINITY) : Number.POSITIVE_INFINITY,
  );
  guard?.checkDeadline();
  const reply = replies[0];
  if (starting)
    throw new NotEvaluable(
      'the evaluation isolate that runs JMESPath is restarting after an evaluation that ran out of time; ask again in a moment',
    );
  if (!finished || reply === undefined) {
    if (guard) guard.stopAtDeadline('a JMESPath expression did not finish in time');
    throw new NotEvaluable('the JMESPath expression did not finish in the time an evaluation may take');
  }
  if (reply.kind === 'jmespath') return reply.value;
  if (reply.kind === 'jmespath-error' && reply.error === 'rule-error')
    throw new KyvernoRuleError(reply.message);
  throw new NotEvaluable(
    reply.kind === 'jmespath-error' ? reply.message : 'the isolate answered something else',
  );
}

/** Evaluates an expression; a syntax or type error is Kyverno's rule error. */
export function queryJmesPath(expression: string, data: unknown): unknown {
  registerKyvernoFunctions();
  const { ast, plainPath } = compiledExpression(expression);
  // In the isolate itself (not the main thread), every expression runs where it is.
  if (!plainPath && isMainThread) return queryInIsolate(expression, data);
  try {
    return TreeInterpreter.search(ast, data as JSONValue);
  } catch (error) {
    if (error instanceof NotEvaluable || error instanceof KyvernoRuleError) throw error;
    throw new KyvernoRuleError(error instanceof Error ? error.message : String(error));
  }
}
