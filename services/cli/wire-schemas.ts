import { z } from 'zod';
import {
  CONSTRAINT_TYPES,
  DETAIL_LEVELS,
  EFFECTS,
  SEVERITIES,
  type ConstraintView,
  type ReferencedConstraint,
  type Report,
} from '../model/api';
import { unavailableError } from './exit-codes';

// The controller's answers as the CLI reads them: validated with zod rather than trusted with a
// cast, so a proxy's HTML page or another version's body is a clear error (exit 4), not a crash in
// the table renderer. Unknown fields pass through: `-o json` prints the body as the controller sent it.

const remediation = z
  .object({
    summary: z.string(),
    steps: z.array(
      z
        .object({
          type: z.enum(['manual', 'cli']),
          description: z.string(),
          contact: z.string().optional(),
          command: z.string().optional(),
          requires_privilege: z.enum(['developer', 'namespace-admin', 'cluster-admin']).optional(),
          automated: z.boolean().optional(),
        })
        .passthrough(),
    ),
  })
  .passthrough();

const reportSchema = z
  .object({
    namespace: z.string(),
    constraintCount: z.number(),
    criticalCount: z.number(),
    warningCount: z.number(),
    infoCount: z.number(),
    schemaVersion: z.string(),
    detailLevel: z.enum(DETAIL_LEVELS),
    generatedAt: z.string(),
    constraints: z.array(
      z
        .object({
          name: z.string(),
          ref: z.string().optional(),
          summary: z.string(),
          type: z.enum(CONSTRAINT_TYPES),
          severity: z.enum(SEVERITIES),
          effect: z.enum(EFFECTS),
          source: z.string(),
          tags: z.array(z.string()),
          remediation: remediation.optional(),
          // Absent from controllers older than issue 24: then every entry is at the report's level.
          detailLevel: z.enum(DETAIL_LEVELS).optional(),
        })
        .passthrough(),
    ),
  })
  .passthrough()
  .transform((report) => ({
    ...report,
    constraints: report.constraints.map((entry) => ({
      ...entry,
      detailLevel: entry.detailLevel ?? report.detailLevel,
    })),
  }));

const metricValue = z
  .object({
    hard: z.string(),
    used: z.string(),
    unit: z.enum(['cores', 'bytes', 'count']),
    percent_used: z.number(),
  })
  .passthrough();

const constraintViewSchema = z
  .object({
    name: z.string(),
    summary: z.string(),
    namespace: z.string(),
    constraint_type: z.enum(CONSTRAINT_TYPES),
    severity: z.enum(SEVERITIES),
    source_kind: z.string(),
    source_api_version: z.string(),
    effect: z.enum(EFFECTS),
    affected_workloads: z.array(z.string()),
    tags: z.array(z.string()),
    detail_level: z.enum(DETAIL_LEVELS),
    last_observed: z.string(),
    remediation,
    metrics: z.record(metricValue).nullable(),
  })
  .passthrough();

const referencedConstraintSchema = z
  .object({
    ref: z.string(),
    name: z.string(),
    constraintType: z.enum(CONSTRAINT_TYPES),
    severity: z.enum(SEVERITIES),
    effect: z.enum(EFFECTS),
    summary: z.string(),
    remediationHint: z.string(),
    sourceKind: z.string(),
    sourceApiVersion: z.string(),
    sourceName: z.string(),
    sourceNamespace: z.string().nullable(),
  })
  .passthrough();

function validated<T>(schema: z.ZodType<T, z.ZodTypeDef, unknown>, body: unknown, what: string): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  throw unavailableError(
    `the controller answered with something that is not a ${what}${where} (${issue.message}); do the versions match?`,
  );
}

export function parseReport(body: unknown): Report {
  return validated(reportSchema, body, 'report');
}

export function parseConstraintView(body: unknown): ConstraintView {
  return validated(constraintViewSchema, body, 'constraint');
}

export function parseReferencedConstraint(body: unknown): ReferencedConstraint {
  return validated(referencedConstraintSchema, body, 'referenced constraint');
}
