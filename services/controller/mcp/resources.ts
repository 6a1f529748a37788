import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { REDACTED } from '../../model/text';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import {
  answerResourceRequestFor,
  type ResourceAnswer,
  type ResourceDependencies,
} from '../http/resource-requests';
import { readableConstraintsOf, requestBudgetOf } from './viewer-level';
import { renderName } from '../views/constraint-rendering';

// The four resources of the spec as MCP resources (DESIGN.md 5). Every read goes through
// answerResourceRequest, the code behind the HTTP GET routes, and returns the very JSON text HTTP
// sends, so an agent and a curl user see the same bytes at the same detail level.

export const RESOURCE_URIS = {
  reports: 'forewarn://reports/{namespace}',
  risks: 'forewarn://risks/{namespace}',
  // `{+name}` (RFC 6570 reserved expansion) because constraint names may contain `/`
  // (`api-allow-frontend/ingress`); the URI an agent reads is still forewarn://constraints/ns/a/b.
  constraints: 'forewarn://constraints/{namespace}/{+name}',
  references: 'forewarn://references/{ref}',
  health: 'forewarn://health',
  capabilities: 'forewarn://capabilities',
} as const;

/** JSON-RPC code the MCP specification gives "resource not found". */
export const RESOURCE_NOT_FOUND = -32002;

const JSON_MIME_TYPE = 'application/json';
const MAX_COMPLETIONS = 100;

function errorMessage(answer: ResourceAnswer): string {
  const body = answer.body as { error?: unknown };
  return typeof body?.error === 'string' ? body.error : `request failed with status ${answer.status}`;
}

/** The answer as resource contents, or the MCP error that matches the HTTP status. */
export function toReadResult(
  uri: URL,
  answer: ResourceAnswer,
  { acceptUnsynced = false } = {},
): ReadResourceResult {
  if (answer.status === 200 || (acceptUnsynced && answer.status === 503))
    return { contents: [{ uri: uri.href, mimeType: JSON_MIME_TYPE, text: JSON.stringify(answer.body) }] };
  const message = errorMessage(answer);
  if (answer.status === 404) throw new McpError(RESOURCE_NOT_FOUND, message);
  if (answer.status === 400) throw new McpError(ErrorCode.InvalidParams, message);
  // Refused at this detail level (a reference lookup below `full`): the request, not the server, is at fault.
  if (answer.status === 403) throw new McpError(ErrorCode.InvalidRequest, message);
  throw new McpError(ErrorCode.InternalError, message);
}

function variable(value: string | string[] | undefined, name: string): string {
  const raw = Array.isArray(value) ? value.join(',') : (value ?? '');
  try {
    // Clients may percent-encode the `/` of a constraint name; both spellings are accepted.
    return decodeURIComponent(raw);
  } catch {
    throw new McpError(ErrorCode.InvalidParams, `${name} contains an invalid percent-encoded sequence`);
  }
}

/**
 * Namespaces an agent can ask about: those with constraints and those the index knows. Namespace
 * names are the entry point of every question, so they are offered at every detail level; what is
 * redacted is the policies' names inside another namespace's view, never which namespaces exist.
 */
export function knownNamespaces(dependencies: ResourceDependencies): string[] {
  const { index } = dependencies;
  return [...new Set([...index.namespacesWithConstraints(), ...index.knownNamespaces()])].sort();
}

function completeNamespace(dependencies: ResourceDependencies, prefix: string): string[] {
  return knownNamespaces(dependencies)
    .filter((namespace) => namespace.startsWith(prefix))
    .slice(0, MAX_COMPLETIONS);
}

/** Constraint names of a namespace that its viewer may see (redacted ones cannot be completed). */
function completeConstraintName(
  dependencies: ResourceDependencies,
  namespace: string,
  prefix: string,
): string[] {
  if (!namespace) return [];
  const viewer = { level: dependencies.configuredDetailLevel, namespace };
  const names = dependencies.index
    .constraintsForNamespace(namespace)
    .map((constraint) => renderName(constraint, viewer))
    .filter((name) => name !== REDACTED && name.startsWith(prefix));
  return [...new Set(names)].sort().slice(0, MAX_COMPLETIONS);
}

/** `forewarn://references/{ref}`: the constraint behind a redacted name's opaque reference. */
/** What a read callback gets besides the URI: the per-request `authInfo` among it. */
type ReadExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;
/** Answers a resource request for the caller of this read (its own RBAC, issue 24). */
type ReadForCaller = (request: Record<string, unknown>, extra: ReadExtra) => Promise<ResourceAnswer>;

function registerReferenceResource(server: McpServer, read: ReadForCaller): void {
  server.registerResource(
    'references',
    new ResourceTemplate(RESOURCE_URIS.references, { list: undefined }),
    {
      title: 'The constraint behind an opaque reference',
      description:
        'A redacted constraint name comes with an opaque reference (ref, e.g. fw-3f2a9c0d4b1e7a65); this names the constraint it stands for. Only when the controller serves the full detail level. Same JSON as GET /resources/references/{ref}.',
      mimeType: JSON_MIME_TYPE,
    },
    async (uri, variables, extra) =>
      toReadResult(
        uri,
        await read({ resource: 'references', params: { ref: variable(variables.ref, 'ref') } }, extra),
      ),
  );
}

export function registerResources(server: McpServer, dependencies: ResourceDependencies): void {
  // Each read of a JSON-RPC batch waits its turn and stops once the HTTP request's budget is spent.
  const read: ReadForCaller = async (request, extra) => {
    const budget = requestBudgetOf(extra.authInfo);
    const step = await budget.step(() =>
      answerResourceRequestFor(dependencies, request, [], readableConstraintsOf(extra.authInfo)),
    );
    return step.ran ? step.value : { status: 429, body: { error: budget.reason } };
  };

  server.registerResource(
    'reports',
    new ResourceTemplate(RESOURCE_URIS.reports, {
      list: () => ({
        resources: knownNamespaces(dependencies).map((namespace) => ({
          uri: `forewarn://reports/${namespace}`,
          name: `reports/${namespace}`,
          title: `Constraint report of namespace ${namespace}`,
          mimeType: JSON_MIME_TYPE,
        })),
      }),
      complete: { namespace: (value) => completeNamespace(dependencies, value) },
    }),
    {
      title: 'Constraint report of a namespace',
      description:
        'Every constraint that applies to the namespace (network, quota, limit range, admission, mesh, missing resources), sorted Critical, Warning, Info, with counts and remediation. Same JSON as GET /resources/reports/{namespace}.',
      mimeType: JSON_MIME_TYPE,
    },
    async (uri, variables, extra) =>
      toReadResult(
        uri,
        await read(
          { resource: 'reports', params: { namespace: variable(variables.namespace, 'namespace') } },
          extra,
        ),
      ),
  );

  server.registerResource(
    'constraints',
    new ResourceTemplate(RESOURCE_URIS.constraints, {
      // Not listed: a cluster can hold thousands; the report of a namespace lists its names.
      list: undefined,
      complete: {
        namespace: (value) => completeNamespace(dependencies, value),
        name: (value, context) =>
          completeConstraintName(dependencies, context?.arguments?.namespace ?? '', value),
      },
    }),
    {
      title: 'One constraint of a namespace',
      description:
        'A single constraint in detail: affected workloads, remediation steps, quota metrics. Names may contain "/" (forewarn://constraints/shop/api-allow-frontend/ingress). Same JSON as GET /resources/constraints/{namespace}/{name}.',
      mimeType: JSON_MIME_TYPE,
    },
    async (uri, variables, extra) =>
      toReadResult(
        uri,
        await read(
          {
            resource: 'constraints',
            params: {
              namespace: variable(variables.namespace, 'namespace'),
              name: variable(variables.name, 'name'),
            },
          },
          extra,
        ),
      ),
  );

  registerReferenceResource(server, read);

  registerRisksResource(server, dependencies, read);

  registerStatusResources(server, read);
}

/** `forewarn://risks/{namespace}`: the namespace's workloads at risk (issue 35). */
function registerRisksResource(
  server: McpServer,
  dependencies: ResourceDependencies,
  read: ReadForCaller,
): void {
  server.registerResource(
    'risks',
    new ResourceTemplate(RESOURCE_URIS.risks, {
      list: undefined,
      complete: { namespace: (value) => completeNamespace(dependencies, value) },
    }),
    {
      title: 'Workloads at risk in a namespace',
      description:
        'Running workloads of the namespace (Deployments, StatefulSets, DaemonSets, Jobs, CronJobs, bare Pods, Services, ...) that would be rejected or warned about if applied again now, each with the constraints it fails, the evidence and the fix, as check shows them. Same JSON as GET /resources/risks/{namespace}.',
      mimeType: JSON_MIME_TYPE,
    },
    async (uri, variables, extra) =>
      toReadResult(
        uri,
        await read(
          { resource: 'risks', params: { namespace: variable(variables.namespace, 'namespace') } },
          extra,
        ),
      ),
  );
}

/** Health and capabilities: the same JSON as their HTTP routes, for every caller. */
function registerStatusResources(server: McpServer, read: ReadForCaller): void {
  server.registerResource(
    'health',
    RESOURCE_URIS.health,
    {
      title: 'Controller health',
      description:
        'Status (healthy, degraded, unhealthy), adapters, indexer, MCP and flow observer. Same JSON as GET /resources/health.',
      mimeType: JSON_MIME_TYPE,
    },
    // Health is the answer that explains an unsynced controller, so it is returned then too.
    async (uri, extra) =>
      toReadResult(uri, await read({ resource: 'health' }, extra), { acceptUnsynced: true }),
  );

  server.registerResource(
    'capabilities',
    RESOURCE_URIS.capabilities,
    {
      title: 'Controller capabilities',
      description:
        'Enabled adapters, constraint counts by type, namespaces with constraints. Same JSON as GET /resources/capabilities.',
      mimeType: JSON_MIME_TYPE,
    },
    async (uri, extra) => toReadResult(uri, await read({ resource: 'capabilities' }, extra)),
  );
}
