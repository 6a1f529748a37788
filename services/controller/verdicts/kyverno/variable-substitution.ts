import { jsonLengthWithin } from '../guard/bounded-size';
import { NotEvaluable } from './kyverno-errors';

// Kyverno's `{{ }}` substitution as data, never code (issue 32). Kyverno replaces each variable by
// its printed value and scans the result again, up to ten rounds, so that nested variables
// (`{{ regex_match('^v', '{{request.object.metadata.name}}') }}`) work; done that way here, an
// object's own text became JMESPath (an image `{{request.operation}}` came back `CREATE`) and
// `String.replace` read `$&`, `` $` ``, `$'` in a value as patterns: one 844-byte Pod ran the
// controller out of memory. Here:
// - only the policy's text is scanned: each resolved value is kept aside and the text holds a
//   placeholder for it, so a value is never scanned for variables again;
// - a value used inside an enclosing variable's expression enters it as a JMESPath literal of the
//   value (in a raw string `'...'` escaped, in a quoted identifier `"..."` escaped, elsewhere a
//   `` `json` `` literal or, after a dot, a quoted identifier): the nested variables of real policies
//   give what Kyverno gives, and a value cannot close the literal and become an expression;
// - values are inserted by slicing, never by `String.replace`;
// - a printed value, and the string built, are at most MAX_SUBSTITUTED_LENGTH long: a value that
//   shares its parts (JMESPath `[v, v]`) is measured without printing it (guard/bounded-size.ts).

/** Longest string a substitution builds: the API server's largest request (3 MiB), with room. */
export const MAX_SUBSTITUTED_LENGTH = 4 * 1024 * 1024;

/** An innermost variable, not escaped with a backslash (one level of `{}` allowed inside). */
const VARIABLE = /(?<!\\)\{\{((?:\{[^{}]*\}|[^{}])*)\}\}/g;
const ROUNDS = 10;
// Private-use characters around a value's number: a placeholder the variable pattern never matches.
const OPEN = '\uE000';
const CLOSE = '\uE001';
const PLACEHOLDER = /\uE000(\d+)\uE001/g;

function tooLong(): never {
  throw new NotEvaluable(
    `a substituted value is longer than the ${MAX_SUBSTITUTED_LENGTH} characters a substitution may build here`,
  );
}

/** The value as Kyverno prints it into text: strings as they are, the rest as JSON. */
export function printedValue(value: unknown, checkpoint?: () => void): string {
  if (typeof value === 'string') {
    if (value.length > MAX_SUBSTITUTED_LENGTH) tooLong();
    return value;
  }
  if (jsonLengthWithin(value ?? null, MAX_SUBSTITUTED_LENGTH, checkpoint) === undefined) tooLong();
  return JSON.stringify(value ?? null);
}

/** Where in a JMESPath expression a position is: inside which kind of quotes, if any. */
function quoteAt(expression: string, position: number): "'" | '"' | '`' | undefined {
  let quote: "'" | '"' | '`' | undefined;
  for (let index = 0; index < position; index++) {
    const character = expression[index];
    if (quote !== undefined && character === '\\') index++;
    else if (quote === undefined && (character === "'" || character === '"' || character === '`'))
      quote = character;
    else if (character === quote) quote = undefined;
  }
  return quote;
}

/** A resolved value as a JMESPath literal at `position` of the enclosing expression. */
function literalIn(expression: string, position: number, value: unknown): string {
  const printed = printedValue(value);
  switch (quoteAt(expression, position)) {
    case "'":
      return printed.replaceAll('\\', '\\\\').replaceAll("'", "\\'");
    case '"':
      return JSON.stringify(printed).slice(1, -1);
    case '`':
      return JSON.stringify(value ?? null).replaceAll('`', '\\`');
    default:
      return /\.\s*$/.test(expression.slice(0, position))
        ? JSON.stringify(printed)
        : `\`${JSON.stringify(value ?? null).replaceAll('`', '\\`')}\``;
  }
}

/**
 * Substitutes the variables of one string. `resolve` evaluates one variable's expression (without
 * its braces and `-`); a string that is one variable becomes its value, of any type.
 */
export function substituteText(
  text: string,
  resolve: (expression: string) => unknown,
  checkpoint: () => void,
): unknown {
  const values: unknown[] = [];
  let template = text;
  for (let round = 0; round < ROUNDS; round++) {
    let rebuilt = '';
    let last = 0;
    let found = false;
    for (const match of template.matchAll(VARIABLE)) {
      checkpoint();
      found = true;
      let expression = match[1].trim();
      // `{{- }}` asks Kyverno not to substitute inside the value: no value is ever substituted here.
      if (expression.startsWith('-')) expression = expression.slice(1).trim();
      // Values of inner variables enter the expression as literals, never as its text.
      expression = expression.replace(PLACEHOLDER, (_placeholder, number: string, offset: number) =>
        literalIn(expression, offset, values[Number(number)]),
      );
      const value = resolve(expression);
      if (match[0] === template) return value;
      values.push(value);
      rebuilt += `${template.slice(last, match.index)}${OPEN}${values.length - 1}${CLOSE}`;
      last = match.index + match[0].length;
    }
    if (!found) break;
    template = rebuilt + template.slice(last);
  }
  // A string that is only a value is that value, whatever its type.
  const only = /^\uE000(\d+)\uE001$/.exec(template);
  if (only) return values[Number(only[1])];
  let result = '';
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    result += template.slice(last, match.index).replaceAll('\\{{', '{{');
    result += printedValue(values[Number(match[1])], checkpoint);
    if (result.length > MAX_SUBSTITUTED_LENGTH) tooLong();
    last = match.index + match[0].length;
  }
  return result + template.slice(last).replaceAll('\\{{', '{{');
}
