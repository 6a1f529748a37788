import { stringify } from 'yaml';
import type { Severity } from '../../model/api';
import type { ConstraintDraft } from '../../model/constraint';
import { pluralOfKind } from '../../model/resources';
import { detail, namespaceName, objectName, text, type Text } from '../../model/text';
import type { WorkloadDescriptor } from '../../model/workload';

// How a companion rule's finding becomes a MissingResource constraint draft: its name
// (`missing-<kind>-<workload>`), summary, targets and a remediation carrying a manifest template.

/** The companion-resource rules; each can be turned off (`--disable-missing-rule`). */
export const MISSING_RULES = [
  'certificate-issuer',
  'monitoring',
  'mesh-mtls',
  'declared-requirements',
  'crd',
] as const;
export type MissingRuleName = (typeof MISSING_RULES)[number];

export interface MissingFinding {
  /** Stable identity for debouncing: rule + subject + missing thing. */
  key: string;
  rule: MissingRuleName;
  draft: ConstraintDraft;
}

/** What a rule found missing, before it becomes a constraint draft. */
export interface MissingThing {
  rule: MissingRuleName;
  severity: Severity;
  apiVersion: string;
  kind: string;
  /** The missing object's name when one is expected. */
  expectedName?: string;
  namespaced: boolean;
  reason: Text;
  template: Record<string, unknown>;
}

function findingName(kind: string, subject: string): string {
  return `missing-${kind.toLowerCase()}-${subject}`;
}

export function toFinding(workload: WorkloadDescriptor, missing: MissingThing): MissingFinding {
  const name = findingName(missing.kind, workload.name);
  const subject = objectName(workload.name, workload.namespace);
  const namespace = namespaceName(workload.namespace);
  const manifest = stringify(missing.template).trimEnd();
  const missingName = missing.expectedName
    ? text` "${objectName(missing.expectedName, workload.namespace)}"`
    : [];
  const summary = text`${workload.kind} "${subject}" needs ${missing.kind}${missingName} (${missing.apiVersion}), which is missing in ${namespace}: ${missing.reason}`;
  const hint = missing.expectedName
    ? text`create ${missing.kind}${missingName} or fix the reference on ${workload.kind} "${subject}"`
    : text`create a ${missing.kind} for ${workload.kind} "${subject}" (template in the remediation steps)`;
  return {
    key: `${missing.rule}|${workload.kind}/${workload.namespace}/${workload.name}|${missing.kind}/${missing.expectedName ?? ''}`,
    rule: missing.rule,
    draft: {
      id: `${missing.rule}/${workload.kind}/${workload.name}/${missing.kind}`,
      name,
      displayName: [name],
      type: 'MissingResource',
      severity: missing.severity,
      effect: 'missing',
      adapter: 'missingresource',
      source: {
        kind: workload.kind,
        apiVersion: workload.apiVersion,
        name: workload.name,
        namespace: workload.namespace,
      },
      scope: { kind: 'namespace', namespace: workload.namespace },
      workloadSelector:
        Object.keys(workload.podLabels).length > 0 ? { matchLabels: { ...workload.podLabels } } : undefined,
      resourceTargets:
        workload.kind === 'Ingress'
          ? [{ group: 'networking.k8s.io', resource: 'ingresses' }]
          : [
              { group: '', resource: 'pods' },
              {
                group: workload.apiVersion.includes('/') ? workload.apiVersion.split('/')[0] : '',
                resource: pluralOfKind(workload.kind),
              },
            ],
      tags: ['missing-resource', missing.rule, missing.kind.toLowerCase()],
      summary,
      remediationHint: hint,
      remediation: {
        summary: hint,
        steps: [
          {
            type: 'cli',
            description: text`Create the missing ${missing.kind} from this template (adjust it first)`,
            command: text`kubectl apply -f - <<'EOF'\n${detail(manifest, `(${missing.kind} manifest)`)}\nEOF`,
            requiresPrivilege: missing.namespaced ? 'namespace-admin' : 'cluster-admin',
            automated: false,
          },
          {
            type: 'manual',
            description: text`Ask the platform team whether ${missing.kind} is the right companion here`,
            requiresPrivilege: missing.namespaced ? 'namespace-admin' : 'cluster-admin',
            automated: false,
          },
        ],
      },
    },
  };
}

export function crdMissing(
  workload: WorkloadDescriptor,
  group: string,
  kind: string,
  version: string,
  why: Text,
): MissingFinding {
  const crdName = `${pluralOfKind(kind)}.${group}`;
  const finding = toFinding(workload, {
    rule: 'crd',
    severity: 'Warning',
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    expectedName: crdName,
    namespaced: false,
    reason: text`${why}, but the ${kind} kind (${group}/${version}) is not installed in the cluster`,
    template: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: crdName },
    },
  });
  return {
    ...finding,
    draft: {
      ...finding.draft,
      name: findingName(`crd-${kind}`, workload.name),
      displayName: [findingName(`crd-${kind}`, workload.name)],
    },
  };
}
