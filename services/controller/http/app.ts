import type { RequestListener } from 'node:http';
import express, {
  type ErrorRequestHandler,
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import helmet from 'helmet';
import {
  ADMISSION_CHECK_PATH,
  CONSTRAINT_LIST_PATH,
  decodeConstraintFilter,
  decodeQuerySubject,
} from '../../model/admission-query';
import type { ConstraintDraft } from '../../model/constraint';
import type { WorkloadDescriptor } from '../../model/workload';
import type { Logger } from '../../logging/logger';
import { buildConstraintList, constraintListCandidates } from '../views/constraint-list';
import { buildApiHealth } from '../views/health';
import { apiAccessMiddleware, apiViewLevel, bearerToken, type ApiAccess } from './api-auth';
import {
  admissionCheckHandler,
  createAdmissionCheckAnswerer,
  createCallerAdmissionCheckAnswerer,
  type AdmissionCheckAnswerer,
  type AdmissionMemoOutcome,
  securityHeadersExceptAdmissionCheck,
} from './admission-check-route';
import { admissionCheckFastPath } from './admission-check-fast-path';
import { admissionChecksBatchPath } from './admission-checks-batch-path';
import type { FindExistingObject } from '../verdicts/existing-objects';
import type { RequestObserver } from './request-observer';
import { jsonBodyTypeProblem } from './json-body-type';
import {
  answerResourceRequestFor,
  type ResourceAnswer,
  type ResourceDependencies,
} from './resource-requests';
import type { CallerReadAccess } from './caller-read-access';
import { impactHandler, type AnswerImpact } from './impact-route';

// The controller's HTTP surface (spec 4.1, 4.2; DESIGN.md 5): read-only JSON, errors as
// {"error": ...}, security headers, no CORS, a small body limit on the one POST route.

export interface ControllerAppDependencies extends ResourceDependencies {
  logger: Logger;
  /** Serves `/metrics`; absent when metrics are not wired (tests). */
  metricsHandler?: RequestHandler;
  /** Companion checks for the object being admitted (MissingResource at admission time). */
  prospectiveFindings?: (workload: WorkloadDescriptor) => ConstraintDraft[];
  /** Changes when `prospectiveFindings` may answer differently (admission-check answers are memoised). */
  prospectiveRevision?: () => number;
  /** Told whether each admission check was answered from the memo (metrics). */
  observeAdmissionMemo?: (outcome: AdmissionMemoOutcome) => void;
  /** Sees every request before routing (request metrics). */
  requestObserver?: RequestObserver;
  /**
   * Decides who reads the webhook API unredacted (http/api-auth.ts `createApiAccess`); absent, every
   * caller does (`--api-auth=none`).
   */
  apiAccess?: ApiAccess;
  /**
   * Renders each constraint at `full` for a caller whose own RBAC lets it `get` the source
   * (caller-read-access.ts, issue 24); absent, every caller gets the controller's level.
   */
  callerReadAccess?: CallerReadAccess;
  /** The stored object `forewarn check` would update (check/existing-objects.ts); absent: CREATE. */
  findExisting?: FindExistingObject;
  /** Answers `POST /api/v1/impact` (risks/impact.ts); absent: 404. */
  impact?: AnswerImpact;
  /** `runtimeState().source.synced` without building the state, for admission checks. */
  isSynced?: () => boolean;
}

/** Answers a resource request for the caller who sent `request` (its own RBAC, issue 24). */
function answerForCaller(
  dependencies: ControllerAppDependencies,
  request: Request,
  body: unknown,
  queryLevels: string[],
): Promise<ResourceAnswer> {
  const access = dependencies.callerReadAccess;
  return answerResourceRequestFor(
    dependencies,
    body,
    queryLevels,
    access ? (constraints) => access.readableConstraints(request, constraints) : undefined,
  );
}

const BODY_LIMIT = '64kb';

function send(response: Response, answer: ResourceAnswer): void {
  response.status(answer.status).json(answer.body);
}

/**
 * Every value the query gives for the detail level, however it was spelled: repeated
 * (`?detail_level=a&detail_level=b`) or with brackets (`?detail_level[]=a`). Each one counts, so a
 * caller cannot get more than the lowest level it asked for by repeating the parameter.
 */
function queryDetailLevels(request: Request): string[] {
  const values: string[] = [];
  for (const [key, value] of Object.entries(request.query)) {
    if (!/^detail_?level(\[[^\]]*\])?$/i.test(key)) continue;
    for (const item of Array.isArray(value) ? value : [value])
      if (typeof item === 'string') values.push(item);
  }
  return values;
}

function queryString(request: Request, name: string): string | undefined {
  const value = request.query[name];
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : '';
}

/**
 * The caller's mistakes that reach the error handler: body-parser failures on `POST /resources` and
 * undecodable percent-escapes in a path. They are answered with their own 4xx, never logged as a
 * bug; the messages are fixed texts so nothing the caller sent is echoed back.
 */
function describeClientError(failure: unknown): { status: number; message: string } | undefined {
  if (typeof failure !== 'object' || failure === null) return undefined;
  const status = 'status' in failure ? Number(failure.status) : NaN;
  const type = 'type' in failure ? failure.type : undefined;
  if (failure instanceof URIError && status === 400)
    return { status, message: 'the path contains an invalid percent-encoded sequence' };
  if (type === 'entity.too.large') return { status: 413, message: `request body larger than ${BODY_LIMIT}` };
  if (type === 'entity.parse.failed') return { status: 400, message: 'request body is not valid JSON' };
  if (type === 'charset.unsupported' || type === 'encoding.unsupported')
    return {
      status: 415,
      message: 'request body must be UTF-8 JSON, uncompressed or compressed with gzip, deflate or br',
    };
  if (status >= 400 && status < 500) return { status, message: 'the request could not be read' };
  return undefined;
}

/** Registers a read-only route: the method given answers, every other method gets 405. */
function readOnlyRoute(
  app: Express,
  path: string,
  allowed: 'GET' | 'POST',
  ...handlers: RequestHandler[]
): void {
  app[allowed === 'GET' ? 'get' : 'post'](path, ...handlers);
  app.all(path, (request, response) => {
    // Express answers HEAD with the GET handler; everything else is refused.
    response
      .status(405)
      .set('Allow', allowed === 'GET' ? 'GET, HEAD' : allowed)
      .json({
        error: `method ${request.method} not allowed on ${request.path}; this API is read-only, use ${allowed}`,
      });
  });
}

/** 415 for a POST body that is not UTF-8 `application/json` (json-body-type.ts). */
const requireJsonBody: RequestHandler = (request, response, next) => {
  const typeProblem = jsonBodyTypeProblem(request.headers);
  if (typeProblem) return send(response, { status: 415, body: { error: typeProblem } });
  next();
};

/** `GET /api/v1/constraints`: the admission query (services/model/admission-query.ts) answered. */
function constraintListRoute(dependencies: ControllerAppDependencies): RequestHandler {
  return (request, response, next) => {
    const parameter = (name: string) => queryString(request, name);
    const filter = decodeConstraintFilter(parameter);
    if (!filter.ok) return send(response, { status: 400, body: { error: filter.error } });
    if (!dependencies.runtimeState().source.synced)
      return send(response, {
        status: 503,
        body: { error: 'the index has not completed its first sync yet' },
      });
    const subject = decodeQuerySubject(parameter, filter.value);
    if (!subject.ok) return send(response, { status: 400, body: { error: subject.error } });
    const prospective =
      subject.value && dependencies.prospectiveFindings
        ? dependencies.prospectiveFindings(subject.value)
        : [];
    const level = apiViewLevel(response);
    const access = dependencies.callerReadAccess;
    // The webhook (`full`) and callers without a token: the shared list, no review (issue 24).
    if (!access || level === 'full' || bearerToken(request) === undefined)
      return response.json(buildConstraintList(dependencies.index, filter.value, prospective, level));
    const candidates = constraintListCandidates(dependencies.index, filter.value);
    const readable: Promise<ReadonlySet<ConstraintDraft>> =
      candidates.length === 0 ? Promise.resolve(new Set()) : access.readableConstraints(request, candidates);
    readable
      .then((allowed) => {
        const levelOf = (constraint: ConstraintDraft) => (allowed.has(constraint) ? 'full' : level);
        response.json(buildConstraintList(dependencies.index, filter.value, prospective, level, levelOf));
      })
      .catch(next);
  };
}

/** The route template express matched, for metrics labels. */
function routeTemplate(request: Request): string {
  const routePath: unknown = (request.route as { path?: unknown } | undefined)?.path;
  return typeof routePath === 'string' ? routePath : 'unmatched';
}

/** The agent-protocol routes (`/resources/...`), each answered for its caller (answerForCaller). */
function registerResourceRoutes(app: Express, dependencies: ControllerAppDependencies): void {
  const answer = (request: Request, response: Response, next: NextFunction, body: unknown) => {
    answerForCaller(dependencies, request, body, queryDetailLevels(request)).then(
      (result) => send(response, result),
      next,
    );
  };
  const resource = (
    request: Request,
    response: Response,
    next: NextFunction,
    body: Record<string, unknown>,
  ) => answer(request, response, next, body);

  readOnlyRoute(app, '/resources/reports/:namespace', 'GET', (request, response, next) =>
    resource(request, response, next, {
      resource: 'reports',
      params: { namespace: request.params.namespace },
    }),
  );
  readOnlyRoute(app, '/resources/risks/:namespace', 'GET', (request, response, next) =>
    resource(request, response, next, {
      resource: 'risks',
      params: { namespace: request.params.namespace },
    }),
  );
  readOnlyRoute(app, '/resources/constraints/:namespace/*name', 'GET', (request, response, next) => {
    const segments = (request.params as unknown as { name: string[] }).name;
    resource(request, response, next, {
      resource: 'constraints',
      params: { namespace: request.params.namespace, name: segments.join('/') },
    });
  });
  readOnlyRoute(app, '/resources/references/:ref', 'GET', (request, response, next) =>
    resource(request, response, next, { resource: 'references', params: { ref: request.params.ref } }),
  );
  readOnlyRoute(app, '/resources/health', 'GET', (request, response, next) =>
    resource(request, response, next, { resource: 'health' }),
  );
  readOnlyRoute(app, '/resources/capabilities', 'GET', (request, response, next) =>
    resource(request, response, next, { resource: 'capabilities' }),
  );
  readOnlyRoute(app, '/resources', 'POST', (request, response, next) => {
    const typeProblem = jsonBodyTypeProblem(request.headers);
    if (typeProblem) return send(response, { status: 415, body: { error: typeProblem } });
    express.json({ limit: BODY_LIMIT, type: () => true })(request, response, (failure?: unknown) => {
      if (failure) return next(failure);
      // This callback runs after the body stream ended, outside express's own try/catch: a throw
      // here would end the process, so it goes to the error handler instead.
      try {
        answer(request, response, next, request.body);
      } catch (unexpected) {
        next(unexpected);
      }
    });
  });
}

/** Admission checks for callers below `full`, by their own RBAC (issue 24); counted in the memo metric. */
function callerAnswerer(dependencies: ControllerAppDependencies, answerer: AdmissionCheckAnswerer) {
  const observed = { ...dependencies, observeMemo: dependencies.observeAdmissionMemo };
  return createCallerAdmissionCheckAnswerer(observed, answerer, dependencies.callerReadAccess);
}

/**
 * The controller's request listener: the webhook's admission checks on the plain fast path
 * (admission-check-fast-path.ts), everything else through express.
 */
export function createControllerApp(dependencies: ControllerAppDependencies): RequestListener {
  const answerer = createAdmissionCheckAnswerer({
    ...dependencies,
    observeMemo: dependencies.observeAdmissionMemo,
  });
  const app = createControllerRoutes(dependencies, answerer);
  const checkOptions = {
    answerer,
    forCaller: callerAnswerer(dependencies, answerer),
    access: dependencies.apiAccess,
    observe: dependencies.requestObserver,
    logger: dependencies.logger,
  };
  const fastPath = admissionCheckFastPath(checkOptions);
  const batchPath = admissionChecksBatchPath(checkOptions);
  return (request, response) => {
    if (!fastPath(request, response) && !batchPath(request, response)) app(request, response);
  };
}

/** Every route of the controller as an express app (the fast path answers a subset of one of them). */
export function createControllerRoutes(
  dependencies: ControllerAppDependencies,
  answerer: AdmissionCheckAnswerer = createAdmissionCheckAnswerer(dependencies),
): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(securityHeadersExceptAdmissionCheck(helmet()));
  const observe = dependencies.requestObserver;
  if (observe)
    app.use((request, response, next) => {
      observe(request, response, () => routeTemplate(request));
      next();
    });

  registerResourceRoutes(app, dependencies);

  // Unredacted for the webhook alone (api-auth.ts); both routes read the decided level with
  // `apiViewLevel(response)`.
  const apiAccess = apiAccessMiddleware(dependencies.apiAccess);
  readOnlyRoute(app, CONSTRAINT_LIST_PATH, 'GET', apiAccess, constraintListRoute(dependencies));
  // The body type is checked before the caller is: a refused request costs no TokenReview.
  const checkHandlers = [
    requireJsonBody,
    apiAccess,
    admissionCheckHandler(callerAnswerer(dependencies, answerer)),
  ];
  readOnlyRoute(app, ADMISSION_CHECK_PATH, 'POST', ...checkHandlers);
  // Read-only too: the proposed policies are evaluated on an overlay, never applied.
  readOnlyRoute(
    app,
    '/api/v1/impact',
    'POST',
    requireJsonBody,
    apiAccess,
    impactHandler(dependencies.impact, () => dependencies.runtimeState().source.synced),
  );
  readOnlyRoute(app, '/api/v1/health', 'GET', (_request, response) => {
    const health = buildApiHealth(dependencies.runtimeState());
    response.status(health.synced ? 200 : 503).json(health);
  });

  readOnlyRoute(app, '/healthz', 'GET', (_request, response) => {
    response.json({ status: 'ok' });
  });
  readOnlyRoute(app, '/readyz', 'GET', (_request, response) => {
    const synced = dependencies.runtimeState().source.synced;
    response.status(synced ? 200 : 503).json({ status: synced ? 'ready' : 'waiting for the first sync' });
  });
  if (dependencies.metricsHandler) readOnlyRoute(app, '/metrics', 'GET', dependencies.metricsHandler);

  app.use((request, response) => {
    response.status(404).json({ error: `no route ${request.method} ${request.path}; see docs/api.md` });
  });
  const handleError: ErrorRequestHandler = (failure: unknown, request, response, _next) => {
    const clientError = describeClientError(failure);
    if (clientError) return response.status(clientError.status).json({ error: clientError.message });
    dependencies.logger.error(
      { err: failure, path: request.path },
      'request failed; this is a bug, please report it',
    );
    response.status(500).json({ error: 'internal error; see the controller log' });
  };
  app.use(handleError);
  return app;
}
