import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { RequestListener } from 'node:http';
import request, { type Response } from 'supertest';
import { parse } from 'yaml';
import {
  createControllerApp,
  createControllerRoutes,
  type ControllerAppDependencies,
} from '../../../services/controller/http/app';
import { createControllerMetrics } from '../../../services/controller/metrics';
import type { SourceStatus } from '../../../services/controller/sources/source';
import { silentLogger } from '../../../services/logging/logger';
import { DETAIL_LEVELS, type DetailLevel, type Report } from '../../../services/model/api';
import type { Constraint } from '../../../services/model/constraint';
import { isRecord } from '../../../services/model/kubernetes';
import { objectName, text } from '../../../services/model/text';
import {
  demoClusterObjects,
  FIXED_NOW,
  indexObjects,
  runtimeStateFor,
  syncedSource,
} from '../../support/controller-fixtures';

// docs/openapi.yaml is the contract users read; this test holds the code to it. Every route is
// called on the demo cluster at every detail level and in every error case, and each real answer
// is validated (ajv, JSON Schema 2020-12, strict) against the response the document lists for that
// route and status. The schemas forbid unknown fields and require the known ones, and the last
// tests check the other direction (every documented route, status and field really occurs), so a
// field added, removed or renamed on either side fails here.

type Method = 'get' | 'post';

interface SchemaObject {
  $ref?: string;
  oneOf?: SchemaObject[];
  properties?: Record<string, SchemaObject>;
  [keyword: string]: unknown;
}

interface HeaderObject {
  $ref?: string;
  schema?: SchemaObject;
}

interface ResponseObject {
  $ref?: string;
  description?: string;
  headers?: Record<string, HeaderObject>;
  content?: Record<string, { schema: SchemaObject }>;
}

interface OperationObject {
  responses: Record<string, ResponseObject>;
}

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Partial<Record<Method, OperationObject>>>;
  components: {
    schemas: Record<string, SchemaObject>;
    responses: Record<string, ResponseObject>;
    headers: Record<string, HeaderObject>;
  };
}

const DOCUMENT_ID = 'openapi';
const documentPath = path.join(__dirname, '../../../docs/openapi.yaml');
const openApi = parse(readFileSync(documentPath, 'utf8')) as OpenApiDocument;

const ajv = new Ajv2020({
  strict: true,
  // `then: {required: [reason]}` names a property declared by the parent schema, which is fine.
  strictRequired: false,
  allErrors: true,
});
addFormats(ajv);
// OpenAPI's own keywords: the whole document is one schema resource so `$ref`s resolve in place.
ajv.addVocabulary(['openapi', 'info', 'servers', 'tags', 'paths', 'components', 'example']);
ajv.addSchema(openApi as unknown as Record<string, unknown>, DOCUMENT_ID);

function pointer(...segments: string[]): string {
  return segments.map((segment) => `/${segment.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

function validatorAt(jsonPointer: string): ValidateFunction {
  const validate = ajv.getSchema(`${DOCUMENT_ID}#${jsonPointer}`);
  if (!validate) throw new Error(`docs/openapi.yaml has no schema at ${jsonPointer}`);
  return validate;
}

/** Validation errors with their parameters: "must NOT have additional properties" alone hides which. */
function describeErrors(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .map(
      (error) => `${error.instancePath || '(body)'} ${error.message ?? ''} ${JSON.stringify(error.params)}`,
    )
    .join('; ');
}

function componentName(reference: string, kind: 'schemas' | 'responses' | 'headers'): string {
  const prefix = `#/components/${kind}/`;
  if (!reference.startsWith(prefix)) throw new Error(`unexpected $ref ${reference}`);
  return reference.slice(prefix.length);
}

// ---------------------------------------------------------------------------------------------
// The cluster served: the demo manifests through the registered adapters, plus two constraints
// written here so that metrics and a cluster-scoped (redactable) name occur whatever adapters the
// registry holds.

const cluster = indexObjects(demoClusterObjects());

const syntheticQuota: Constraint = {
  id: 'openapi-test/ResourceQuota/shop/openapi-quota#quota',
  name: 'openapi-quota',
  type: 'ResourceLimit',
  severity: 'Info',
  effect: 'limit',
  adapter: 'resourcequota',
  source: { kind: 'ResourceQuota', apiVersion: 'v1', name: 'openapi-quota', namespace: 'shop' },
  scope: { kind: 'namespace', namespace: 'shop' },
  tags: ['quota'],
  displayName: text`${objectName('openapi-quota', 'shop')}`,
  summary: text`ResourceQuota ${objectName('openapi-quota', 'shop')} is at 25%`,
  remediationHint: text`stay within ResourceQuota ${objectName('openapi-quota', 'shop')}`,
  remediation: {
    summary: text`stay within ResourceQuota ${objectName('openapi-quota', 'shop')}`,
    steps: [
      {
        type: 'manual',
        description: text`Ask for more`,
        contact: 'owners@example.com',
        requiresPrivilege: 'namespace-admin',
        automated: false,
      },
    ],
  },
  metrics: { 'requests.cpu': { hard: '4', used: '1', unit: 'cores', percent_used: 25 } },
  lastObserved: FIXED_NOW.toISOString(),
};

const syntheticClusterPolicy: Constraint = {
  id: 'openapi-test/ClusterPolicy//openapi-cluster-policy#rule',
  name: 'openapi-cluster-policy/rule',
  type: 'Admission',
  severity: 'Critical',
  effect: 'deny',
  adapter: 'policyengine',
  source: {
    kind: 'ClusterPolicy',
    apiVersion: 'kyverno.io/v1',
    name: 'openapi-cluster-policy',
    namespace: null,
  },
  scope: { kind: 'cluster' },
  tags: ['admission'],
  displayName: text`${objectName('openapi-cluster-policy', null)}/rule`,
  summary: text`ClusterPolicy ${objectName('openapi-cluster-policy', null)} denies`,
  remediationHint: text`pass ClusterPolicy ${objectName('openapi-cluster-policy', null)}`,
  remediation: {
    summary: text`pass ClusterPolicy ${objectName('openapi-cluster-policy', null)}`,
    steps: [
      {
        type: 'cli',
        description: text`Inspect it`,
        command: text`kubectl get clusterpolicy ${objectName('openapi-cluster-policy', null)} -o yaml`,
        requiresPrivilege: 'developer',
        automated: true,
      },
    ],
  },
  lastObserved: FIXED_NOW.toISOString(),
};

cluster.index.replaceObject('openapi-test/quota', [syntheticQuota]);
cluster.index.replaceObject('openapi-test/cluster-policy', [syntheticClusterPolicy]);
// An object an adapter could not read: a health problem that is not a file.
cluster.parseErrors.record('openapi-test/broken', {
  adapter: 'networkpolicy',
  object: 'NetworkPolicy shop/broken',
  message: 'spec.ingress must be a list',
  at: FIXED_NOW.toISOString(),
});

/** A source with one enabled adapter, one disabled (so `reason` occurs) and a broken file. */
function sourceStatus(synced: boolean): SourceStatus {
  return syncedSource({
    synced,
    adapters: {
      networkpolicy: { enabled: true, watchedResources: 1, watchFailing: false },
      cni: {
        enabled: false,
        watchedResources: 0,
        watchFailing: false,
        reason: 'no served kinds: cilium.io/v2 CiliumNetworkPolicy',
      },
    },
    problems: [
      {
        source: 'manifests: broken.yaml:4',
        message: 'Tabs are not allowed as indentation',
        since: FIXED_NOW.toISOString(),
      },
    ],
  });
}

function controllerDependencies(
  options: { configured?: DetailLevel; synced?: boolean } = {},
): ControllerAppDependencies {
  const runtimeState = () => runtimeStateFor(cluster, sourceStatus(options.synced ?? true));
  const metrics = createControllerMetrics(cluster.index, runtimeState, { processMetrics: false });
  return {
    index: cluster.index,
    runtimeState,
    configuredDetailLevel: options.configured ?? 'full',
    clock: () => FIXED_NOW,
    logger: silentLogger(),
    metricsHandler: metrics.handler,
    requestObserver: metrics.requestObserver,
  };
}

function controllerApp(options: { configured?: DetailLevel; synced?: boolean } = {}): RequestListener {
  return createControllerApp(controllerDependencies(options));
}

const app = controllerApp();
const unsyncedApp = controllerApp({ synced: false });

// ---------------------------------------------------------------------------------------------
// Checking one response against the document, and recording what occurred.

/** `<method> <path template> <status>` of every response validated. */
const exercised = new Set<string>();
/** Field names seen per component schema, to check every documented field really occurs. */
const observedFields = new Map<string, Set<string>>();

function observe(schemaName: string, value: unknown): void {
  if (!isRecord(value)) return;
  const fields = observedFields.get(schemaName) ?? new Set<string>();
  observedFields.set(schemaName, fields);
  for (const key of Object.keys(value)) fields.add(key);
  const each = (items: unknown, itemSchema: string) => {
    if (Array.isArray(items)) for (const item of items) observe(itemSchema, item);
  };
  switch (schemaName) {
    case 'Report':
      each(value.constraints, 'ReportEntry');
      break;
    case 'ReportEntry':
      observe('Remediation', value.remediation);
      break;
    case 'ConstraintView':
      observe('Remediation', value.remediation);
      if (isRecord(value.metrics)) each(Object.values(value.metrics), 'MetricValue');
      break;
    case 'Remediation':
      each(value.steps, 'RemediationStep');
      break;
    case 'Health':
      if (isRecord(value.adapters)) each(Object.values(value.adapters), 'AdapterHealth');
      each(value.problems, 'HealthProblem');
      break;
    case 'ConstraintList':
      each(value.constraints, 'ListedConstraint');
      break;
    case 'AdmissionCheck':
      each(value.constraints, 'CheckedConstraint');
      break;
    case 'CheckedConstraint':
      each(value.evidence, 'Evidence');
      break;
  }
}

/** The component a body matched: the schema's `$ref`, or the `oneOf` branch that validates. */
function matchedComponent(schema: SchemaObject, body: unknown): string | undefined {
  if (schema.$ref) return componentName(schema.$ref, 'schemas');
  for (const branch of schema.oneOf ?? []) {
    if (!branch.$ref) continue;
    const name = componentName(branch.$ref, 'schemas');
    if (validatorAt(pointer('components', 'schemas', name))(body)) return name;
  }
  return undefined;
}

/** Validates a real response against what docs/openapi.yaml lists for that route and status. */
function conforms(template: string, method: Method, response: Response): void {
  const operation = openApi.paths[template]?.[method];
  if (!operation) throw new Error(`docs/openapi.yaml does not document ${method.toUpperCase()} ${template}`);
  const status = String(response.status);
  let documented = operation.responses[status];
  if (!documented)
    throw new Error(
      `${method.toUpperCase()} ${template} answered ${status} ${JSON.stringify(response.body)}, which docs/openapi.yaml does not list`,
    );
  let responsePointer = pointer('paths', template, method, 'responses', status);
  if (documented.$ref) {
    const name = componentName(documented.$ref, 'responses');
    documented = openApi.components.responses[name];
    responsePointer = pointer('components', 'responses', name);
  }
  const mediaType = String(response.headers['content-type'] ?? '')
    .split(';')[0]
    .trim();
  const content = documented.content?.[mediaType];
  if (!content)
    throw new Error(
      `${method.toUpperCase()} ${template} ${status} answered ${mediaType}, not a documented media type`,
    );
  const body: unknown = mediaType === 'application/json' ? response.body : response.text;
  const validate = validatorAt(`${responsePointer}${pointer('content', mediaType, 'schema')}`);
  if (!validate(body))
    throw new Error(
      `${method.toUpperCase()} ${template} ${status} does not match docs/openapi.yaml: ${describeErrors(validate)}\n${JSON.stringify(body).slice(0, 2000)}`,
    );
  for (const [headerName, header] of Object.entries(documented.headers ?? {})) {
    const headerPointer = header.$ref
      ? pointer('components', 'headers', componentName(header.$ref, 'headers'), 'schema')
      : `${responsePointer}${pointer('headers', headerName, 'schema')}`;
    const value: unknown = response.headers[headerName.toLowerCase()];
    if (value === undefined)
      throw new Error(`${method.toUpperCase()} ${template} ${status} lacks header ${headerName}`);
    if (!validatorAt(headerPointer)(value))
      throw new Error(
        `${method.toUpperCase()} ${template} ${status} header ${headerName}: ${String(value)} undocumented`,
      );
  }
  exercised.add(`${method} ${template} ${status}`);
  const component = matchedComponent(content.schema, body);
  if (component) observe(component, body);
}

function withLevel(url: string, level: DetailLevel | undefined): string {
  if (level === undefined) return url;
  return `${url}${url.includes('?') ? '&' : '?'}detail_level=${level}`;
}

const LEVELS: Array<DetailLevel | undefined> = [undefined, ...DETAIL_LEVELS];

/** A real URL for each documented path, for the 405 checks. */
const SAMPLE_URLS: Record<string, string> = {
  '/resources/reports/{namespace}': '/resources/reports/shop',
  '/resources/constraints/{namespace}/{name}': '/resources/constraints/shop/api-allow-frontend/ingress',
  '/resources/health': '/resources/health',
  '/resources/capabilities': '/resources/capabilities',
  '/resources': '/resources',
  '/api/v1/constraints': '/api/v1/constraints?namespace=shop',
  '/api/v1/admission-check': '/api/v1/admission-check',
  '/api/v1/health': '/api/v1/health',
  '/healthz': '/healthz',
  '/readyz': '/readyz',
  '/metrics': '/metrics',
};

async function fullReport(namespace: string): Promise<Report> {
  const response = await request(app).get(`/resources/reports/${namespace}?detail_level=full`).expect(200);
  conforms('/resources/reports/{namespace}', 'get', response);
  return response.body as Report;
}

// ---------------------------------------------------------------------------------------------

describe('docs/openapi.yaml', () => {
  it('is an OpenAPI 3.1 document whose every schema compiles in strict mode', () => {
    expect(openApi.openapi).toMatch(/^3\.1\./);
    for (const name of Object.keys(openApi.components.schemas))
      expect(() => validatorAt(pointer('components', 'schemas', name))).not.toThrow();
    for (const [template, item] of Object.entries(openApi.paths))
      for (const [method, operation] of Object.entries(item))
        for (const [status, response] of Object.entries(operation?.responses ?? {})) {
          const resolved = response.$ref
            ? openApi.components.responses[componentName(response.$ref, 'responses')]
            : response;
          expect({
            route: `${method} ${template} ${status}`,
            content: Object.keys(resolved?.content ?? {}),
          }).toEqual({
            route: `${method} ${template} ${status}`,
            content: [expect.stringMatching(/^(application\/json|text\/plain)$/)],
          });
        }
  });

  it('documents exactly the routes the app serves, with their methods', () => {
    // Every route is an express route; the fast path only answers some requests of one of them.
    const stack = (
      createControllerRoutes(controllerDependencies()) as unknown as {
        router: { stack: Array<{ route?: { path: string; methods: Record<string, boolean> } }> };
      }
    ).router.stack;
    const served = stack
      .filter((layer) => layer.route && Object.keys(layer.route.methods).length === 1)
      .map((layer) => {
        const route = layer.route as { path: string; methods: Record<string, boolean> };
        const template = route.path.replace(/\*(\w+)/g, '{$1}').replace(/:(\w+)/g, '{$1}');
        return `${Object.keys(route.methods)[0]} ${template}`;
      })
      .sort();
    const documented = Object.entries(openApi.paths)
      .flatMap(([template, item]) => Object.keys(item).map((method) => `${method} ${template}`))
      .sort();
    expect(served).toEqual(documented);
  });

  it('the validator catches a field added, removed or renamed', async () => {
    const response = await request(app).get('/resources/reports/shop').expect(200);
    const validate = validatorAt(pointer('components', 'schemas', 'Report'));
    expect(validate(response.body)).toBe(true);
    const added = { ...response.body, extra: 1 };
    const { infoCount, ...removed } = response.body as Report;
    const renamed = { ...removed, info_count: infoCount };
    for (const drifted of [added, removed, renamed]) expect(validate(drifted)).toBe(false);
    const entry = (response.body as Report).constraints[0];
    const entryValidator = validatorAt(pointer('components', 'schemas', 'ReportEntry'));
    expect(entryValidator({ ...entry, severity: 'Severe' })).toBe(false);
    expect(entryValidator({ ...entry, effect: 'explode' })).toBe(false);
  });
});

describe('real responses conform to docs/openapi.yaml', () => {
  it('GET /resources/reports/{namespace} at every detail level, including a namespace without constraints', async () => {
    for (const namespace of ['shop', 'payments', 'monitoring', 'quiet-namespace'])
      for (const level of LEVELS) {
        const response = await request(app).get(withLevel(`/resources/reports/${namespace}`, level));
        expect(response.status).toBe(200);
        conforms('/resources/reports/{namespace}', 'get', response);
        expect(response.body.detailLevel).toBe(level ?? 'full');
      }
    // A caller may lower the configured level, never raise it.
    const capped = await request(controllerApp({ configured: 'summary' })).get(
      '/resources/reports/shop?detail_level=full',
    );
    conforms('/resources/reports/{namespace}', 'get', capped);
    expect(capped.body.detailLevel).toBe('summary');
  });

  /** Whether a report at that level shows the name (names it hides are not looked up either). */
  async function visibleAt(namespace: string, name: string, level: string): Promise<boolean> {
    const report = await request(app).get(`/resources/reports/${namespace}?detail_level=${level}`);
    return (report.body.constraints as Array<{ name: string }>).some((entry) => entry.name === name);
  }

  it('GET /resources/constraints/{namespace}/{name} for every constraint, at every level', async () => {
    for (const namespace of ['shop', 'payments']) {
      const report = await fullReport(namespace);
      expect(report.constraints.length).toBeGreaterThan(0);
      for (const { name } of report.constraints)
        for (const level of LEVELS) {
          const response = await request(app).get(
            withLevel(`/resources/constraints/${namespace}/${name}`, level),
          );
          // Below full, names the level redacts are not found (docs/decisions.md): 404 with an error.
          const visible =
            level === undefined || level === 'full' || (await visibleAt(namespace, name, level));
          expect({ name, level, status: response.status }).toEqual({
            name,
            level,
            status: visible ? 200 : 404,
          });
          conforms('/resources/constraints/{namespace}/{name}', 'get', response);
        }
    }
    // A cluster-scoped constraint is found by its real name at full only.
    const clusterScoped = await request(app)
      .get('/resources/constraints/shop/openapi-cluster-policy/rule?detail_level=full')
      .expect(200);
    conforms('/resources/constraints/{namespace}/{name}', 'get', clusterScoped);
    expect(clusterScoped.body.name).toBe('openapi-cluster-policy/rule');
    const hidden = await request(app)
      .get('/resources/constraints/shop/openapi-cluster-policy/rule?detail_level=detailed')
      .expect(404);
    expect(hidden.body).toEqual({ error: 'constraint shop/openapi-cluster-policy/rule not found' });
    const metrics = await request(app)
      .get('/resources/constraints/shop/openapi-quota?detail_level=detailed')
      .expect(200);
    conforms('/resources/constraints/{namespace}/{name}', 'get', metrics);
    expect(metrics.body.metrics).toEqual(syntheticQuota.metrics);
    const encodedSlash = await request(app)
      .get('/resources/constraints/shop/api-allow-frontend%2Fingress')
      .expect(200);
    conforms('/resources/constraints/{namespace}/{name}', 'get', encodedSlash);
    expect(encodedSlash.body.name).toBe('api-allow-frontend/ingress');
  });

  it('GET /resources/health and /resources/capabilities at every level', async () => {
    for (const level of LEVELS) {
      const health = await request(app).get(withLevel('/resources/health', level)).expect(200);
      conforms('/resources/health', 'get', health);
      expect(health.body.status).toBe('degraded');
      const capabilities = await request(app).get(withLevel('/resources/capabilities', level)).expect(200);
      conforms('/resources/capabilities', 'get', capabilities);
    }
  });

  it('POST /resources for every resource, and its errors', async () => {
    const requests: Array<Record<string, unknown>> = [
      { resource: 'reports', params: { namespace: 'shop' } },
      { resource: 'constraints', params: { namespace: 'shop', name: 'api-allow-frontend/ingress' } },
      {
        resource: 'constraints',
        params: { namespace: 'shop', name: 'openapi-quota', detail_level: 'detailed' },
      },
      { resource: 'health' },
      { resource: 'capabilities', params: {} },
    ];
    for (const body of requests)
      for (const level of LEVELS) {
        const response = await request(app).post(withLevel('/resources', level)).send(body);
        expect(response.status).toBe(200);
        conforms('/resources', 'post', response);
      }
    const failures: Array<{ status: number; send: () => request.Test }> = [
      {
        status: 400,
        send: () =>
          request(app).post('/resources').set('Content-Type', 'application/json').send('{"resource":'),
      },
      { status: 400, send: () => request(app).post('/resources').send([1, 2]) },
      { status: 400, send: () => request(app).post('/resources').send({ resource: 'reports', params: {} }) },
      {
        status: 400,
        send: () => request(app).post('/resources').send({ resource: 'reports', params: 'shop' }),
      },
      {
        status: 400,
        send: () =>
          request(app)
            .post('/resources')
            .send({ resource: 'health', params: { detail_level: 'all' } }),
      },
      {
        status: 400,
        send: () =>
          request(app)
            .post('/resources')
            .send({ resource: 'constraints', params: { namespace: 'shop', name: '../x' } }),
      },
      { status: 404, send: () => request(app).post('/resources').send({ resource: 'secrets' }) },
      {
        status: 404,
        send: () =>
          request(app)
            .post('/resources')
            .send({ resource: 'constraints', params: { namespace: 'shop', name: 'nope' } }),
      },
      {
        status: 413,
        send: () =>
          request(app)
            .post('/resources')
            .send({ resource: 'health', padding: 'x'.repeat(70_000) }),
      },
      {
        status: 415,
        send: () =>
          request(app)
            .post('/resources')
            .set('Content-Type', 'application/json; charset=latin-9')
            .send('{"resource":"health"}'),
      },
      {
        status: 415,
        send: () =>
          request(app)
            .post('/resources')
            .set('Content-Type', 'application/json')
            .set('Content-Encoding', 'compress')
            .send('{}'),
      },
    ];
    for (const failure of failures) {
      const response = await failure.send();
      expect(response.status).toBe(failure.status);
      conforms('/resources', 'post', response);
    }
  });

  it('GET /api/v1/constraints with every filter, and GET /api/v1/health', async () => {
    for (const url of [
      '/api/v1/constraints?namespace=shop',
      '/api/v1/constraints?namespace=payments',
      '/api/v1/constraints?namespace=quiet-namespace',
      '/api/v1/constraints?namespace=shop&resource=apps/deployments&labels=app=frontend,tier=web',
      '/api/v1/constraints?namespace=shop&resource=pods&labels=',
      `/api/v1/constraints?namespace=shop&resource=apps/deployments&labels=app=api&kind=Deployment&name=api&ports=http,metrics&annotations=${encodeURIComponent('{"team":"shop"}')}`,
    ]) {
      const response = await request(app).get(url).expect(200);
      conforms('/api/v1/constraints', 'get', response);
    }
    const withClusterScoped = await request(app).get('/api/v1/constraints?namespace=shop').expect(200);
    expect(withClusterScoped.body.constraints).toContainEqual(
      expect.objectContaining({ name: 'openapi-cluster-policy/rule', sourceNamespace: null }),
    );
    for (const url of [
      '/api/v1/constraints',
      '/api/v1/constraints?namespace=Not_Valid',
      '/api/v1/constraints?namespace=shop&labels=novalue',
      '/api/v1/constraints?namespace=shop&resource=Bad%20Resource',
      '/api/v1/constraints?namespace=shop&kind=Deployment&name=api&annotations=not-json',
      '/api/v1/constraints?namespace=shop&kind=Deployment&name=Not_A_Name',
    ]) {
      const response = await request(app).get(url).expect(400);
      conforms('/api/v1/constraints', 'get', response);
    }
    const apiHealth = await request(app).get('/api/v1/health').expect(200);
    conforms('/api/v1/health', 'get', apiHealth);
  });

  it('POST /api/v1/admission-check with verdicts, and its errors', async () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop' },
      spec: {
        replicas: 5,
        template: {
          metadata: { labels: { app: 'frontend' } },
          spec: { containers: [{ name: 'web', image: 'web:1' }] },
        },
      },
    };
    const checked = await request(app)
      .post('/api/v1/admission-check')
      .send({ object: deployment, operation: 'CREATE' })
      .expect(200);
    conforms('/api/v1/admission-check', 'post', checked);
    const verdicts = (checked.body.constraints as Array<{ verdict: string; reason?: string }>).map(
      (entry) => entry.verdict,
    );
    expect(verdicts[0]).toBe('violates');
    expect(verdicts).toEqual(expect.arrayContaining(['passes', 'applies', 'unknown']));
    const failures: Array<[number, () => request.Test]> = [
      [
        400,
        () =>
          request(app)
            .post('/api/v1/admission-check')
            .set('Content-Type', 'application/json')
            .send('{"object":'),
      ],
      [400, () => request(app).post('/api/v1/admission-check').send({ operation: 'CREATE' })],
      [
        400,
        () => request(app).post('/api/v1/admission-check').send({ object: deployment, operation: 'DELETE' }),
      ],
      // Found by schemathesis: null is not an absent operation.
      [400, () => request(app).post('/api/v1/admission-check').send({ object: deployment, operation: null })],
      [
        400,
        () =>
          request(app)
            .post('/api/v1/admission-check')
            .send({ object: { metadata: {} } }),
      ],
      [
        413,
        () =>
          request(app)
            .post('/api/v1/admission-check')
            .send({ object: { ...deployment, padding: 'x'.repeat(1_100_000) } }),
      ],
    ];
    for (const [status, send] of failures) {
      const response = await send();
      expect(response.status).toBe(status);
      conforms('/api/v1/admission-check', 'post', response);
    }
    const waiting = await request(unsyncedApp).post('/api/v1/admission-check').send({ object: deployment });
    expect(waiting.status).toBe(503);
    conforms('/api/v1/admission-check', 'post', waiting);
  });

  it('GET /healthz, /readyz and /metrics', async () => {
    conforms('/healthz', 'get', await request(app).get('/healthz').expect(200));
    conforms('/readyz', 'get', await request(app).get('/readyz').expect(200));
    const metrics = await request(app).get('/metrics').expect(200);
    conforms('/metrics', 'get', metrics);
    expect(metrics.text).toMatch(/^forewarn_constraints\{type="NetworkIngress"[^}]*\} \d+$/m);
    expect(metrics.text).toMatch(/^forewarn_health_status\{status="degraded"\} 1$/m);
  });

  it('400 for invalid path parameters and detail levels on the GET resources', async () => {
    const cases: Array<[string, string]> = [
      ['/resources/reports/{namespace}', '/resources/reports/Not_A_Namespace'],
      ['/resources/reports/{namespace}', `/resources/reports/${'a'.repeat(64)}`],
      ['/resources/reports/{namespace}', '/resources/reports/shop?detail_level=everything'],
      ['/resources/constraints/{namespace}/{name}', '/resources/constraints/shop/bad%20name'],
      ['/resources/constraints/{namespace}/{name}', '/resources/constraints/shop/a//b'],
      ['/resources/constraints/{namespace}/{name}', '/resources/constraints/Shop/default-deny-ingress'],
      ['/resources/health', '/resources/health?detail_level=everything'],
      ['/resources/capabilities', '/resources/capabilities?detail_level=everything'],
    ];
    for (const [template, url] of cases) {
      const response = await request(app).get(url);
      expect({ url, status: response.status }).toEqual({ url, status: 400 });
      conforms(template, 'get', response);
    }
  });

  it('404 with the spec error text for a missing constraint, and a JSON 404 for unknown routes', async () => {
    const missing = await request(app).get('/resources/constraints/shop/no-such-policy').expect(404);
    conforms('/resources/constraints/{namespace}/{name}', 'get', missing);
    expect(missing.body).toEqual({ error: 'constraint shop/no-such-policy not found' });
    const errorSchema = validatorAt(pointer('components', 'schemas', 'Error'));
    for (const url of [
      '/nothing/here',
      '/resources/reports/',
      '/resources/constraints/shop',
      '/api/v2/health',
    ]) {
      const response = await request(app).get(url).expect(404);
      expect(errorSchema(response.body)).toBe(true);
    }
    const badEncoding = await request(app).get('/resources/reports/%E0%A4%A').expect(400);
    expect(errorSchema(badEncoding.body)).toBe(true);
  });

  it('405 with an Allow header for every other method on every route', async () => {
    for (const [template, item] of Object.entries(openApi.paths)) {
      const url = SAMPLE_URLS[template];
      expect({ template, url }).toEqual({ template, url: expect.any(String) });
      const documentedMethod: Method = item.get ? 'get' : 'post';
      const otherMethods = (['get', 'post', 'put', 'patch', 'delete'] as const).filter(
        (method) => method !== documentedMethod,
      );
      for (const method of otherMethods) {
        const response = await request(app)[method](url);
        expect({ template, method, status: response.status }).toEqual({ template, method, status: 405 });
        conforms(template, documentedMethod, response);
      }
    }
  });

  it('503 before the first sync on every route that waits for it', async () => {
    const waiting: Array<[string, string]> = [
      ['/resources/reports/{namespace}', '/resources/reports/shop'],
      ['/resources/constraints/{namespace}/{name}', '/resources/constraints/shop/default-deny-ingress'],
      ['/resources/health', '/resources/health'],
      ['/resources/capabilities', '/resources/capabilities'],
      ['/api/v1/constraints', '/api/v1/constraints?namespace=shop'],
      ['/api/v1/health', '/api/v1/health'],
      ['/readyz', '/readyz'],
    ];
    for (const [template, url] of waiting) {
      const response = await request(unsyncedApp).get(url);
      expect({ url, status: response.status }).toEqual({ url, status: 503 });
      conforms(template, 'get', response);
    }
    for (const body of [{ resource: 'health' }, { resource: 'reports', params: { namespace: 'shop' } }]) {
      const response = await request(unsyncedApp).post('/resources').send(body).expect(503);
      conforms('/resources', 'post', response);
    }
    conforms('/healthz', 'get', await request(unsyncedApp).get('/healthz').expect(200));
  });
});

// These run last (jest runs a file's tests in order): they check the other direction, that what
// the document promises really occurs.
describe('docs/openapi.yaml promises nothing the code does not do', () => {
  it('every documented route and status was answered by the app above', () => {
    const documented = Object.entries(openApi.paths).flatMap(([template, item]) =>
      Object.entries(item).flatMap(([method, operation]) =>
        Object.keys(operation?.responses ?? {}).map((status) => `${method} ${template} ${status}`),
      ),
    );
    expect(documented.filter((response) => !exercised.has(response))).toEqual([]);
  });

  it('every documented field of every response schema was sent by the app above', () => {
    const neverSent: string[] = [];
    for (const [name, schema] of Object.entries(openApi.components.schemas)) {
      // requests, not responses
      if (
        ['ResourceRequest', 'ResourceParams', 'AdmissionCheckRequest', 'AdmittedObject'].includes(name) ||
        !schema.properties
      )
        continue;
      const seen = observedFields.get(name);
      if (!seen) {
        neverSent.push(`${name} (no instance)`);
        continue;
      }
      for (const field of Object.keys(schema.properties))
        if (!seen.has(field)) neverSent.push(`${name}.${field}`);
    }
    expect(neverSent).toEqual([]);
  });
});
