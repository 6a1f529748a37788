import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { isDns1123Label, isRecord, type KubernetesObject } from '../../model/kubernetes';
import { describeWorkload } from '../../model/workload';
import { withFields } from '../../model/object-copy';
import type { IncomingMessage } from 'node:http';
import {
  admissionCheckCandidates,
  buildAdmissionCheck,
  namespaceOfObject,
  type AdmissionCheckRequest,
} from '../verdicts/admission-check';
import { isClusterScoped } from '../sources/manifest-parsing';
import type { ConstraintDraft } from '../../model/constraint';
import type { WorkloadDescriptor } from '../../model/workload';
import type { ResourceDependencies } from './resource-requests';
import { ADMISSION_CHECK_PATH } from '../../model/admission-query';
import { checkOfForwardedReview } from '../../model/forwarded-review';
import { ADMISSION_CHECK_VIEWS, type AdmissionCheckView, type DetailLevel } from '../../model/api';
import { AdmissionCheckMemo } from './admission-check-memo';
import { regoEngine } from '../verdicts/gatekeeper/rego-engine';
import { clockBoundOutcomeCount } from '../verdicts/guard/evaluation-guard';
import { apiViewLevel, bearerToken } from './api-auth';
import type { CallerReadAccess } from './caller-read-access';
import { operationOfApply, type FindExistingObject } from '../verdicts/existing-objects';
import type { Requester } from '../verdicts/types';

/** What the route needs of the app's dependencies (a subset, so this file does not import app.ts). */
export interface AdmissionCheckDependencies extends Pick<ResourceDependencies, 'index' | 'runtimeState'> {
  prospectiveFindings?: (workload: WorkloadDescriptor) => ConstraintDraft[];
  /**
   * Changes whenever `prospectiveFindings` may answer differently (the companion inventory). Without
   * it, answers are not remembered when `prospectiveFindings` is given.
   */
  prospectiveRevision?: () => number;
  /**
   * The stored object a request without `operation` would update (`forewarn check`, issue 31):
   * such a request is checked as the API server will see the apply. Absent: it is a CREATE.
   */
  findExisting?: FindExistingObject;
  /** Told whether each admission check was answered from the memo (the memo hit-rate metric). */
  observeMemo?: (outcome: AdmissionMemoOutcome) => void;
  /**
   * Whether the source's first sync has completed, read on every check without building the runtime
   * state (a cluster source's status visits every watch); absent: `runtimeState().source.synced`.
   */
  isSynced?: () => boolean;
}

function isSynced(dependencies: AdmissionCheckDependencies): boolean {
  return dependencies.isSynced ? dependencies.isSynced() : dependencies.runtimeState().source.synced;
}

/**
 * `hit`: answered from the memo; `miss`: computed and remembered; `bypass`: computed and not
 * remembered (not synced yet, an error answer, or a body too large to keep).
 */
export type AdmissionMemoOutcome = 'hit' | 'miss' | 'bypass';

// `POST /api/v1/admission-check` (DESIGN.md 7b): the verdict of every constraint that applies to one
// object, given as the object or as the AdmissionReview the webhook forwards whole. Bodies up to
// 1 MiB (the API server's own object limit is larger, so the webhook falls back to the label query
// for bigger objects); invalid JSON or no object: 400; larger: 413; a forwarded review without an
// object to judge: 422 (the webhook then reads it itself).
// Unredacted only for the webhook: the app puts the TokenReview middleware (api-auth.ts) in front of
// this route, and the level it decided is the viewer's. The webhook's own requests usually take the
// plain fast path (admission-check-fast-path.ts), which gives the same answers.

/**
 * Browser security headers (helmet) on every route but admission-check: its only caller is the
 * webhook's HTTP client, for which a dozen browser headers are bytes to write and parse on every
 * admission review. It keeps `X-Content-Type-Options: nosniff`, the one that applies to any JSON body.
 */
export function securityHeadersExceptAdmissionCheck(securityHeaders: RequestHandler): RequestHandler {
  return (request, response, next) => {
    if (request.path !== ADMISSION_CHECK_PATH) return securityHeaders(request, response, next);
    response.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  };
}

export const ADMISSION_CHECK_BODY_LIMIT_BYTES = 1024 * 1024;

type Answer = { status: number; body: unknown };

function error(status: number, message: string): Answer {
  return { status, body: { error: message } };
}

interface CheckRequest extends AdmissionCheckRequest {
  view?: AdmissionCheckView;
}

/**
 * `userInfo` as the AdmissionReview carries it (`username`, `groups`): who makes the request, for
 * rules that depend on it (Kyverno subjects). Absent: not known. A string: what is wrong with it.
 */
function readRequester(value: unknown): Requester | undefined | string {
  if (value === undefined) return undefined;
  if (!isRecord(value) || typeof value.username !== 'string')
    return 'userInfo must be a JSON object with a string username';
  const groups = value.groups === undefined ? [] : value.groups;
  if (!Array.isArray(groups) || !groups.every((group) => typeof group === 'string'))
    return 'userInfo.groups must be a list of strings';
  return { username: value.username, groups: groups as string[] };
}

function readCheckRequest(body: unknown): Answer | CheckRequest {
  if (!isRecord(body) || !isRecord(body.object))
    return error(400, 'the request must be a JSON object {"object": {...}, "operation": "CREATE"|"UPDATE"}');
  const operation = body.operation === undefined ? 'CREATE' : body.operation;
  if (operation !== 'CREATE' && operation !== 'UPDATE')
    return error(400, 'operation must be CREATE or UPDATE');
  if (body.oldObject !== undefined && !isRecord(body.oldObject))
    return error(400, 'oldObject must be a JSON object');
  if (body.mayExist !== undefined && typeof body.mayExist !== 'boolean')
    return error(400, 'mayExist must be true or false');
  const requester = readRequester(body.userInfo);
  if (typeof requester === 'string') return error(400, requester);
  const view = body.view;
  if (view !== undefined && !(ADMISSION_CHECK_VIEWS as readonly unknown[]).includes(view))
    return error(400, `view must be one of: ${ADMISSION_CHECK_VIEWS.join(', ')}`);
  const object = body.object as KubernetesObject;
  if (typeof object.kind !== 'string' || typeof object.apiVersion !== 'string')
    return error(400, 'object must have a string kind and apiVersion');
  const metadata: unknown = body.object.metadata;
  if (metadata !== undefined && !isRecord(metadata))
    return error(400, 'object.metadata must be a JSON object');
  if (isRecord(metadata) && metadata.namespace !== undefined && typeof metadata.namespace !== 'string')
    return error(400, 'object.metadata.namespace must be a string');
  if (!isDns1123Label(namespaceOfObject(object)))
    return error(400, 'object.metadata.namespace is not a valid namespace name');
  return {
    object,
    ...(isRecord(body.oldObject) ? { oldObject: body.oldObject as KubernetesObject } : {}),
    operation,
    ...(operation === 'CREATE' && body.mayExist === true ? { mayExist: true } : {}),
    ...(requester ? { requester } : {}),
    // `forewarn check` sends Namespaces and other cluster-scoped objects; the webhook never does.
    ...(isClusterScoped(object.apiVersion, object.kind) ? { clusterScoped: true } : {}),
    ...(view === undefined ? {} : { view: view as AdmissionCheckView }),
  };
}

function readBodyFailure(failure: unknown): Answer | undefined {
  const type = isRecord(failure) ? failure.type : undefined;
  if (type === 'entity.too.large') return error(413, 'request body larger than 1 MiB');
  if (type === 'entity.parse.failed') return error(400, 'request body is not valid JSON');
  return undefined;
}

/** The state an answer depends on besides the body; undefined: do not remember answers. */
function memoState(dependencies: AdmissionCheckDependencies): string | undefined {
  // Gatekeeper Rego verdicts change when a template's compilation ends, the index unchanged.
  const state = `${dependencies.index.revision}/${regoEngine.revision}`;
  if (!dependencies.prospectiveFindings) return `${state}/-`;
  if (!dependencies.prospectiveRevision) return undefined;
  return `${state}/${dependencies.prospectiveRevision()}`;
}

function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** The request a body holds, or the answer to a body that holds none. */
function readBodyText(text: unknown): Answer | CheckRequest {
  // No body at all reads as "no object", as before; anything else must parse.
  const parsed = typeof text === 'string' && text !== '' ? parseJson(text) : { value: undefined };
  if (!parsed) return error(400, 'request body is not valid JSON');
  const body = parsed.value;
  // The webhook's forwarded review (model/forwarded-review.ts): checked as its own check body would be.
  if (isRecord(body) && body.review !== undefined) {
    const forwarded = checkOfForwardedReview(body.review, body.view);
    return forwarded.ok ? readCheckRequest(forwarded.fields) : error(forwarded.status, forwarded.problem);
  }
  return readCheckRequest(body);
}

function computeAnswer(
  dependencies: AdmissionCheckDependencies,
  checkRequest: Answer | CheckRequest,
  level: DetailLevel,
  levelOf?: (constraint: ConstraintDraft) => DetailLevel,
  synced: boolean = isSynced(dependencies),
): Answer {
  if ('status' in checkRequest) return checkRequest;
  if (!synced) return error(503, 'the index has not completed its first sync yet');
  const workload = describeWorkload(checkRequest.object, namespaceOfObject(checkRequest.object));
  const prospective =
    workload && dependencies.prospectiveFindings ? dependencies.prospectiveFindings(workload) : [];
  const options = { prospective, viewer: { level }, ...(levelOf ? { levelOf } : {}) };
  return {
    status: 200,
    body: checkRequest.view
      ? buildAdmissionCheck(
          dependencies.index,
          checkRequest,
          withFields(options, { view: checkRequest.view }),
        )
      : buildAdmissionCheck(dependencies.index, checkRequest, options),
  };
}

/** An answer ready to send: its status and its JSON text. */
export interface SerialisedAnswer {
  status: number;
  json: string;
}

/**
 * Answers one admission-check body (read as text) for one viewer level. Identical bodies are
 * answered from the memo without parsing while the state they depend on is unchanged. Shared by the
 * express route and the plain fast path (admission-check-fast-path.ts).
 */
export type AdmissionCheckAnswerer = (text: unknown, level: DetailLevel) => SerialisedAnswer;

export function createAdmissionCheckAnswerer(
  dependencies: AdmissionCheckDependencies,
): AdmissionCheckAnswerer {
  const memo = new AdmissionCheckMemo();
  return (text, level) => {
    // Answers for different levels are kept apart: the memo keeps each body's answers by level.
    const key = typeof text === 'string' ? text : undefined;
    const synced = isSynced(dependencies);
    const state = synced ? memoState(dependencies) : undefined;
    const remembered = state !== undefined && key !== undefined ? memo.lookup(state, key, level) : undefined;
    if (remembered !== undefined) {
      dependencies.observeMemo?.('hit');
      return { status: 200, json: remembered };
    }
    const clockBoundBefore = clockBoundOutcomeCount();
    const answer = computeAnswer(dependencies, readBodyText(text), level, undefined, synced);
    const json = JSON.stringify(answer.body);
    // An answer a deadline or a restarting isolate decided in part may be decided when asked again.
    const remembers =
      answer.status === 200 &&
      state !== undefined &&
      key !== undefined &&
      clockBoundOutcomeCount() === clockBoundBefore;
    if (remembers) memo.remember(state, key, json, level);
    dependencies.observeMemo?.(remembers && memo.has(state, key, level) ? 'miss' : 'bypass');
    return { status: answer.status, json };
  };
}

/**
 * Answers a caller that is not the webhook for its own RBAC (issue 24): every constraint the check
 * may show whose source it may `get` is rendered at `full`. Such answers belong to one caller, so
 * they bypass the memo (never read from it, never written to it); an answer in which the caller may
 * read nothing is the same for every caller at that level and comes from the memo as before.
 */
export type CallerAdmissionCheckAnswerer = (
  text: unknown,
  level: DetailLevel,
  request: IncomingMessage,
) => Promise<SerialisedAnswer>;

/**
 * A body without `operation` (what `forewarn check` sends) asks for the operation an apply would be:
 * whether the object exists decides CREATE or UPDATE with the stored object as `oldObject`. The
 * webhook always says its operation. A cheap textual test first: only bodies that may lack it are parsed.
 */
export function mayAskForOperation(text: unknown): boolean {
  return typeof text === 'string' && !text.includes('"operation"');
}

async function withAppliedOperation(
  dependencies: AdmissionCheckDependencies,
  text: unknown,
): Promise<unknown> {
  if (!dependencies.findExisting || !mayAskForOperation(text)) return text;
  const parsed = parseJson(text as string);
  if (!parsed || !isRecord(parsed.value) || !isRecord(parsed.value.object)) return text;
  const body = parsed.value;
  if (body.operation !== undefined || body.oldObject !== undefined) return text;
  const object = body.object as KubernetesObject;
  const applied = await operationOfApply(object, dependencies.findExisting);
  // The answer now depends on the stored object: it is part of the body, so of the memo's key.
  return JSON.stringify({ ...body, ...applied });
}

export function createCallerAdmissionCheckAnswerer(
  dependencies: AdmissionCheckDependencies,
  answerer: AdmissionCheckAnswerer,
  access: CallerReadAccess | undefined,
): CallerAdmissionCheckAnswerer {
  return async (received, level, request) => {
    const text = await withAppliedOperation(dependencies, received);
    // The webhook (`full`), callers without a token and controllers that do not ask: no review.
    if (!access || level === 'full' || bearerToken(request) === undefined) return answerer(text, level);
    const checkRequest = readBodyText(text);
    if ('status' in checkRequest || !isSynced(dependencies)) return answerer(text, level);
    const candidates = admissionCheckCandidates(dependencies.index, checkRequest);
    const allowed: ReadonlySet<ConstraintDraft> =
      candidates.length === 0 ? new Set() : await access.readableConstraints(request, candidates);
    if (allowed.size === 0) return answerer(text, level);
    const answer = computeAnswer(dependencies, checkRequest, level, (constraint) =>
      allowed.has(constraint) ? 'full' : level,
    );
    dependencies.observeMemo?.('bypass');
    return { status: answer.status, json: JSON.stringify(answer.body) };
  };
}

export function admissionCheckHandler(answerer: CallerAdmissionCheckAnswerer): RequestHandler {
  // The body is read as text so that an identical body is answered from the memo without parsing.
  const readBody = express.text({ limit: ADMISSION_CHECK_BODY_LIMIT_BYTES, type: () => true });
  return (request: Request, response: Response, next: NextFunction) => {
    readBody(request, response, (failure?: unknown) => {
      if (failure) {
        const answer = readBodyFailure(failure);
        return answer ? response.status(answer.status).json(answer.body) : next(failure);
      }
      // Runs after the body stream ended, outside express's own try/catch: errors go to next().
      // The level the TokenReview middleware decided (api-auth.ts): part of what an answer depends on.
      answerer(request.body, apiViewLevel(response), request)
        .then((answer) => {
          response.status(answer.status).type('application/json').send(answer.json);
        })
        .catch(next);
    });
  };
}
