import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { parseManifest } from '../sources/manifest-parsing';
import { answerResourceRequestFor, type ResourceDependencies } from '../http/resource-requests';
import type { AnswerImpact } from '../http/impact-route';
import { ImpactRequestError, proposedObjectsOf } from '../risks/impact';
import { readableConstraintsOf, requestBudgetOf, viewerLevelOf } from './viewer-level';

// The MCP tools of issue 35: `risks` (the namespace's workloads at risk: what `forewarn://risks/{ns}`
// and GET /resources/risks/{ns} answer the same caller) and `impact` (what POST /api/v1/impact
// answers: at the full detail level only, as it names workloads of every namespace).

export interface RiskToolDependencies extends ResourceDependencies {
  impact?: AnswerImpact;
}

const MAX_POLICY_BYTES = 2 * 1024 * 1024;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

function text(value: string, isError = false): CallToolResult {
  return { ...(isError ? { isError } : {}), content: [{ type: 'text', text: value }] };
}

export function registerRiskTools(server: McpServer, dependencies: RiskToolDependencies): void {
  server.registerTool(
    'risks',
    {
      title: 'Workloads at risk in a namespace',
      description:
        'The running workloads of a namespace that would be rejected (or warned about) if applied again now, e.g. on their next rollout, because a policy changed since they were deployed: each with the constraints it fails, the failing fields (evidence) and the fix.',
      inputSchema: {
        namespace: z
          .string()
          .max(63)
          .regex(DNS1123_LABEL, 'must be a Kubernetes namespace name (DNS-1123 label)')
          .describe('Kubernetes namespace, e.g. "shop"'),
      },
      annotations: READ_ONLY,
    },
    async ({ namespace }, { authInfo }) => {
      const answer = await answerResourceRequestFor(
        dependencies,
        { resource: 'risks', params: { namespace } },
        [],
        readableConstraintsOf(authInfo),
      );
      return text(JSON.stringify(answer.body, null, 2), answer.status !== 200);
    },
  );

  server.registerTool(
    'impact',
    {
      title: 'Impact of a policy before applying it',
      description:
        'Given one or more policy objects (YAML or JSON: Kyverno, Gatekeeper, ValidatingAdmissionPolicy and bindings, ResourceQuota, LimitRange, a Namespace with Pod Security labels, ...), new or a changed version of one in the cluster (same kind, namespace and name), which running workloads would be newly rejected, newly warned about or no longer rejected, by namespace, with evidence. Nothing is applied. Needs the full detail level.',
      inputSchema: {
        policies: z
          .string()
          .min(1)
          .max(MAX_POLICY_BYTES)
          .describe('Policy objects (YAML or JSON, several documents allowed)'),
      },
      annotations: READ_ONLY,
    },
    async ({ policies }, { authInfo }) => {
      if (!dependencies.impact) return text('impact is not evaluated by this controller', true);
      const level = viewerLevelOf(authInfo, dependencies.configuredDetailLevel);
      if (level !== 'full')
        return text(
          `impact names workloads of every namespace a policy reaches: it needs the full detail level; this answer is at ${level}`,
          true,
        );
      if (!dependencies.runtimeState().source.synced)
        return text('the index has not completed its first sync yet; retry in a few seconds', true);
      const parsed = parseManifest('policies', policies, { defaultNamespace: 'default' });
      if (parsed.problems.length > 0)
        return text(
          parsed.problems.map((problem) => `line ${problem.line}: ${problem.message}`).join('\n'),
          true,
        );
      try {
        const objects = proposedObjectsOf({ objects: parsed.objects });
        const report = await dependencies.impact(objects, { budget: requestBudgetOf(authInfo) });
        return text(JSON.stringify(report, null, 2));
      } catch (error) {
        if (error instanceof ImpactRequestError) return text(error.message, true);
        throw error;
      }
    },
  );
}
