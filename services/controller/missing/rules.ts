import { parse as parseYaml } from 'yaml';
import { isRecord, type Labels } from '../../model/kubernetes';
import { matchesLabelSelector, parseLabelSelector } from '../../model/label-selector';
import { detail, objectName, text } from '../../model/text';
import type { InventoryRecord } from './inventory';
import { crdMissing, toFinding, type MissingFinding, type MissingRuleName } from './finding';

export type { MissingFinding };
import type { WorkloadDescriptor } from '../../model/workload';

// Companion rules (MissingResource): pure functions from a workload (or namespace) and what exists
// to findings. Each rule can be disabled; the tracker debounces findings before they are reported.

export interface CompanionLookup {
  records(group: string, kind: string, namespace?: string | null): InventoryRecord[];
  /** One object by name: what `records(...).some(record => record.name === name)` asks, without a list. */
  record(group: string, kind: string, namespace: string | null, name: string): InventoryRecord | undefined;
  /** The kind exists in the cluster (built in, or its CRD is installed). */
  hasKind(group: string, kind: string): boolean;
  /** Objects of the kind are visible to Forewarn (watched, or in the manifests). */
  canSee(group: string, kind: string): boolean;
  namespaceLabels(namespace: string): Labels;
  meshRootNamespace: string;
}

export interface DeclaredRequirement {
  apiVersion: string;
  kind: string;
  matchLabels?: Record<string, string>;
  reason: string;
}

export const ANNOTATION_REQUIRES = 'forewarn.io/requires';
const ISSUER_ANNOTATIONS: Array<{ annotation: string; kind: 'ClusterIssuer' | 'Issuer' }> = [
  { annotation: 'cert-manager.io/cluster-issuer', kind: 'ClusterIssuer' },
  { annotation: 'cert-manager.io/issuer', kind: 'Issuer' },
];
const METRICS_PORT_NAMES = new Set(['metrics', 'http-metrics']);
const MONITORING_GROUP = 'monitoring.coreos.com';

export function certificateIssuerFindings(
  workload: WorkloadDescriptor,
  lookup: CompanionLookup,
): MissingFinding[] {
  const findings: MissingFinding[] = [];
  for (const { annotation, kind } of ISSUER_ANNOTATIONS) {
    const issuer = workload.annotations[annotation];
    if (!issuer) continue;
    const why = text`it is annotated ${annotation}=${objectName(issuer, workload.namespace)}`;
    if (!lookup.hasKind('cert-manager.io', kind)) {
      findings.push(crdMissing(workload, 'cert-manager.io', kind, 'v1', why));
      continue;
    }
    const namespace = kind === 'ClusterIssuer' ? null : workload.namespace;
    if (lookup.record('cert-manager.io', kind, namespace, issuer)) continue;
    findings.push(
      toFinding(workload, {
        rule: 'certificate-issuer',
        severity: 'Critical',
        apiVersion: 'cert-manager.io/v1',
        kind,
        expectedName: issuer,
        namespaced: kind === 'Issuer',
        reason: text`${why}; certificates for it will never be issued`,
        template: {
          apiVersion: 'cert-manager.io/v1',
          kind,
          metadata: kind === 'Issuer' ? { name: issuer, namespace: workload.namespace } : { name: issuer },
          spec: {
            acme: {
              server: 'https://acme-v02.api.letsencrypt.org/directory',
              privateKeySecretRef: { name: `${issuer}-account-key` },
            },
          },
        },
      }),
    );
  }
  return findings;
}

function monitorSelects(monitor: InventoryRecord, labels: Labels): boolean {
  try {
    return matchesLabelSelector(parseLabelSelector(monitor.monitorSelector, 'spec.selector'), labels);
  } catch {
    return false;
  }
}

function monitorWatchesNamespace(monitor: InventoryRecord, namespace: string): boolean {
  const namespaces = monitor.monitorNamespaces ?? { any: false, names: [] };
  if (namespaces.any) return true;
  if (namespaces.names.length > 0) return namespaces.names.includes(namespace);
  return monitor.namespace === namespace;
}

export function monitoringFindings(workload: WorkloadDescriptor, lookup: CompanionLookup): MissingFinding[] {
  if (workload.kind === 'Ingress' || !workload.portNames.some((port) => METRICS_PORT_NAMES.has(port)))
    return [];
  const serviceMonitorsServed = lookup.hasKind(MONITORING_GROUP, 'ServiceMonitor');
  const podMonitorsServed = lookup.hasKind(MONITORING_GROUP, 'PodMonitor');
  if (!serviceMonitorsServed && !podMonitorsServed) return [];
  const podMonitored = lookup
    .records(MONITORING_GROUP, 'PodMonitor')
    .some(
      (monitor) =>
        monitorWatchesNamespace(monitor, workload.namespace) && monitorSelects(monitor, workload.podLabels),
    );
  if (podMonitored) return [];
  const services = lookup
    .records('', 'Service', workload.namespace)
    .filter(
      (service) =>
        service.serviceSelector !== undefined &&
        Object.keys(service.serviceSelector).length > 0 &&
        matchesLabelSelector({ matchLabels: service.serviceSelector }, workload.podLabels),
    );
  const serviceMonitored = lookup
    .records(MONITORING_GROUP, 'ServiceMonitor')
    .some(
      (monitor) =>
        monitorWatchesNamespace(monitor, workload.namespace) &&
        services.some((service) => monitorSelects(monitor, service.labels)),
    );
  if (serviceMonitored) return [];
  const port = workload.portNames.find((name) => METRICS_PORT_NAMES.has(name)) ?? 'metrics';
  return [
    toFinding(workload, {
      rule: 'monitoring',
      severity: 'Warning',
      apiVersion: `${MONITORING_GROUP}/v1`,
      kind: 'PodMonitor',
      namespaced: true,
      reason: text`it exposes a port named ${port} but no ServiceMonitor or PodMonitor selects it, so nothing scrapes its metrics`,
      template: {
        apiVersion: `${MONITORING_GROUP}/v1`,
        kind: 'PodMonitor',
        metadata: { name: workload.name, namespace: workload.namespace },
        spec: { selector: { matchLabels: workload.podLabels }, podMetricsEndpoints: [{ port }] },
      },
    }),
  ];
}

/** Namespaces labelled for sidecar injection need a PeerAuthentication (own, or mesh-wide). */
export function meshFindings(namespace: string, lookup: CompanionLookup): MissingFinding[] {
  const labels = lookup.namespaceLabels(namespace);
  const injected = labels['istio-injection'] === 'enabled' || labels['istio.io/rev'] !== undefined;
  if (!injected) return [];
  const subject: WorkloadDescriptor = {
    kind: 'Namespace',
    apiVersion: 'v1',
    name: namespace,
    namespace,
    podLabels: {},
    annotations: {},
    portNames: [],
  };
  const why = text`it is labelled for sidecar injection`;
  if (!lookup.hasKind('security.istio.io', 'PeerAuthentication'))
    return [crdMissing(subject, 'security.istio.io', 'PeerAuthentication', 'v1', why)];
  const applies = lookup
    .records('security.istio.io', 'PeerAuthentication')
    .some(
      (record) =>
        record.namespace === namespace ||
        (record.namespace === lookup.meshRootNamespace && record.hasWorkloadSelector !== true),
    );
  if (applies) return [];
  const finding = toFinding(subject, {
    rule: 'mesh-mtls',
    severity: 'Warning',
    apiVersion: 'security.istio.io/v1',
    kind: 'PeerAuthentication',
    namespaced: true,
    reason: text`${why} but no PeerAuthentication applies to it, so mutual TLS is not enforced`,
    template: {
      apiVersion: 'security.istio.io/v1',
      kind: 'PeerAuthentication',
      metadata: { name: 'default', namespace },
      spec: { mtls: { mode: 'STRICT' } },
    },
  });
  // A namespace finding concerns every workload of the namespace.
  return [
    { ...finding, draft: { ...finding.draft, workloadSelector: undefined, resourceTargets: undefined } },
  ];
}

/** Reads `forewarn.io/requires` (a JSON or YAML list); malformed entries are ignored with the rest kept. */
export function parseDeclaredRequirements(value: string | undefined): DeclaredRequirement[] {
  if (!value) return [];
  let parsed: unknown;
  try {
    parsed = parseYaml(value);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  return parsed.flatMap((entry) =>
    isRecord(entry) && typeof entry.apiVersion === 'string' && typeof entry.kind === 'string'
      ? [
          {
            apiVersion: entry.apiVersion,
            kind: entry.kind,
            matchLabels: isRecord(entry.matchLabels)
              ? Object.fromEntries(
                  Object.entries(entry.matchLabels).filter(
                    (pair): pair is [string, string] => typeof pair[1] === 'string',
                  ),
                )
              : undefined,
            reason: typeof entry.reason === 'string' ? entry.reason : 'declared as required',
          },
        ]
      : [],
  );
}

export function declaredRequirementFindings(
  workload: WorkloadDescriptor,
  lookup: CompanionLookup,
): MissingFinding[] {
  return parseDeclaredRequirements(workload.annotations[ANNOTATION_REQUIRES]).flatMap((requirement) => {
    const group = requirement.apiVersion.includes('/') ? requirement.apiVersion.split('/')[0] : '';
    const why = text`it declares ${ANNOTATION_REQUIRES} ${requirement.kind} (${detail(requirement.reason, 'reason hidden')})`;
    if (!lookup.hasKind(group, requirement.kind))
      return [
        crdMissing(workload, group, requirement.kind, requirement.apiVersion.split('/')[1] ?? 'v1', why),
      ];
    // A kind Forewarn does not watch cannot be proven missing: say nothing rather than cry wolf.
    if (!lookup.canSee(group, requirement.kind)) return [];
    const present = lookup
      .records(group, requirement.kind, workload.namespace)
      .some(
        (record) =>
          requirement.matchLabels === undefined ||
          matchesLabelSelector({ matchLabels: requirement.matchLabels }, record.labels),
      );
    if (present) return [];
    return [
      toFinding(workload, {
        rule: 'declared-requirements',
        severity: 'Warning',
        apiVersion: requirement.apiVersion,
        kind: requirement.kind,
        namespaced: true,
        reason: [requirement.reason],
        template: {
          apiVersion: requirement.apiVersion,
          kind: requirement.kind,
          metadata: {
            name: `${workload.name}-${requirement.kind.toLowerCase()}`,
            namespace: workload.namespace,
            labels: requirement.matchLabels ?? {},
          },
        },
      }),
    ];
  });
}

/** Every finding for one workload, with disabled rules left out. */
export function findingsForWorkload(
  workload: WorkloadDescriptor,
  lookup: CompanionLookup,
  disabled: ReadonlySet<MissingRuleName> = new Set(),
): MissingFinding[] {
  const findings = [
    ...(disabled.has('certificate-issuer') ? [] : certificateIssuerFindings(workload, lookup)),
    ...(disabled.has('monitoring') ? [] : monitoringFindings(workload, lookup)),
    ...(disabled.has('declared-requirements') ? [] : declaredRequirementFindings(workload, lookup)),
  ];
  return disabled.has('crd') ? findings.filter((finding) => finding.rule !== 'crd') : findings;
}
