import { isRecord, type KubernetesObject } from '../../../model/kubernetes';
import { compileCel, type CelProgram } from './cel-program';

// A ValidatingAdmissionPolicy compiled once per revision: the index keeps one object per revision,
// so a WeakMap on it drops the programs together with the revision they belong to.

export interface CompiledExpression {
  expression: string;
  program: CelProgram;
}

/**
 * `object.spec.template.spec.containers.all(c, <body>)`, or the same over a variable that stands for
 * an object field: evaluated per element for the evidence.
 */
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
  /**
   * The object field each variable stands for, when its expression starts with one (`containers` →
   * `spec.template.spec.containers`), for evidence paths of validations written over variables.
   */
  variablePaths: ReadonlyMap<string, string>;
  failurePolicy: 'Fail' | 'Ignore';
  matchConditions: Array<CompiledExpression & { name: string }>;
  variables: Array<CompiledExpression & { name: string }>;
  validations: CompiledValidation[];
  paramKind?: { apiVersion: string; kind: string };
  /**
   * Why the API server refuses to store this policy (its own validation), when it does: such a
   * policy never exists in a cluster, so it admits everything. Only the paramKind is checked here.
   */
  refusedBecause?: string;
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

// `object.a.b.all(x, <body>)` or `variables.v.c.all(x, <body>)` over a whole expression.
const ALL_OVER_LIST =
  /^\s*(object|variables)((?:\.[A-Za-z_]\w*)+)\.all\(\s*([A-Za-z_]\w*)\s*,([\s\S]*)\)\s*$/;
const FIRST_REFERENCE = /\b(object|variables)((?:\.[A-Za-z_]\w*)+)(\()?/;

/** A reference's field path: `object.a.b` → `a.b`; `variables.v.c` → v's path + `.c` ('' if v has none). */
function referencePath(root: string, segments: string[], variablePaths: ReadonlyMap<string, string>): string {
  if (root === 'object') return segments.join('.');
  const [variable, ...rest] = segments;
  const base = variablePaths.get(variable) ?? '';
  return base === '' ? '' : [base, ...rest].join('.');
}

/**
 * The field path of the first `object.` or `variables.` reference of an expression, a trailing call
 * dropped (`object.spec.containers.all(` → `spec.containers`); '' when there is none to name.
 */
export function firstReferencePath(expression: string, variablePaths: ReadonlyMap<string, string>): string {
  const match = FIRST_REFERENCE.exec(expression);
  if (!match) return '';
  const segments = match[2].slice(1).split('.');
  if (match[3]) segments.pop();
  return referencePath(match[1], segments, variablePaths);
}

function iterationOf(
  expression: string,
  variablePaths: ReadonlyMap<string, string>,
): IterationShape | undefined {
  const match = ALL_OVER_LIST.exec(expression);
  if (!match || !isBalanced(match[4])) return undefined;
  const listPath = referencePath(match[1], match[2].slice(1).split('.'), variablePaths);
  if (listPath === '') return undefined;
  return {
    listPath,
    list: compileCel(`${match[1]}${match[2]}`),
    variable: match[3],
    body: compileCel(match[4]),
  };
}

/** Each variable's field path, in order: a variable may be written over an earlier one. */
function variablePathsOf(
  variables: ReadonlyArray<{ name: string; expression: string }>,
): Map<string, string> {
  const paths = new Map<string, string>();
  for (const variable of variables) {
    const path = firstReferencePath(variable.expression, paths);
    if (path !== '') paths.set(variable.name, path);
  }
  return paths;
}

function readValidations(value: unknown, variablePaths: ReadonlyMap<string, string>): CompiledValidation[] {
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
      const iteration = iterationOf(expression, variablePaths);
      if (iteration) validation.iteration = iteration;
      return validation;
    });
}

const DNS1035_LABEL = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The API server's validation of `spec.paramKind` (validateParamKind in
 * pkg/apis/admissionregistration/validation): `apiVersion` and `kind` are required, the group a DNS
 * subdomain, the version and the lowercased kind DNS labels. A paramKind written as `group`,
 * `version` (as in an old documentation example) is refused for its unknown fields (kube-apiserver
 * v1.34.4: "strict decoding error: unknown field ..."), and without them it has no apiVersion.
 */
function paramKindProblem(paramKind: Record<string, unknown>): string | undefined {
  const { apiVersion, kind } = paramKind;
  // kubectl decodes strictly: a field v1 does not have is refused before validation.
  const unknownFields = Object.keys(paramKind).filter((field) => field !== 'apiVersion' && field !== 'kind');
  if (unknownFields.length > 0)
    return `strict decoding error: ${unknownFields.map((field) => `unknown field "spec.paramKind.${field}"`).join(', ')}`;
  if (typeof apiVersion !== 'string' || apiVersion === '') return 'spec.paramKind.apiVersion: Required value';
  const parts = apiVersion.split('/');
  const [group, version] = parts.length === 2 ? parts : ['', parts[0]];
  if (parts.length > 2 || (group !== '' && (group.length > 253 || !DNS1123_SUBDOMAIN.test(group))))
    return `spec.paramKind.apiVersion: Invalid value: ${JSON.stringify(apiVersion)}`;
  if (!DNS1035_LABEL.test(version))
    return `spec.paramKind.apiVersion: Invalid value: ${JSON.stringify(apiVersion)}: version must be specified`;
  if (typeof kind !== 'string' || kind === '') return 'spec.paramKind.kind: Required value';
  if (!DNS1035_LABEL.test(kind.toLowerCase()))
    return `spec.paramKind.kind: Invalid value: ${JSON.stringify(kind)}`;
  return undefined;
}

export function compilePolicy(policy: KubernetesObject): CompiledPolicy {
  const cached = cache.get(policy);
  if (cached) return cached;
  const spec = isRecord(policy.spec) ? policy.spec : {};
  const paramKind = isRecord(spec.paramKind) ? spec.paramKind : undefined;
  const variables = namedExpressions(spec.variables);
  const variablePaths = variablePathsOf(variables);
  const result: CompiledPolicy = {
    name: policy.metadata?.name ?? '',
    failurePolicy: spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    matchConditions: namedExpressions(spec.matchConditions),
    variables,
    variablePaths,
    validations: readValidations(spec.validations, variablePaths),
    sources: [],
  };
  if (paramKind) {
    const problem = paramKindProblem(paramKind);
    if (problem) result.refusedBecause = problem;
    else result.paramKind = { apiVersion: paramKind.apiVersion as string, kind: paramKind.kind as string };
  }
  result.sources = [
    ...result.matchConditions.map((entry) => entry.expression),
    ...result.variables.map((entry) => entry.expression),
    ...result.validations.flatMap((entry) => [entry.expression, entry.messageExpression?.expression ?? '']),
  ];
  cache.set(policy, result);
  return result;
}
