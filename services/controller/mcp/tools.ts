import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CONSTRAINT_TYPES, SEVERITIES, type DetailLevel } from '../../model/api';
import type { ResourceDependencies } from '../http/resource-requests';
import { checkManifest } from '../check/manifest-check';
import type { FindExistingObject } from '../verdicts/existing-objects';
import { indexLookup, NO_MISSING_COMPANIONS, type FindMissingCompanions } from '../check/index-lookup';
import { MAX_MESSAGE_LENGTH } from './explain-facts';
import { explainMessage } from './explain';
import { queryCandidates, queryConstraints } from './query';
import { readableConstraintsOf, requestBudgetOf, viewerLevelOf } from './viewer-level';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Constraint } from '../../model/constraint';

// The three MCP tools. Input schemas are zod (the SDK publishes them as JSON Schema); the work is
// done by pure functions (query.ts, explain.ts, check/manifest-check.ts). `query` and `explain`
// render at the controller's detail level like the resources, and at `full` the constraints the
// caller's own RBAC lets it read (issue 24); `check` answers what
// `POST /api/v1/admission-check` answers the same caller (viewer-level.ts): unredacted for the
// webhook's token or under `--api-auth=none`; for everyone else the controller's detail level, and
// `full` where its own RBAC lets it read the source, so the MCP port never shows a caller more than
// the HTTP API does.

export interface ToolDependencies extends ResourceDependencies {
  /** Companion checks for objects of a checked manifest (runtime.ts wires the missing-resource rules). */
  findMissingCompanions?: FindMissingCompanions;
  /** The stored object a checked manifest's object would update (check/existing-objects.ts). */
  findExisting?: FindExistingObject;
}

export const MAX_MANIFEST_BYTES = 1024 * 1024;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const namespaceSchema = z
  .string()
  .max(63)
  .regex(DNS1123_LABEL, 'must be a Kubernetes namespace name (DNS-1123 label)')
  .describe('Kubernetes namespace, e.g. "shop"');

function jsonResult(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] };
}

/** A call of a JSON-RPC batch whose request spent its CPU budget on the calls before it. */
function overBudget(reason: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: reason }] };
}

/** Runs a call once the event loop had a turn, within its HTTP request's CPU budget. */
async function withinBudget(
  authInfo: AuthInfo | undefined,
  call: () => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const budget = requestBudgetOf(authInfo);
  const step = await budget.step(call);
  return step.ran ? step.value : overBudget(budget.reason);
}

function notSynced(): CallToolResult {
  return {
    isError: true,
    content: [
      { type: 'text', text: 'the index has not completed its first sync yet; retry in a few seconds' },
    ],
  };
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/**
 * The level of each constraint for the caller of a tool call: `full` where its own RBAC lets it read
 * the source (issue 24), the controller's level elsewhere and when nothing could be asked.
 */
function callerLevelsFor(dependencies: ToolDependencies) {
  return async (
    constraints: readonly Constraint[],
    authInfo: AuthInfo | undefined,
  ): Promise<(constraint: Constraint) => DetailLevel> => {
    const configured = dependencies.configuredDetailLevel;
    const readable = readableConstraintsOf(authInfo);
    if (!readable || configured === 'full' || constraints.length === 0) return () => configured;
    const allowed = await readable(constraints);
    return (constraint) => (allowed.has(constraint) ? 'full' : configured);
  };
}

/** The `check` tool's lookup for the caller of one call: its level, and its own RBAC (issue 24). */
function checkLookupFor(dependencies: ToolDependencies, authInfo: AuthInfo | undefined) {
  return indexLookup(
    dependencies.index,
    dependencies.findMissingCompanions ?? NO_MISSING_COMPANIONS,
    viewerLevelOf(authInfo, dependencies.configuredDetailLevel),
    readableConstraintsOf(authInfo),
    dependencies.findExisting,
  );
}

/** The `check` tool's answer: one object at a time, within the HTTP request's CPU budget. */
async function checkCall(
  dependencies: ToolDependencies,
  manifest: string,
  namespace: string | undefined,
  authInfo: AuthInfo | undefined,
): Promise<CallToolResult> {
  const options = { namespace, budget: requestBudgetOf(authInfo) };
  const lookup = checkLookupFor(dependencies, authInfo);
  return jsonResult(await checkManifest('manifest', manifest, lookup, options));
}

export function registerTools(server: McpServer, dependencies: ToolDependencies): void {
  const synced = () => dependencies.runtimeState().source.synced;
  const callerLevels = callerLevelsFor(dependencies);

  server.registerTool(
    'query',
    {
      title: 'Query the constraints of a namespace',
      description:
        'Constraints that apply to a namespace, optionally only those that select a workload with the given pod labels, of one type, or of one severity. Returns report entries with a one-line summary each.',
      inputSchema: {
        namespace: namespaceSchema,
        labels: z
          .record(z.string().max(317), z.string().max(63))
          .optional()
          .describe(
            'Pod labels of the workload, e.g. {"app": "api"}; constraints selecting other pods are left out',
          ),
        type: z.enum(CONSTRAINT_TYPES).optional().describe('Only this constraint type'),
        severity: z.enum(SEVERITIES).optional().describe('Only this severity'),
      },
      annotations: READ_ONLY,
    },
    async (input, { authInfo }) => {
      if (!synced()) return notSynced();
      return withinBudget(authInfo, async () => {
        const levelOf = await callerLevels(queryCandidates(dependencies.index, input), authInfo);
        return jsonResult(
          queryConstraints(dependencies.index, input, dependencies.configuredDetailLevel, levelOf),
        );
      });
    },
  );

  server.registerTool(
    'explain',
    {
      title: 'Explain an error message',
      description:
        'Given an error a developer saw (e.g. "dial tcp 10.0.0.5:5432: i/o timeout", "exceeded quota: compute", "admission webhook ... denied the request") and the namespace it happened in, returns the constraints that most likely caused it, ranked, each with the reasons; or says that the cause is outside Forewarn (RBAC) or that it cannot tell.',
      inputSchema: {
        message: z.string().min(1).max(MAX_MESSAGE_LENGTH).describe('The error message, as printed'),
        namespace: namespaceSchema,
      },
      annotations: READ_ONLY,
    },
    async ({ message, namespace }, { authInfo }) => {
      if (!synced()) return notSynced();
      return withinBudget(authInfo, async () => {
        const constraints = dependencies.index.constraintsForNamespace(namespace);
        const levelOf = await callerLevels(constraints, authInfo);
        const viewer = { level: dependencies.configuredDetailLevel, namespace };
        return jsonResult(
          explainMessage(constraints, message, viewer, undefined, (constraint) => ({
            level: levelOf(constraint),
            namespace,
          })),
        );
      });
    },
  );

  server.registerTool(
    'check',
    {
      title: 'Check a manifest before applying it',
      description:
        "The admission warnings each object of a manifest (YAML or JSON, several documents allowed) would get from the Forewarn webhook, plus missing companion resources, without applying anything. Warnings are exactly what kubectl would print at apply time for the manifest's namespace. Each finding is about the object itself: violates (with evidence: field path and what fails; the object will be rejected when the source denies), unknown (with the reason), or a missing companion; rules the object passes are listed under passed. Network and mesh policies, mutations and webhooks that decide by themselves only apply: they are listed once per namespace under standing, never as findings or warnings.",
      inputSchema: {
        manifest: z.string().min(1).max(MAX_MANIFEST_BYTES).describe('Manifest text (YAML or JSON)'),
        namespace: namespaceSchema
          .optional()
          .describe('Namespace for objects that set none, as kubectl apply -n; default "default"'),
      },
      annotations: READ_ONLY,
    },
    async ({ manifest, namespace }, { authInfo }) =>
      synced() ? checkCall(dependencies, manifest, namespace, authInfo) : notSynced(),
  );
}
