import { z } from 'zod';
import { unavailableError } from './exit-codes';

// The controller's answers to `forewarn risks` and `forewarn impact`, checked before use (moved out of
// risks-command.ts so that the program loads zod only when one of them runs; start-up, lazy-modules.ts).

const finding = z
  .object({
    name: z.string(),
    severity: z.enum(['Critical', 'Warning', 'Info']),
    summary: z.string(),
    verdict: z.string(),
    sourceKind: z.string(),
    remediationHint: z.string(),
    evidence: z.array(z.object({ path: z.string(), message: z.string() }).passthrough()),
  })
  .passthrough();
const workload = z
  .object({
    kind: z.string(),
    apiVersion: z.string(),
    namespace: z.string(),
    name: z.string(),
    findings: z.array(finding),
  })
  .passthrough();
export const risksSchema = z
  .object({
    namespace: z.string(),
    atRiskCount: z.number(),
    warnedCount: z.number(),
    evaluated: z.boolean(),
    workloads: z.array(workload.extend({ outcome: z.enum(['rejected', 'warned']) }).passthrough()),
  })
  .passthrough();
export const impactSchema = z
  .object({
    proposed: z.array(z.object({ kind: z.string(), name: z.string() }).passthrough()),
    evaluatedWorkloads: z.number(),
    unevaluatedWorkloads: z.number().optional(),
    incomplete: z.string().optional(),
    newlyRejectedCount: z.number(),
    newlyWarnedCount: z.number(),
    noLongerRejectedCount: z.number(),
    namespaces: z.array(
      z
        .object({
          namespace: z.string(),
          workloads: z.array(
            workload.extend({ change: z.enum(['newly-rejected', 'newly-warned', 'no-longer-rejected']) }),
          ),
        })
        .passthrough(),
    ),
  })
  .passthrough();

export function validated<T>(schema: z.ZodType<T, z.ZodTypeDef, unknown>, body: unknown, what: string): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw unavailableError(
    `the controller answered with something that is not ${what} (${result.error.issues[0]?.message}); do the versions match?`,
  );
}
