// Holding real responses to docs/openapi.yaml (openapi.test.ts): the document loaded into ajv (JSON
// Schema 2020-12, strict), `conforms` validating one response against what the document lists for its
// route and status, and a record of what occurred, so that a test can check the other direction (every
// documented route, status and field really occurs).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';
import { parse } from 'yaml';
import { isRecord } from '../../../services/model/kubernetes';

export type Method = 'get' | 'post';

export interface SchemaObject {
  $ref?: string;
  oneOf?: SchemaObject[];
  anyOf?: SchemaObject[];
  properties?: Record<string, SchemaObject>;
  [keyword: string]: unknown;
}

export interface HeaderObject {
  $ref?: string;
  schema?: SchemaObject;
}

export interface ResponseObject {
  $ref?: string;
  description?: string;
  headers?: Record<string, HeaderObject>;
  content?: Record<string, { schema: SchemaObject }>;
}

export interface OperationObject {
  responses: Record<string, ResponseObject>;
}

export interface OpenApiDocument {
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
export const openApi = parse(readFileSync(documentPath, 'utf8')) as OpenApiDocument;

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

export function pointer(...segments: string[]): string {
  return segments.map((segment) => `/${segment.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

export function validatorAt(jsonPointer: string): ValidateFunction {
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

export function componentName(reference: string, kind: 'schemas' | 'responses' | 'headers'): string {
  const prefix = `#/components/${kind}/`;
  if (!reference.startsWith(prefix)) throw new Error(`unexpected $ref ${reference}`);
  return reference.slice(prefix.length);
}

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
    case 'RisksReport':
      each(value.workloads, 'RiskWorkload');
      break;
    case 'RiskWorkload':
    case 'ImpactedWorkload':
      observe('WorkloadOwner', value.owner);
      each(value.findings, 'CheckedConstraint');
      break;
    case 'ImpactReport':
      if (Array.isArray(value.namespaces))
        for (const entry of value.namespaces) if (isRecord(entry)) each(entry.workloads, 'ImpactedWorkload');
      break;
  }
}

/** The component a body matched: the schema's `$ref`, or the first `oneOf`/`anyOf` branch that validates. */
function matchedComponent(schema: SchemaObject, body: unknown): string | undefined {
  if (schema.$ref) return componentName(schema.$ref, 'schemas');
  for (const branch of [...(schema.oneOf ?? []), ...(schema.anyOf ?? [])]) {
    if (!branch.$ref) continue;
    const name = componentName(branch.$ref, 'schemas');
    if (validatorAt(pointer('components', 'schemas', name))(body)) return name;
  }
  return undefined;
}

/** Validates a real response against what docs/openapi.yaml lists for that route and status. */
export function conforms(template: string, method: Method, response: Response): void {
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

/** Documented `<method> <path template> <status>` that no validated response had. */
export function responsesNeverAnswered(): string[] {
  const documented = Object.entries(openApi.paths).flatMap(([template, item]) =>
    Object.entries(item).flatMap(([method, operation]) =>
      Object.keys(operation?.responses ?? {}).map((status) => `${method} ${template} ${status}`),
    ),
  );
  return documented.filter((response) => !exercised.has(response));
}

/** Documented fields of the response schemas (`Schema.field`) that no validated response carried. */
export function fieldsNeverSent(): string[] {
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
  return neverSent;
}
