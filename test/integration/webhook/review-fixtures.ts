import { listedConstraint, type Operation, type ReviewTarget, type StandInConstraint } from './harness';

// The fixtures of the HTTPS admission tests: what the stand-in controller lists for namespace
// `shop`, the warnings those constraints must become, and one AdmissionReview target per kind
// the webhook is registered for (spec 4.4), with the query each must produce.

export const QUOTA = listedConstraint({
  name: 'compute',
  severity: 'Critical',
  constraintType: 'ResourceLimit',
  effect: 'limit',
  sourceKind: 'ResourceQuota',
  summary: 'ResourceQuota "compute" uses 95% of limits.cpu (3800m/4)',
  remediationHint: 'Free capacity or ask the namespace admin for a larger quota',
});
export const DENY_INGRESS = listedConstraint({
  name: 'deny-in/ingress',
  severity: 'Warning',
  summary: 'NetworkPolicy "deny-in" denies all ingress traffic to app=web',
  remediationHint: 'Add a NetworkPolicy that allows the traffic your pods need',
});
export const IMAGE_POLICY = listedConstraint({
  name: 'image-policy/images.example.com',
  severity: 'Warning',
  constraintType: 'Admission',
  sourceKind: 'ValidatingWebhookConfiguration',
  summary: 'ValidatingWebhookConfiguration "image-policy" rejects deployments with unsigned images',
  remediationHint: 'Sign images with cosign before deploying',
});
export const LONG_SCHEDULE_RULE = listedConstraint({
  name: 'no-overlap',
  severity: 'Critical',
  constraintType: 'Admission',
  sourceKind: 'ClusterPolicy',
  summary: `ClusterPolicy "no-overlap" requires concurrencyPolicy Forbid ${'because overlapping runs corrupt the ledger '.repeat(6)}`,
  remediationHint: 'Set spec.concurrencyPolicy: Forbid',
});
export const LIMIT_RANGE = listedConstraint({
  name: 'defaults',
  severity: 'Info',
  constraintType: 'ResourceLimit',
  effect: 'limit',
  sourceKind: 'LimitRange',
  summary: 'LimitRange "defaults" sets default requests',
  remediationHint: 'Set requests explicitly',
});

export const QUOTA_WARNING =
  '[CRITICAL] ResourceQuota "compute" uses 95% of limits.cpu (3800m/4) - Free capacity or ask the namespace admin for a larger quota';
export const INGRESS_WARNING =
  '[WARNING] NetworkPolicy "deny-in" denies all ingress traffic to app=web - Add a NetworkPolicy that allows the traffic your pods need';
export const IMAGE_WARNING =
  '[WARNING] ValidatingWebhookConfiguration "image-policy" rejects deployments with unsigned images - Sign images with cosign before deploying';
export const LONG_WARNING =
  `[CRITICAL] ${LONG_SCHEDULE_RULE.summary.trim()} - Set spec.concurrencyPolicy: Forbid`
    .slice(0, 255)
    .trimEnd() + '…';

const WEB = { app: 'web', tier: 'frontend' };
const OWN = { app: 'web-controller' };
const podSpec = { containers: [{ name: 'main', image: 'registry.example.com/web:1.0' }] };
const template = (labels: Record<string, string>) => ({ metadata: { labels }, spec: podSpec });

export interface KindCase {
  target: ReviewTarget;
  query: { resource: string; labels: string | null };
  warnings: string[];
}

export const KINDS: Record<string, KindCase> = {
  Pod: {
    target: {
      group: '',
      version: 'v1',
      kind: 'Pod',
      resource: 'pods',
      object: { metadata: { name: 'web-0', labels: WEB }, spec: podSpec },
    },
    query: { resource: 'pods', labels: 'app=web,tier=frontend' },
    warnings: [QUOTA_WARNING, INGRESS_WARNING],
  },
  Deployment: {
    target: {
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      resource: 'deployments',
      object: {
        metadata: { name: 'web', labels: OWN },
        spec: { selector: { matchLabels: WEB }, template: template(WEB) },
      },
    },
    query: { resource: 'apps/deployments', labels: 'app=web,tier=frontend' },
    warnings: [QUOTA_WARNING, INGRESS_WARNING, IMAGE_WARNING],
  },
  StatefulSet: {
    target: {
      group: 'apps',
      version: 'v1',
      kind: 'StatefulSet',
      resource: 'statefulsets',
      object: {
        metadata: { name: 'db', labels: { app: 'web' } },
        spec: { serviceName: 'db', template: template({ app: 'db' }) },
      },
    },
    query: { resource: 'apps/statefulsets', labels: 'app=db' },
    warnings: [QUOTA_WARNING],
  },
  DaemonSet: {
    target: {
      group: 'apps',
      version: 'v1',
      kind: 'DaemonSet',
      resource: 'daemonsets',
      object: { metadata: { name: 'agent', labels: OWN }, spec: { template: template({ app: 'web' }) } },
    },
    query: { resource: 'apps/daemonsets', labels: 'app=web' },
    warnings: [QUOTA_WARNING, INGRESS_WARNING],
  },
  ReplicaSet: {
    target: {
      group: 'apps',
      version: 'v1',
      kind: 'ReplicaSet',
      resource: 'replicasets',
      object: { metadata: { name: 'web-5d4f', labels: OWN }, spec: { template: template(WEB) } },
    },
    query: { resource: 'apps/replicasets', labels: 'app=web,tier=frontend' },
    warnings: [QUOTA_WARNING, INGRESS_WARNING],
  },
  Job: {
    target: {
      group: 'batch',
      version: 'v1',
      kind: 'Job',
      resource: 'jobs',
      object: {
        metadata: { name: 'migrate', labels: OWN },
        spec: { template: template({ app: 'web', job: 'migrate' }) },
      },
    },
    query: { resource: 'batch/jobs', labels: 'app=web,job=migrate' },
    warnings: [QUOTA_WARNING, INGRESS_WARNING],
  },
  CronJob: {
    target: {
      group: 'batch',
      version: 'v1',
      kind: 'CronJob',
      resource: 'cronjobs',
      object: {
        metadata: { name: 'ledger', labels: OWN },
        spec: {
          schedule: '*/5 * * * *',
          jobTemplate: { metadata: { labels: { job: 'x' } }, spec: { template: template({ app: 'web' }) } },
        },
      },
    },
    query: { resource: 'batch/cronjobs', labels: 'app=web' },
    warnings: [QUOTA_WARNING, LONG_WARNING, INGRESS_WARNING],
  },
  Service: {
    target: {
      group: '',
      version: 'v1',
      kind: 'Service',
      resource: 'services',
      object: {
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: { selector: { app: 'other' }, ports: [{ port: 80 }] },
      },
    },
    query: { resource: 'services', labels: 'app=web' },
    warnings: [QUOTA_WARNING, INGRESS_WARNING],
  },
  ConfigMap: {
    target: {
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      resource: 'configmaps',
      object: { metadata: { name: 'settings' }, data: { a: 'b' } },
    },
    // No labels: sent as an empty set, so only namespace-wide constraints (empty selectors) come back.
    query: { resource: 'configmaps', labels: '' },
    warnings: [QUOTA_WARNING],
  },
};

// Deliberately not in severity order: the webhook sorts.
export const STAND_IN_FIXTURES: Record<string, StandInConstraint[]> = {
  shop: [
    { constraint: DENY_INGRESS, labels: { app: 'web' } },
    { constraint: LIMIT_RANGE },
    { constraint: QUOTA },
    { constraint: IMAGE_POLICY, resource: 'apps/deployments' },
    { constraint: LONG_SCHEDULE_RULE, resource: 'batch/cronjobs' },
  ],
};

export const OPERATIONS: Operation[] = ['CREATE', 'UPDATE'];
