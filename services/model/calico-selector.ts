import type { Labels } from './kubernetes';

// Calico's selector expression language (docs.tigera.io, "Selectors" in the NetworkPolicy reference):
//   k == 'v'   k != 'v'   k in {'a','b'}   k not in {'a','b'}   has(k)   !has(k)
//   k contains 's'   k starts with 's'   k ends with 's'   all()   global()
//   !e   e && e   e || e   (e)
// `!` binds tightest, then `&&`, then `||`. `!=` and `not in` also match objects without the label;
// `==`, `in`, `contains`, `starts with`, `ends with` need it. An empty expression selects everything.
// No maintained npm package parses this language, so it is written here as a small recursive-descent
// parser whose tree is plain data (stored on constraints and compared as JSON).

export class CalicoSelectorError extends Error {}

export type CalicoSelectorNode =
  | { op: 'all' }
  | { op: 'global' }
  | { op: 'has'; key: string }
  | { op: '==' | '!=' | 'contains' | 'starts with' | 'ends with'; key: string; value: string }
  | { op: 'in' | 'not in'; key: string; values: string[] }
  | { op: 'not'; operand: CalicoSelectorNode }
  | { op: 'and' | 'or'; operands: CalicoSelectorNode[] };

type Token =
  { type: 'word'; value: string } | { type: 'string'; value: string } | { type: 'symbol'; value: string };

// Calico's label-key characters (its tokenizer's identifier class): letters, digits, `_ . / -`.
const WORD = /^[a-zA-Z0-9_./-]+/;
const SYMBOLS = ['&&', '||', '==', '!=', '!', '(', ')', '{', '}', ','];
const MAX_EXPRESSION_LENGTH = 4096;

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  let rest = expression;
  while (rest.length > 0) {
    const trimmed = rest.replace(/^\s+/, '');
    if (trimmed.length === 0) break;
    rest = trimmed;
    const quote = rest[0];
    if (quote === "'" || quote === '"') {
      const end = rest.indexOf(quote, 1);
      if (end === -1)
        throw new CalicoSelectorError(`unterminated string in selector ${JSON.stringify(expression)}`);
      tokens.push({ type: 'string', value: rest.slice(1, end) });
      rest = rest.slice(end + 1);
      continue;
    }
    const symbol = SYMBOLS.find((candidate) => rest.startsWith(candidate));
    if (symbol !== undefined) {
      tokens.push({ type: 'symbol', value: symbol });
      rest = rest.slice(symbol.length);
      continue;
    }
    const word = WORD.exec(rest);
    if (word === null)
      throw new CalicoSelectorError(
        `unexpected ${JSON.stringify(rest[0])} in selector ${JSON.stringify(expression)}`,
      );
    tokens.push({ type: 'word', value: word[0] });
    rest = rest.slice(word[0].length);
  }
  return tokens;
}

class Parser {
  private position = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly expression: string,
  ) {}

  parse(): CalicoSelectorNode {
    if (this.tokens.length === 0) return { op: 'all' };
    const node = this.parseOr();
    if (this.position < this.tokens.length) this.fail(`unexpected ${this.describe(this.peek())}`);
    return node;
  }

  private parseOr(): CalicoSelectorNode {
    const operands = [this.parseAnd()];
    while (this.acceptSymbol('||')) operands.push(this.parseAnd());
    return operands.length === 1 ? operands[0] : { op: 'or', operands };
  }

  private parseAnd(): CalicoSelectorNode {
    const operands = [this.parseUnary()];
    while (this.acceptSymbol('&&')) operands.push(this.parseUnary());
    return operands.length === 1 ? operands[0] : { op: 'and', operands };
  }

  private parseUnary(): CalicoSelectorNode {
    if (this.acceptSymbol('!')) return { op: 'not', operand: this.parseUnary() };
    if (this.acceptSymbol('(')) {
      const inner = this.parseOr();
      this.expectSymbol(')');
      return inner;
    }
    const word = this.expectWord();
    if ((word === 'all' || word === 'global' || word === 'has') && this.acceptSymbol('(')) {
      if (word === 'has') {
        const key = this.expectWord();
        this.expectSymbol(')');
        return { op: 'has', key };
      }
      this.expectSymbol(')');
      return { op: word };
    }
    return this.parseComparison(word);
  }

  private parseComparison(key: string): CalicoSelectorNode {
    if (this.acceptSymbol('==')) return { op: '==', key, value: this.expectString() };
    if (this.acceptSymbol('!=')) return { op: '!=', key, value: this.expectString() };
    if (this.acceptWord('in')) return { op: 'in', key, values: this.parseSet() };
    if (this.acceptWord('not')) {
      if (!this.acceptWord('in')) this.fail('expected "in" after "not"');
      return { op: 'not in', key, values: this.parseSet() };
    }
    if (this.acceptWord('contains')) return { op: 'contains', key, value: this.expectString() };
    for (const [first, op] of [
      ['starts', 'starts with'],
      ['ends', 'ends with'],
    ] as const) {
      if (this.acceptWord(first)) {
        if (!this.acceptWord('with')) this.fail(`expected "with" after "${first}"`);
        return { op, key, value: this.expectString() };
      }
    }
    return this.fail(`expected an operator after label ${JSON.stringify(key)}`);
  }

  private parseSet(): string[] {
    this.expectSymbol('{');
    const values: string[] = [];
    if (this.acceptSymbol('}')) return values;
    do values.push(this.expectString());
    while (this.acceptSymbol(','));
    this.expectSymbol('}');
    return values;
  }

  private peek(): Token | undefined {
    return this.tokens[this.position];
  }

  private acceptSymbol(symbol: string): boolean {
    const token = this.peek();
    if (token?.type !== 'symbol' || token.value !== symbol) return false;
    this.position++;
    return true;
  }

  private acceptWord(word: string): boolean {
    const token = this.peek();
    if (token?.type !== 'word' || token.value !== word) return false;
    this.position++;
    return true;
  }

  private expectSymbol(symbol: string): void {
    if (!this.acceptSymbol(symbol)) this.fail(`expected "${symbol}", found ${this.describe(this.peek())}`);
  }

  private expectWord(): string {
    const token = this.peek();
    if (token?.type !== 'word') return this.fail(`expected a label name, found ${this.describe(token)}`);
    this.position++;
    return token.value;
  }

  private expectString(): string {
    const token = this.peek();
    if (token?.type !== 'string') return this.fail(`expected a quoted value, found ${this.describe(token)}`);
    this.position++;
    return token.value;
  }

  private describe(token: Token | undefined): string {
    if (token === undefined) return 'the end';
    return token.type === 'string' ? `'${token.value}'` : `"${token.value}"`;
  }

  private fail(message: string): never {
    throw new CalicoSelectorError(`selector ${JSON.stringify(this.expression)}: ${message}`);
  }
}

/** Parses a Calico selector; throws CalicoSelectorError with the expression and what is wrong. */
export function parseCalicoSelector(expression: string): CalicoSelectorNode {
  if (expression.length > MAX_EXPRESSION_LENGTH)
    throw new CalicoSelectorError(`selector longer than ${MAX_EXPRESSION_LENGTH} characters`);
  return new Parser(tokenize(expression), expression).parse();
}

/** Whether a namespaced object (a pod, a namespace) with these labels is selected. */
export function matchesCalicoSelector(node: CalicoSelectorNode, labels: Labels): boolean {
  const has = (key: string) => Object.prototype.hasOwnProperty.call(labels, key);
  switch (node.op) {
    case 'all':
      return true;
    case 'global':
      // Selects non-namespaced entities (host endpoints, global network sets): never a pod.
      return false;
    case 'has':
      return has(node.key);
    case '==':
      return has(node.key) && labels[node.key] === node.value;
    case '!=':
      return !has(node.key) || labels[node.key] !== node.value;
    case 'in':
      return has(node.key) && node.values.includes(labels[node.key]);
    case 'not in':
      return !has(node.key) || !node.values.includes(labels[node.key]);
    case 'contains':
      return has(node.key) && labels[node.key].includes(node.value);
    case 'starts with':
      return has(node.key) && labels[node.key].startsWith(node.value);
    case 'ends with':
      return has(node.key) && labels[node.key].endsWith(node.value);
    case 'not':
      return !matchesCalicoSelector(node.operand, labels);
    case 'and':
      return node.operands.every((operand) => matchesCalicoSelector(operand, labels));
    case 'or':
      return node.operands.some((operand) => matchesCalicoSelector(operand, labels));
  }
}

/** Whether the selector can select no pod whatever its labels (a top-level `global()` conjunct). */
export function selectsOnlyGlobal(node: CalicoSelectorNode): boolean {
  if (node.op === 'global') return true;
  if (node.op === 'and') return node.operands.some(selectsOnlyGlobal);
  if (node.op === 'or') return node.operands.every(selectsOnlyGlobal);
  return false;
}
