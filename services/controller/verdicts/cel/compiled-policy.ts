import { isRecord, type KubernetesObject } from '../../../model/kubernetes';
import { compileCel, type CelProgram } from './cel-program';

// A ValidatingAdmissionPolicy compiled once per revision: the index keeps one object per revision,
// so a WeakMap on it drops the programs together with the revision they belong to.

export interface CompiledExpression {
  expression: string;
  program: CelProgram;
}

/** `object.spec.template.spec.containers.all(c, <body>)`: evaluated per element for the evidence. */
export interface IterationShape {
  /** `spec.template.spec.containers`. */
  listPath: string;
  list: CelProgram;
  variable: string;
  body: CelProgram;
}

export interface CompiledValidation extends CompiledExpression {
  message?: string;
  messageExpression?: CompiledExpression;
  reason?: string;
  iteration?: IterationShape;
}

export interface CompiledPolicy {
  name: string;
  failurePolicy: 'Fail' | 'Ignore';
  matchConditions: Array<CompiledExpression & { name: string }>;
  variables: Array<CompiledExpression & { name: string }>;
  validations: CompiledValidation[];
  paramKind?: { apiVersion: string; kind: string };
  /** Every expression's text, to spot what needs a requester (request.userInfo, authorizer). */
  sources: string[];
}

const cache = new WeakMap<KubernetesObject, CompiledPolicy>();

function compiled(expression: string): CompiledExpression {
  return { expression, program: compileCel(expression) };
}

function namedExpressions(value: unknown): Array<CompiledExpression & { name: string }> {
  if (!Array.isArray(value)) return [];
  return value
    .filter(isRecord)
    .filter((entry) => typeof entry.expression === 'string')
    .map((entry) => ({
      name: typeof entry.name === 'string' ? entry.name : '',
      ...compiled(entry.expression as string),
    }));
}

/** The closing parenthesis that ends a body must be the expression's last character. */
function isBalanced(body: string): boolean {
  let depth = 0;
  let quote: string | null = null;
  for (const character of body) {
    if (quote) {
      if (character === quote) quote = null;
      continue;
    }
    if (character === '"' || character === "'") quote = character;
    else if (character === '(' || character === '[') depth++;
    else if (character === ')' || character === ']') {
      depth--;
      if (depth < 0) return false;
    }
  }
  return depth === 0;
}

const ALL_OVER_LIST = /^\s*object((?:\.[A-Za-z_]\w*)+)\.all\(\s*([A-Za-z_]\w*)\s*,([\s\S]*)\)\s*$/;

function iterationOf(expression: string): IterationShape | undefined {
  const match = ALL_OVER_LIST.exec(expression);
  if (!match || !isBalanced(match[3])) return undefined;
  return {
    listPath: match[1].slice(1),
    list: compileCel(`object${match[1]}`),
    variable: match[2],
    body: compileCel(match[3]),
  };
}

function readValidations(value: unknown): CompiledValidation[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter(isRecord)
    .filter((entry) => typeof entry.expression === 'string')
    .map((entry) => {
      const expression = entry.expression as string;
      const validation: CompiledValidation = { ...compiled(expression) };
      if (typeof entry.message === 'string') validation.message = entry.message;
      if (typeof entry.messageExpression === 'string')
        validation.messageExpression = compiled(entry.messageExpression);
      if (typeof entry.reason === 'string') validation.reason = entry.reason;
      const iteration = iterationOf(expression);
      if (iteration) validation.iteration = iteration;
      return validation;
    });
}

export function compilePolicy(policy: KubernetesObject): CompiledPolicy {
  const cached = cache.get(policy);
  if (cached) return cached;
  const spec = isRecord(policy.spec) ? policy.spec : {};
  const paramKind = isRecord(spec.paramKind) ? spec.paramKind : undefined;
  const result: CompiledPolicy = {
    name: policy.metadata?.name ?? '',
    failurePolicy: spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    matchConditions: namedExpressions(spec.matchConditions),
    variables: namedExpressions(spec.variables),
    validations: readValidations(spec.validations),
    sources: [],
  };
  if (paramKind && typeof paramKind.kind === 'string')
    result.paramKind = {
      apiVersion: typeof paramKind.apiVersion === 'string' ? paramKind.apiVersion : 'v1',
      kind: paramKind.kind,
    };
  result.sources = [
    ...result.matchConditions.map((entry) => entry.expression),
    ...result.variables.map((entry) => entry.expression),
    ...result.validations.flatMap((entry) => [entry.expression, entry.messageExpression?.expression ?? '']),
  ];
  cache.set(policy, result);
  return result;
}
