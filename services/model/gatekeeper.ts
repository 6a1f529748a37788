import { isRecord, type KubernetesObject } from './kubernetes';

// Gatekeeper's own objects as the adapter (listing) and the verdict engine (evaluation) both read
// them: a ConstraintTemplate's code per engine, and the Config's namespaces the webhook skips.
// Readers throw GatekeeperShapeError on a malformed object; callers turn it into a parse error or
// an `unknown` verdict.

export const GATEKEEPER_CONSTRAINT_GROUP = 'constraints.gatekeeper.sh';
export const GATEKEEPER_TEMPLATE_GROUP = 'templates.gatekeeper.sh';
export const GATEKEEPER_CONFIG_GROUP = 'config.gatekeeper.sh';
/** The one target of admission (and audit, and gator) templates. */
export const ADMISSION_TARGET = 'admission.k8s.gatekeeper.sh';

export class GatekeeperShapeError extends Error {}

export interface RegoCode {
  rego: string;
  libs: string[];
  /** `v1` when the template says so; otherwise Gatekeeper parses v1 first and falls back to v0. */
  version?: string;
}

/** The K8sNativeValidation source: a ValidatingAdmissionPolicy spec's CEL parts. */
export interface CelCode {
  validations: unknown[];
  variables: unknown[];
  matchConditions: unknown[];
  failurePolicy: 'Fail' | 'Ignore';
}

export interface ConstraintTemplateCode {
  /** The constraint kind this template creates (`spec.crd.spec.names.kind`). */
  kind: string;
  rego?: RegoCode;
  cel?: CelCode;
}

function stringList(value: unknown, where: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((entry) => typeof entry === 'string'))
    throw new GatekeeperShapeError(`${where} must be a list of strings`);
  return value;
}

function listOf(value: unknown, where: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new GatekeeperShapeError(`${where} must be a list`);
  return value;
}

function readCel(source: Record<string, unknown>, where: string): CelCode {
  const failurePolicy = source.failurePolicy ?? 'Fail';
  if (failurePolicy !== 'Fail' && failurePolicy !== 'Ignore')
    throw new GatekeeperShapeError(`${where}.failurePolicy must be Fail or Ignore`);
  return {
    validations: listOf(source.validations, `${where}.validations`),
    variables: listOf(source.variables, `${where}.variables`),
    matchConditions: listOf(source.matchConditions, `${where}.matchConditions`),
    failurePolicy,
  };
}

function readRegoSource(source: Record<string, unknown>, where: string): RegoCode {
  if (typeof source.rego !== 'string') throw new GatekeeperShapeError(`${where}.rego must be a string`);
  const code: RegoCode = { rego: source.rego, libs: stringList(source.libs, `${where}.libs`) };
  if (typeof source.version === 'string') code.version = source.version;
  return code;
}

/**
 * The code of the admission target: `rego`/`libs` at the target's top level (v1beta1 style) or
 * `code: [{engine: Rego | K8sNativeValidation, source}]` (Gatekeeper 3.13+).
 */
export function readConstraintTemplate(template: KubernetesObject): ConstraintTemplateCode {
  const spec = isRecord(template.spec) ? template.spec : {};
  const crd = isRecord(spec.crd) && isRecord(spec.crd.spec) ? spec.crd.spec : {};
  const names = isRecord(crd.names) ? crd.names : {};
  if (typeof names.kind !== 'string' || names.kind === '')
    throw new GatekeeperShapeError('spec.crd.spec.names.kind must be a non-empty string');
  const result: ConstraintTemplateCode = { kind: names.kind };
  const targets = listOf(spec.targets, 'spec.targets');
  targets.forEach((target, index) => {
    const where = `spec.targets[${index}]`;
    if (!isRecord(target)) throw new GatekeeperShapeError(`${where} must be an object`);
    if (target.target !== ADMISSION_TARGET) return;
    if (target.rego !== undefined && target.rego !== null) {
      const rego = readRegoSource(target, where);
      if (rego.rego.trim() !== '') result.rego = rego;
    }
    listOf(target.code, `${where}.code`).forEach((code, codeIndex) => {
      const codeWhere = `${where}.code[${codeIndex}]`;
      if (!isRecord(code) || !isRecord(code.source))
        throw new GatekeeperShapeError(`${codeWhere} must have a source object`);
      if (code.engine === 'K8sNativeValidation') result.cel = readCel(code.source, `${codeWhere}.source`);
      else if (code.engine === 'Rego') result.rego = readRegoSource(code.source, `${codeWhere}.source`);
    });
  });
  return result;
}

/** Gatekeeper names a template after its constraint kind, lower-cased. */
export function templateNameOf(constraintKind: string): string {
  return constraintKind.toLowerCase();
}

/** Processes whose exclusions keep the admission webhook away from a namespace. */
const WEBHOOK_PROCESSES = new Set(['*', 'webhook']);

/** Namespaces (prefix/suffix globs allowed) Gatekeeper's Config exempts from its admission webhook. */
export function webhookExcludedNamespaces(config: KubernetesObject): string[] {
  const spec = isRecord(config.spec) ? config.spec : {};
  const excluded: string[] = [];
  listOf(spec.match, 'spec.match').forEach((entry, index) => {
    if (!isRecord(entry)) throw new GatekeeperShapeError(`spec.match[${index}] must be an object`);
    const processes = stringList(entry.processes, `spec.match[${index}].processes`);
    if (!processes.some((process) => WEBHOOK_PROCESSES.has(process))) return;
    excluded.push(...stringList(entry.excludedNamespaces, `spec.match[${index}].excludedNamespaces`));
  });
  return excluded;
}

/** Gatekeeper reads only the Config named `config` (in its own namespace). */
export const GATEKEEPER_CONFIG_NAME = 'config';
