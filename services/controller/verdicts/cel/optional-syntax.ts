import { parse } from '@bufbuild/cel';

// CEL's optional syntax (`obj.?field`, `list[?index]`, `[?element]`, `{?key: value}`), which
// Kubernetes enables in admission policies (cel-go's OptionalTypes library). @bufbuild/cel 0.6.1's
// parser has no option for it (docs/decisions.md), so an expression that uses it is rewritten before
// parsing into calls the parser accepts, each standing for exactly one piece of optional syntax at
// the same place in the tree; after parsing, those calls become the optional operators in the syntax
// tree. Not under cel-go's names (`_?._`, `_[?_]`): @bufbuild/cel's planner takes those for its own
// unfinished optional access, which yields the bare value rather than an optional. The functions they
// call are in optional-library.ts.
//
//   x.?f        → x[@select("f")]            → @optional_select(x, "f")
//   x[?e]       → x[@index(e)]               → @optional_index(x, e)
//   [?e, f]     → @list([@element(e), f])     (the list keeps only present optional elements)
//   {?k: v}     → @map({k: @entry(v)})       (the map keeps only present optional entries)
//
// As in cel-go, a field selection or index on an optional result is optional too (`x.?a.b` is none
// when `a` is absent). The marker names below cannot collide with a policy's own functions: they
// start with `__optional_`, which no Kubernetes or CEL library function does.

type ParsedExpression = ReturnType<typeof parse>;
type Expression = ParsedExpression['expr'];
type Call = Extract<Expression['exprKind'], { case: 'callExpr' }>['value'];

/** Operator names no CEL source can spell (`@` is not a CEL character). */
export const OPTIONAL_SELECT = '@optional_select';
export const OPTIONAL_INDEX = '@optional_index';
export const MARKERS = {
  select: '__optional_select__',
  index: '__optional_index__',
  list: '__optional_list__',
  element: '__optional_element__',
  map: '__optional_map__',
  entry: '__optional_entry__',
} as const;

/** Optional syntax this rewrite cannot place faithfully (an optional field of a message literal). */
export class UnsupportedOptionalSyntax extends Error {}

interface Frame {
  kind: 'group' | 'index' | 'optional-index' | 'list' | 'map' | 'message';
  /** Where the opening bracket sits in the output, to wrap a list or map that has optional parts. */
  start: number;
  hasOptional: boolean;
  /** An optional element or entry value is open and closes at the next `,` or closing bracket. */
  wrapperOpen: boolean;
  /** An optional map entry's key is being read: its value is wrapped after the `:`. */
  optionalKey: boolean;
}

const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)[uU]?/y;
const STRING_PREFIX = /(?:[rR][bB]?|[bB][rR]?)?(?:'''|"""|'|")/y;

function readString(source: string, at: number): number {
  STRING_PREFIX.lastIndex = at;
  const match = STRING_PREFIX.exec(source);
  if (!match) return at;
  const raw = /[rR]/.test(match[0]);
  const quote = match[0].replace(/^[rRbB]+/, '');
  let index = at + match[0].length;
  while (index < source.length) {
    if (!raw && source[index] === '\\') index += 2;
    else if (source.startsWith(quote, index)) return index + quote.length;
    else index++;
  }
  return index;
}

function nextNonSpace(source: string, at: number): number {
  let index = at;
  while (index < source.length && /\s/.test(source[index])) index++;
  return index;
}

/** One pass over an expression's characters, copying them with optional syntax replaced. */
class OptionalSyntaxRewriter {
  private readonly out: string[] = [];
  private readonly frames: Frame[] = [];
  private afterOperand = false;
  private index = 0;

  constructor(private readonly source: string) {}

  run(): string {
    while (this.index < this.source.length) {
      if (!this.copyToken()) this.punctuation(this.source[this.index++]);
    }
    return this.out.join('');
  }

  private top(): Frame | undefined {
    return this.frames[this.frames.length - 1];
  }

  /** Whitespace, a comment, a string, an identifier or a number, copied as it is. */
  private copyToken(): boolean {
    const { source, index } = this;
    let end = index;
    let operand = this.afterOperand;
    if (/\s/.test(source[index])) end = index + 1;
    else if (source.startsWith('//', index)) {
      const newline = source.indexOf('\n', index);
      end = newline === -1 ? source.length : newline;
    } else if (readString(source, index) !== index) {
      end = readString(source, index);
      operand = true;
    } else {
      IDENTIFIER.lastIndex = index;
      NUMBER.lastIndex = index;
      const word = IDENTIFIER.exec(source) ?? NUMBER.exec(source);
      if (!word) return false;
      end = index + word[0].length;
      operand = word[0] !== 'in';
    }
    this.out.push(source.slice(index, end));
    this.index = end;
    this.afterOperand = operand;
    return true;
  }

  private open(kind: Frame['kind'], text: string): void {
    this.out.push(text);
    this.frames.push({
      kind,
      start: this.out.length - 1,
      hasOptional: false,
      wrapperOpen: false,
      optionalKey: false,
    });
  }

  /** At the start of a list element or map entry: a `?` makes it optional. */
  private elementStart(): void {
    const frame = this.top();
    const next = nextNonSpace(this.source, this.index);
    if (!frame || this.source[next] !== '?') return;
    if (frame.kind === 'message') throw new UnsupportedOptionalSyntax('optional fields of message literals');
    this.out.push(this.source.slice(this.index, next));
    this.index = next + 1;
    frame.hasOptional = true;
    if (frame.kind === 'list') {
      this.out.push(`${MARKERS.element}(`);
      frame.wrapperOpen = true;
    } else frame.optionalKey = true;
  }

  private closeWrapper(): void {
    const frame = this.top();
    if (frame?.wrapperOpen) {
      this.out.push(')');
      frame.wrapperOpen = false;
    }
  }

  /** `.f` or `.?f`. */
  private select(): void {
    const question = nextNonSpace(this.source, this.index);
    if (this.source[question] !== '?') {
      this.out.push('.');
      this.afterOperand = false;
      return;
    }
    const start = nextNonSpace(this.source, question + 1);
    IDENTIFIER.lastIndex = start;
    const field = IDENTIFIER.exec(this.source);
    if (!field) throw new UnsupportedOptionalSyntax('`.?` without a field name');
    this.out.push(`[${MARKERS.select}(${JSON.stringify(field[0])})]`);
    this.index = start + field[0].length;
    this.afterOperand = true;
  }

  /** An index (`x[e]`, `x[?e]`) after an operand, else a list literal. */
  private bracket(): void {
    if (!this.afterOperand) {
      this.open('list', '[');
      this.elementStart();
    } else {
      const question = nextNonSpace(this.source, this.index);
      if (this.source[question] === '?') {
        this.open('optional-index', `[${MARKERS.index}(`);
        this.index = question + 1;
      } else this.open('index', '[');
    }
    this.afterOperand = false;
  }

  private close(character: string): void {
    this.closeWrapper();
    const frame = this.frames.pop();
    this.out.push(frame?.kind === 'optional-index' ? `)${character}` : character);
    if (frame?.hasOptional) {
      const marker = frame.kind === 'list' ? MARKERS.list : MARKERS.map;
      this.out[frame.start] = `${marker}(${this.out[frame.start]}`;
      this.out.push(')');
    }
    this.afterOperand = true;
  }

  private punctuation(character: string): void {
    const frame = this.top();
    switch (character) {
      case '.':
        return this.select();
      case '[':
        return this.bracket();
      case '{':
        this.open(this.afterOperand ? 'message' : 'map', '{');
        this.afterOperand = false;
        return this.elementStart();
      case ',':
        this.closeWrapper();
        this.out.push(',');
        this.afterOperand = false;
        if (frame && frame.kind !== 'group' && frame.kind !== 'index' && frame.kind !== 'optional-index')
          this.elementStart();
        return;
      case ':':
        this.out.push(':');
        this.afterOperand = false;
        if (frame?.optionalKey) {
          this.out.push(`${MARKERS.entry}(`);
          frame.optionalKey = false;
          frame.wrapperOpen = true;
        }
        return;
      case ']':
      case ')':
      case '}':
        return this.close(character);
      case '?':
        // A conditional: its `:` would be read as the end of an optional entry's key.
        if (frame?.optionalKey) throw new UnsupportedOptionalSyntax('a conditional in an optional map key');
        break;
      case '(':
        this.open('group', '(');
        this.afterOperand = false;
        return;
    }
    this.out.push(character);
    this.afterOperand = false;
  }
}

/** The expression with optional syntax replaced by marker calls; unchanged when it has none. */
export function rewriteOptionalSyntax(source: string): string {
  return source.includes('?') ? new OptionalSyntaxRewriter(source).run() : source;
}

function callOf(expression: Expression): Call | undefined {
  return expression.exprKind.case === 'callExpr' ? expression.exprKind.value : undefined;
}

/** Whether an expression's value is an optional, by its syntax (as cel-go's checker would type it). */
function isOptionalValued(expression: Expression): boolean {
  const call = callOf(expression);
  if (!call) return false;
  if (call.function === OPTIONAL_SELECT || call.function === OPTIONAL_INDEX) return true;
  const target = call.target;
  if (
    target?.exprKind.case === 'identExpr' &&
    target.exprKind.value.name === 'optional' &&
    ['of', 'none', 'ofNonZeroValue'].includes(call.function)
  )
    return true;
  return call.function === 'or' && target !== undefined && isOptionalValued(target);
}

/** `_[_](x, marker(e))` → the optional operator over (x, e); `_[_]` or `.f` on an optional: optional. */
function toOptionalOperators(expression: Expression, nextId: () => bigint): void {
  const kind = expression.exprKind;
  switch (kind.case) {
    case 'selectExpr': {
      const operand = kind.value.operand;
      if (!operand) return;
      toOptionalOperators(operand, nextId);
      if (kind.value.testOnly || !isOptionalValued(operand)) return;
      const field = kind.value.field;
      const fieldName = {
        $typeName: 'cel.expr.Expr',
        id: nextId(),
        exprKind: {
          case: 'constExpr',
          value: { $typeName: 'cel.expr.Constant', constantKind: { case: 'stringValue', value: field } },
        },
      } as unknown as Expression;
      expression.exprKind = {
        case: 'callExpr',
        value: { $typeName: 'cel.expr.Expr.Call', function: OPTIONAL_SELECT, args: [operand, fieldName] },
      } as unknown as Expression['exprKind'];
      return;
    }
    case 'callExpr': {
      if (kind.value.target) toOptionalOperators(kind.value.target, nextId);
      for (const argument of kind.value.args) toOptionalOperators(argument, nextId);
      if (kind.value.function !== '_[_]' || kind.value.args.length !== 2) return;
      const [operand, key] = kind.value.args;
      const marker = callOf(key);
      if (
        marker &&
        (marker.function === MARKERS.select || marker.function === MARKERS.index) &&
        marker.args.length === 1
      ) {
        kind.value.function = marker.function === MARKERS.select ? OPTIONAL_SELECT : OPTIONAL_INDEX;
        kind.value.args = [operand, marker.args[0]];
      } else if (isOptionalValued(operand)) kind.value.function = OPTIONAL_INDEX;
      return;
    }
    case 'listExpr':
      for (const element of kind.value.elements) toOptionalOperators(element, nextId);
      return;
    case 'structExpr':
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === 'mapKey') toOptionalOperators(entry.keyKind.value, nextId);
        if (entry.value) toOptionalOperators(entry.value, nextId);
      }
      return;
    case 'comprehensionExpr': {
      const { iterRange, accuInit, loopCondition, loopStep, result } = kind.value;
      for (const part of [iterRange, accuInit, loopCondition, loopStep, result])
        if (part) toOptionalOperators(part, nextId);
      return;
    }
    default:
      return;
  }
}

function largestId(expression: Expression): bigint {
  let largest = expression.id;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (typeof value === 'object' && value !== null)
      for (const [key, item] of Object.entries(value)) {
        if (key === 'id' && typeof item === 'bigint' && item > largest) largest = item;
        else visit(item);
      }
  };
  visit(expression);
  return largest;
}

/** Parses CEL with Kubernetes' optional syntax; throws what `parse` throws on a syntax error. */
export function parseWithOptionalSyntax(source: string): ParsedExpression {
  const rewritten = rewriteOptionalSyntax(source);
  const parsed = parse(rewritten);
  if (rewritten === source && !source.includes('optional.')) return parsed;
  let id = largestId(parsed.expr);
  toOptionalOperators(parsed.expr, () => ++id);
  return parsed;
}
