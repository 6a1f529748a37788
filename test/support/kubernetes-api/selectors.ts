import { badRequest } from './api-status';
import { objectField, stringField, stringMapField, type JsonObject, type JsonValue } from './json';

// `labelSelector` and `fieldSelector` query parameters, parsed with the grammar of apimachinery's
// `labels.Parse` and `fields.ParseSelector`. Written here rather than borrowed from the product code
// so that a selector bug in Forewarn cannot be mirrored (and hidden) by the server it is tested against.

type LabelOperator =
  'exists' | 'doesNotExist' | 'equals' | 'notEquals' | 'in' | 'notIn' | 'greaterThan' | 'lessThan';

interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

/** Splits `a in (x, y),!b,c!=d` into words and the punctuation that separates them. */
function tokenize(selector: string): string[] {
  const tokens: string[] = [];
  let index = 0;
  while (index < selector.length) {
    const char = selector[index];
    if (/\s/.test(char)) {
      index += 1;
      continue;
    }
    const twoChars = selector.slice(index, index + 2);
    if (twoChars === '==' || twoChars === '!=') {
      tokens.push(twoChars);
      index += 2;
      continue;
    }
    if ('!=(),<>'.includes(char)) {
      tokens.push(char);
      index += 1;
      continue;
    }
    let end = index;
    while (end < selector.length && !/[\s!=(),<>]/.test(selector[end])) end += 1;
    tokens.push(selector.slice(index, end));
    index = end;
  }
  return tokens;
}

const OPERATOR_TOKENS: Readonly<Record<string, LabelOperator>> = {
  '=': 'equals',
  '==': 'equals',
  '!=': 'notEquals',
  in: 'in',
  notin: 'notIn',
  '>': 'greaterThan',
  '<': 'lessThan',
};

export class LabelSelectorQuery {
  private constructor(private readonly requirements: LabelRequirement[]) {}

  /** Parses the query parameter; a syntax error is the 400 BadRequest the real server answers. */
  static parse(selector: string): LabelSelectorQuery {
    const tokens = tokenize(selector);
    const requirements: LabelRequirement[] = [];
    let position = 0;
    const fail = (why: string) =>
      badRequest(`unable to parse requirement: ${why} in label selector "${selector}"`);
    const next = () => tokens[position++];
    while (position < tokens.length) {
      let token = next();
      if (token === '!') {
        const key = next();
        if (key === undefined || !LABEL_KEY.test(key)) throw fail('missing key after "!"');
        requirements.push({ key, operator: 'doesNotExist', values: [] });
      } else {
        if (!LABEL_KEY.test(token)) throw fail(`invalid label key "${token}"`);
        const key = token;
        token = tokens[position];
        if (token === undefined || token === ',') {
          requirements.push({ key, operator: 'exists', values: [] });
        } else {
          position += 1;
          const operator = OPERATOR_TOKENS[token];
          if (operator === undefined) throw fail(`unknown operator "${token}"`);
          requirements.push({ key, operator, values: parseValues(operator) });
        }
      }
      const separator = next();
      if (separator !== undefined && separator !== ',') throw fail(`expected "," but found "${separator}"`);
      if (separator === ',' && position >= tokens.length) throw fail('trailing ","');
    }
    return new LabelSelectorQuery(requirements);

    function parseValues(operator: LabelOperator): string[] {
      if (operator === 'in' || operator === 'notIn') {
        if (next() !== '(') throw fail(`expected "(" after ${operator}`);
        const values: string[] = [];
        for (;;) {
          const value = next();
          if (value === ')' && values.length === 0) throw fail('values set cannot be empty');
          if (value === undefined || value === ',' || value === ')' || !LABEL_VALUE.test(value))
            throw fail(`invalid value "${value ?? ''}"`);
          values.push(value);
          const after = next();
          if (after === ')') return values;
          if (after !== ',') throw fail('expected "," or ")" in values set');
        }
      }
      const numeric = operator === 'greaterThan' || operator === 'lessThan';
      const value = tokens[position];
      if (value === undefined || value === ',') {
        if (numeric) throw fail(`${operator} needs an integer value`);
        // `k=` selects objects whose label k is the empty string.
        return [''];
      }
      position += 1;
      if (!LABEL_VALUE.test(value)) throw fail(`invalid value "${value}"`);
      if (numeric && !/^-?\d+$/.test(value))
        throw fail(`value "${value}" for ${operator} must be an integer`);
      return [value];
    }
  }

  matches(labels: Readonly<Record<string, string>>): boolean {
    return this.requirements.every((requirement) => {
      const has = Object.prototype.hasOwnProperty.call(labels, requirement.key);
      const value = labels[requirement.key];
      switch (requirement.operator) {
        case 'exists':
          return has;
        case 'doesNotExist':
          return !has;
        case 'equals':
        case 'in':
          return has && requirement.values.includes(value);
        case 'notEquals':
        case 'notIn':
          return !has || !requirement.values.includes(value);
        case 'greaterThan':
          return has && /^-?\d+$/.test(value) && Number(value) > Number(requirement.values[0]);
        case 'lessThan':
          return has && /^-?\d+$/.test(value) && Number(value) < Number(requirement.values[0]);
      }
      return false;
    });
  }
}

/** Field labels every kind supports, plus the few kind-specific ones the real registries add. */
const FIELD_LABELS_BY_KIND: Readonly<Record<string, string[]>> = {
  Pod: ['spec.nodeName', 'spec.serviceAccountName', 'status.phase'],
  Secret: ['type'],
  Namespace: ['status.phase'],
};

interface FieldRequirement {
  path: string;
  value: string;
  equal: boolean;
}

export class FieldSelectorQuery {
  private constructor(private readonly requirements: FieldRequirement[]) {}

  static parse(selector: string, kind: string): FieldSelectorQuery {
    const supported = ['metadata.name', 'metadata.namespace', ...(FIELD_LABELS_BY_KIND[kind] ?? [])];
    const requirements: FieldRequirement[] = [];
    for (const term of selector.split(',').map((part) => part.trim())) {
      if (term === '') continue;
      const match = /^([^=!]+)(==|=|!=)(.*)$/.exec(term);
      if (!match) throw badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
      const path = match[1].trim();
      if (!supported.includes(path)) throw badRequest(`field label not supported: ${path}`);
      requirements.push({ path, value: match[3].trim(), equal: match[2] !== '!=' });
    }
    return new FieldSelectorQuery(requirements);
  }

  matches(object: JsonObject): boolean {
    return this.requirements.every((requirement) => {
      const actual = fieldValue(object, requirement.path);
      return (actual === requirement.value) === requirement.equal;
    });
  }
}

/** A field's value as the real field-label functions render it (absent = empty string). */
function fieldValue(object: JsonObject, path: string): string {
  let current: JsonValue | undefined = object;
  for (const segment of path.split('.')) {
    current =
      current !== null && typeof current === 'object' && !Array.isArray(current)
        ? current[segment]
        : undefined;
  }
  return typeof current === 'string' ? current : '';
}

/** The selection a list, a watch or a deletecollection applies. */
export class ObjectFilter {
  constructor(
    readonly namespace: string | undefined,
    private readonly labels: LabelSelectorQuery | undefined,
    private readonly fields: FieldSelectorQuery | undefined,
  ) {}

  matches(object: JsonObject): boolean {
    const metadata = objectField(object, 'metadata');
    if (this.namespace !== undefined && stringField(metadata, 'namespace') !== this.namespace) return false;
    if (this.labels && !this.labels.matches(stringMapField(metadata, 'labels'))) return false;
    return !this.fields || this.fields.matches(object);
  }
}
