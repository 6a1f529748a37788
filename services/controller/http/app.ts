import express, {
  type ErrorRequestHandler,
  type Express,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import helmet from 'helmet';
import { LabelSelectorError, parseLabelSet } from '../../model/label-selector';
import { isDns1123Label, isStringRecord } from '../../model/kubernetes';
import type { ConstraintDraft } from '../../model/constraint';
import type { WorkloadDescriptor } from '../../model/workload';
import { parseResourceTarget } from '../../model/resources';
import type { Logger } from '../../logging/logger';
import { buildConstraintList } from '../views/constraint-list';
import { buildApiHealth } from '../views/health';
import { admissionCheckHandler } from './admission-check-route';
import { answerResourceRequest, type ResourceAnswer, type ResourceDependencies } from './resource-requests';

// The controller's HTTP surface (spec 4.1, 4.2; DESIGN.md 5): read-only JSON, errors as
// {"error": ...}, security headers, no CORS, a small body limit on the one POST route.

export interface ControllerAppDependencies extends ResourceDependencies {
  logger: Logger;
  /** Serves `/metrics`; absent when metrics are not wired (tests). */
  metricsHandler?: RequestHandler;
  /** Companion checks for the object being admitted (MissingResource at admission time). */
  prospectiveFindings?: (workload: WorkloadDescriptor) => ConstraintDraft[];
  /** Sees every request before routing (request metrics). */
  requestObserver?: RequestHandler;
}

const BODY_LIMIT = '64kb';

function send(response: Response, answer: ResourceAnswer): void {
  response.status(answer.status).json(answer.body);
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

/**
 * The admitted object, when the webhook describes it (`kind`, `name`, `annotations` as JSON, `ports`
 * as port names): companion checks then cover an object that is not in the cluster yet.
 */
function admittedWorkload(
  request: Request,
  namespace: string,
  group: string,
  podLabels: Record<string, string>,
): WorkloadDescriptor | undefined | 'invalid' {
  const kind = queryString(request, 'kind');
  const name = queryString(request, 'name');
  if (kind === undefined || name === undefined) return undefined;
  if (!/^[A-Za-z][A-Za-z0-9]{0,62}$/.test(kind) || !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name))
    return 'invalid';
  let annotations: Record<string, string> = {};
  const annotationsParameter = queryString(request, 'annotations');
  if (annotationsParameter) {
    try {
      const parsed: unknown = JSON.parse(annotationsParameter);
      if (!isStringRecord(parsed)) return 'invalid';
      annotations = parsed;
    } catch {
      return 'invalid';
    }
  }
  const ports = queryString(request, 'ports');
  return {
    kind,
    apiVersion: group ? `${group}/v1` : 'v1',
    name,
    namespace,
    podLabels,
    annotations,
    portNames: ports ? ports.split(',').filter((port) => port !== '') : [],
  };
}

/** Registers a read-only route: the method given answers, every other method gets 405. */
function readOnlyRoute(app: Express, path: string, allowed: 'GET' | 'POST', handler: RequestHandler): void {
  app[allowed === 'GET' ? 'get' : 'post'](path, handler);
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

export function createControllerApp(dependencies: ControllerAppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(helmet());
  if (dependencies.requestObserver) app.use(dependencies.requestObserver);

  const resource = (request: Request, response: Response, body: Record<string, unknown>) =>
    send(response, answerResourceRequest(dependencies, body, queryString(request, 'detail_level')));

  readOnlyRoute(app, '/resources/reports/:namespace', 'GET', (request, response) =>
    resource(request, response, { resource: 'reports', params: { namespace: request.params.namespace } }),
  );
  readOnlyRoute(app, '/resources/constraints/:namespace/*name', 'GET', (request, response) => {
    const segments = (request.params as unknown as { name: string[] }).name;
    resource(request, response, {
      resource: 'constraints',
      params: { namespace: request.params.namespace, name: segments.join('/') },
    });
  });
  readOnlyRoute(app, '/resources/health', 'GET', (request, response) =>
    resource(request, response, { resource: 'health' }),
  );
  readOnlyRoute(app, '/resources/capabilities', 'GET', (request, response) =>
    resource(request, response, { resource: 'capabilities' }),
  );
  readOnlyRoute(app, '/resources', 'POST', (request, response, next) => {
    express.json({ limit: BODY_LIMIT, type: () => true })(request, response, (failure?: unknown) => {
      if (failure) return next(failure);
      send(response, answerResourceRequest(dependencies, request.body, queryString(request, 'detail_level')));
    });
  });

  readOnlyRoute(app, '/api/v1/constraints', 'GET', (request, response) => {
    const namespace = queryString(request, 'namespace');
    if (!namespace)
      return send(response, { status: 400, body: { error: 'query parameter namespace is required' } });
    if (!isDns1123Label(namespace))
      return send(response, {
        status: 400,
        body: { error: `invalid namespace ${JSON.stringify(namespace.slice(0, 100))}` },
      });
    const resourceParameter = queryString(request, 'resource');
    if (resourceParameter !== undefined && !/^([a-z0-9.-]+\/)?[a-z0-9.-]+$/.test(resourceParameter))
      return send(response, {
        status: 400,
        body: { error: 'resource must be written group/plural, e.g. apps/deployments' },
      });
    const labelsParameter = queryString(request, 'labels');
    let labels: Record<string, string> | undefined;
    try {
      labels = labelsParameter === undefined ? undefined : parseLabelSet(labelsParameter);
    } catch (failure) {
      if (failure instanceof LabelSelectorError)
        return send(response, { status: 400, body: { error: failure.message } });
      throw failure;
    }
    if (!dependencies.runtimeState().source.synced)
      return send(response, {
        status: 503,
        body: { error: 'the index has not completed its first sync yet' },
      });
    const resource = resourceParameter === undefined ? undefined : parseResourceTarget(resourceParameter);
    const workload = admittedWorkload(request, namespace, resource?.group ?? '', labels ?? {});
    if (workload === 'invalid')
      return send(response, {
        status: 400,
        body: { error: 'annotations must be a JSON object of strings; kind and name must be plain names' },
      });
    const prospective =
      workload && dependencies.prospectiveFindings ? dependencies.prospectiveFindings(workload) : [];
    response.json(buildConstraintList(dependencies.index, { namespace, resource, labels }, prospective));
  });
  readOnlyRoute(app, '/api/v1/admission-check', 'POST', admissionCheckHandler(dependencies));
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
