import type { DetailLevel } from '../../model/api';
import { isDns1123Label, isRecord } from '../../model/kubernetes';
import type { ConstraintIndex } from '../index/constraint-index';
import { buildConstraintView, findConstraint } from '../views/constraint-view';
import { DetailLevelError, describeValue, resolveDetailLevel } from '../views/detail-level';
import { buildCapabilities, buildHealth, type RuntimeState } from '../views/health';
import { buildNamespaceReport } from '../views/report';
import { buildReferencedConstraint } from '../views/constraint-reference';
import { isOpaqueReference } from '../../model/opaque-reference';
import type { Constraint } from '../../model/constraint';
import type { RiskTracker } from '../risks/risk-tracker';
import { buildRisksReport, constraintsOfRisks } from '../risks/risk-view';

/** Whether the caller may read a constraint's source (caller-read-access.ts); absent: no caller rights. */
export type ReadableConstraint = (constraint: Constraint) => boolean;

/** Asks which of these constraints the caller of one request may read (a bound `readableConstraints`). */
export type ReadableConstraints = (constraints: readonly Constraint[]) => Promise<ReadonlySet<Constraint>>;

/**
 * `answerResourceRequest` for one caller: first asks which of the constraints involved it may read
 * (nothing is asked without `readable`, or when the answer is at `full` anyway), then renders.
 */
export async function answerResourceRequestFor(
  dependencies: ResourceDependencies,
  request: unknown,
  queryDetailLevels: readonly string[],
  readable: ReadableConstraints | undefined,
): Promise<ResourceAnswer> {
  const candidates = readable ? constraintsToReview(dependencies, request, queryDetailLevels) : [];
  if (!readable || candidates.length === 0)
    return answerResourceRequest(dependencies, request, queryDetailLevels);
  const allowed = await readable(candidates);
  return answerResourceRequest(dependencies, request, queryDetailLevels, (constraint) =>
    allowed.has(constraint),
  );
}

// The agent-protocol request form `{resource, params}` (spec 1, 4.1). The HTTP GET routes, `POST
// /resources` and the MCP server all answer through `answerResourceRequest`, so they cannot drift.

export interface ResourceDependencies {
  index: ConstraintIndex;
  runtimeState(): RuntimeState;
  /** The level set by `--detail-level`: the most any caller can see. */
  configuredDetailLevel: DetailLevel;
  clock(): Date;
  /** The workloads at risk (issue 35); absent, `risks` answers 404 and reports carry no count. */
  risks?: Pick<RiskTracker, 'risksInNamespace' | 'objectOf' | 'status' | 'atRiskCount'>;
}

export interface ResourceAnswer {
  status: number;
  body: unknown;
}

export type ResourceName = 'reports' | 'risks' | 'constraints' | 'references' | 'health' | 'capabilities';
export const RESOURCE_NAMES: readonly ResourceName[] = [
  'reports',
  'risks',
  'constraints',
  'references',
  'health',
  'capabilities',
];

const MAX_NAME_LENGTH = 512;
const NAME_SEGMENT = /^[A-Za-z0-9]([-A-Za-z0-9_.:]*[A-Za-z0-9])?$/;

/** Constraint names are object names, possibly with `/<part>` suffixes (DESIGN.md 3). */
export function isValidConstraintName(name: string): boolean {
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) return false;
  return name.split('/').every((segment) => segment.length <= 253 && NAME_SEGMENT.test(segment));
}

function error(status: number, message: string): ResourceAnswer {
  return { status, body: { error: message } };
}

function notSynced(): ResourceAnswer {
  return error(503, 'the index has not completed its first sync yet; retry in a few seconds');
}

function namespaceProblem(namespace: unknown): ResourceAnswer | undefined {
  if (typeof namespace !== 'string' || namespace === '') return error(400, 'params.namespace is required');
  if (!isDns1123Label(namespace))
    return error(
      400,
      `invalid namespace ${JSON.stringify(namespace.slice(0, 100))}: must be a DNS-1123 label of at most 63 characters`,
    );
  return undefined;
}

/** What a redacted name's opaque reference stands for: only for callers who may see every name. */
function answerReference(
  dependencies: ResourceDependencies,
  ref: unknown,
  levelOf: (constraint: Constraint | undefined) => DetailLevel,
  synced: boolean,
): ResourceAnswer {
  if (!isOpaqueReference(ref))
    return error(
      400,
      `params.ref must be an opaque reference (fw- and 16 hex digits), not ${describeValue(ref)}`,
    );
  const constraint = dependencies.index.constraintByReference(ref);
  // Refused before saying whether the reference exists: a 404 would confirm a guess.
  const level = levelOf(constraint);
  if (level !== 'full')
    return error(
      403,
      `looking up a reference needs the full detail level; this answer is at ${level} (the controller's --detail-level, or lower if requested, or full where your own RBAC lets you read the source)`,
    );
  if (!synced) return notSynced();
  if (!constraint) return error(404, `no constraint has reference ${ref} (it may have been removed)`);
  return { status: 200, body: buildReferencedConstraint(constraint, ref) };
}

/**
 * The constraints whose source the caller's rights are asked about before answering `request`
 * (issue 24): none when the request is malformed or already answered at `full`. The answer itself
 * then comes from `answerResourceRequest` with what the reviews said.
 */
export function constraintsToReview(
  dependencies: ResourceDependencies,
  request: unknown,
  queryDetailLevels: readonly string[] = [],
): Constraint[] {
  if (!isRecord(request) || !isRecord(request.params ?? {})) return [];
  const params = (request.params ?? {}) as Record<string, unknown>;
  let levels: { base: DetailLevel; elevated: DetailLevel };
  try {
    levels = requestLevels(dependencies, queryDetailLevels, params);
  } catch {
    return [];
  }
  if (levels.base === levels.elevated || !dependencies.runtimeState().source.synced) return [];
  const namespace = params.namespace;
  if (request.resource === 'references')
    return [dependencies.index.constraintByReference(params.ref as string)].filter(
      (constraint): constraint is Constraint => isOpaqueReference(params.ref) && constraint !== undefined,
    );
  if (typeof namespace !== 'string' || !isDns1123Label(namespace)) return [];
  const constraints = dependencies.index.constraintsForNamespace(namespace);
  if (request.resource === 'reports') return [...constraints];
  if (request.resource === 'risks' && dependencies.risks)
    return constraintsOfRisks(dependencies.risks.risksInNamespace(namespace));
  if (request.resource === 'constraints')
    return constraints.filter((constraint) => constraint.name === params.name);
  return [];
}

/**
 * The level of the request (`base`: the controller's, or lower if asked) and the level a constraint
 * the caller may read is shown at (`elevated`: `full`, or lower if asked).
 */
function requestLevels(
  dependencies: ResourceDependencies,
  queryDetailLevels: readonly string[],
  params: Record<string, unknown>,
): { base: DetailLevel; elevated: DetailLevel } {
  const requested = [...queryDetailLevels, params.detail_level, params.detailLevel];
  return {
    base: resolveDetailLevel(dependencies.configuredDetailLevel, ...requested),
    elevated: resolveDetailLevel('full', ...requested),
  };
}

/**
 * A namespace's report (with `atRiskCount`, an addition to schema 1) or its workloads at risk
 * (issue 35), at the request's level, per constraint where the caller's RBAC was asked.
 */
function answerNamespaceResource(
  dependencies: ResourceDependencies,
  resource: 'reports' | 'risks',
  params: Record<string, unknown>,
  level: DetailLevel,
  levelOf: ((constraint: Constraint) => DetailLevel) | undefined,
): ResourceAnswer {
  const problem = namespaceProblem(params.namespace);
  if (problem) return problem;
  const namespace = params.namespace as string;
  const { risks } = dependencies;
  if (resource === 'risks' && !risks)
    return error(404, 'workloads at risk are not tracked by this controller');
  if (!dependencies.runtimeState().source.synced) return notSynced();
  if (resource === 'risks' && risks)
    return { status: 200, body: buildRisksReport(risks, namespace, level, dependencies.clock(), levelOf) };
  const report = buildNamespaceReport(dependencies.index, namespace, level, dependencies.clock(), levelOf);
  // How many of the namespace's workloads would be rejected if applied again (docs/api.md).
  const atRiskCount = risks?.atRiskCount(namespace);
  return { status: 200, body: atRiskCount === undefined ? report : { ...report, atRiskCount } };
}

export function answerResourceRequest(
  dependencies: ResourceDependencies,
  request: unknown,
  queryDetailLevels: readonly string[] = [],
  readable?: ReadableConstraint,
): ResourceAnswer {
  if (!isRecord(request) || typeof request.resource !== 'string')
    return error(400, 'the request must be a JSON object {"resource": "...", "params": {...}}');
  const params = request.params === undefined ? {} : request.params;
  if (!isRecord(params)) return error(400, 'params must be a JSON object');
  let levels: { base: DetailLevel; elevated: DetailLevel };
  try {
    levels = requestLevels(dependencies, queryDetailLevels, params);
  } catch (failure) {
    if (failure instanceof DetailLevelError) return error(400, failure.message);
    throw failure;
  }
  const level = levels.base;
  const levelOf = readable
    ? (constraint: Constraint | undefined) =>
        constraint !== undefined && readable(constraint) ? levels.elevated : levels.base
    : () => level;
  const state = dependencies.runtimeState();
  switch (request.resource) {
    case 'health': {
      const health = buildHealth(dependencies.index, state, level);
      return { status: state.source.synced ? 200 : 503, body: health };
    }
    case 'capabilities':
      if (!state.source.synced) return notSynced();
      return { status: 200, body: buildCapabilities(dependencies.index, state) };
    case 'reports':
    case 'risks':
      return answerNamespaceResource(
        dependencies,
        request.resource,
        params,
        level,
        readable ? levelOf : undefined,
      );
    case 'constraints': {
      const problem = namespaceProblem(params.namespace);
      if (problem) return problem;
      const namespace = params.namespace as string;
      if (params.name === undefined) return error(400, 'params.name is required');
      if (typeof params.name !== 'string')
        return error(400, `params.name must be a string, not ${describeValue(params.name)}`);
      if (!isValidConstraintName(params.name))
        return error(400, `invalid constraint name ${describeValue(params.name)}`);
      if (!state.source.synced) return notSynced();
      const constraint = findConstraint(dependencies.index, namespace, params.name, level, levelOf);
      if (!constraint) return error(404, `constraint ${namespace}/${params.name} not found`);
      return {
        status: 200,
        body: buildConstraintView(dependencies.index, namespace, constraint, levelOf(constraint)),
      };
    }
    case 'references':
      return answerReference(dependencies, params.ref, levelOf, state.source.synced);
    default:
      return error(
        404,
        `unknown resource ${JSON.stringify(request.resource.slice(0, 100))}; known: ${RESOURCE_NAMES.join(', ')}`,
      );
  }
}
