import { celList, celMethod, CelScalar, listType, type CelFunc } from '@bufbuild/cel';

// Linear-time replacements for functions of @bufbuild/cel's strings extension whose own
// implementation is superlinear or differs from cel-go's (which the API server runs): `replace`
// rebuilds the whole string at every occurrence (quadratic: `docker.io/a` × 20,000 took 4 s) and
// ignores a negative count (cel-go: replace all); `split` with a count truncates like JavaScript's
// split instead of keeping the rest in the last element like Go's strings.SplitN; lowerAscii and
// upperAscii append one character at a time. Registered after the extension, each replaces the
// overload with the same signature (the resolver keeps the last one registered).

const S = CelScalar.STRING;
const I = CelScalar.INT;

/** Go's strings.Replace(text, old, replacement, limit): limit < 0 replaces every occurrence. */
export function replaceLinear(text: string, old: string, replacement: string, limit: number): string {
  if (limit === 0) return text;
  const parts: string[] = [];
  let replaced = 0;
  let position = 0;
  if (old === '') {
    // Go inserts the replacement before every rune and at the end, up to `limit` times.
    for (const character of text) {
      if (limit >= 0 && replaced >= limit) break;
      parts.push(replacement, character);
      position += character.length;
      replaced++;
    }
    if (limit < 0 || replaced < limit) parts.push(replacement);
    else parts.push(text.slice(position));
    return parts.join('');
  }
  while (limit < 0 || replaced < limit) {
    const found = text.indexOf(old, position);
    if (found === -1) break;
    parts.push(text.slice(position, found), replacement);
    position = found + old.length;
    replaced++;
  }
  parts.push(text.slice(position));
  return parts.join('');
}

/** Go's strings.SplitN(text, separator, limit): the last element keeps the rest; limit < 0: all. */
export function splitLinear(text: string, separator: string, limit: number): string[] {
  if (limit === 0) return [];
  if (limit === 1) return [text];
  if (separator === '') {
    const characters = Array.from(text);
    if (limit < 0 || characters.length <= limit) return characters;
    return [...characters.slice(0, limit - 1), characters.slice(limit - 1).join('')];
  }
  const parts: string[] = [];
  let position = 0;
  while (limit < 0 || parts.length < limit - 1) {
    const found = text.indexOf(separator, position);
    if (found === -1) break;
    parts.push(text.slice(position, found));
    position = found + separator.length;
  }
  parts.push(text.slice(position));
  return parts;
}

const UPPER_ASCII = /[A-Z]+/g;
const LOWER_ASCII = /[a-z]+/g;

export const LINEAR_STRING_FUNCTIONS: readonly CelFunc[] = [
  celMethod('replace', S, [S, S], S, function (old, replacement) {
    return replaceLinear(this, old, replacement, -1);
  }),
  celMethod('replace', S, [S, S, I], S, function (old, replacement, limit) {
    return replaceLinear(this, old, replacement, Number(limit));
  }),
  celMethod('split', S, [S], listType(S), function (separator) {
    return celList(splitLinear(this, separator, -1));
  }),
  celMethod('split', S, [S, I], listType(S), function (separator, limit) {
    return celList(splitLinear(this, separator, Number(limit)));
  }),
  celMethod('lowerAscii', S, [], S, function () {
    return this.replace(UPPER_ASCII, (run) => run.toLowerCase());
  }),
  celMethod('upperAscii', S, [], S, function () {
    return this.replace(LOWER_ASCII, (run) => run.toUpperCase());
  }),
];
