import { isRecord } from '../../../model/kubernetes';
import {
  defaultInteger,
  defaultPointer,
  defaultString,
  recordAt,
  recordsAt,
  removeField,
  setField,
  structAt,
  type JsonRecord,
} from './fields';
import { defaultPullPolicy } from './image-reference';

// The core group's defaults (k8s.io/kubernetes v1.34.4, pkg/apis/core/v1/defaults.go and the
// generated zz_generated.defaults.go that says where each applies), for what a workload consists
// of: the pod spec wherever it is embedded, Pods, Services, Secrets, Namespaces, PersistentVolumeClaims,
// PodTemplates and ReplicationControllers. Feature-gated defaults follow v1.34's default gates: pod-level
// resources (beta, on) are not applied (see docs/decisions.md), image volumes (beta, off) neither.

/** `terminationMessagePath`'s default (v1.TerminationMessagePathDefault). */
const TERMINATION_MESSAGE_PATH = '/dev/termination-log';
/** Secret, ConfigMap, downward API and projected volumes: 0644. */
const VOLUME_DEFAULT_MODE = 0o644;
const TOKEN_EXPIRATION_SECONDS = 3600;
const CLIENT_IP_AFFINITY_SECONDS = 10800;

function objectFieldSelector(selector: JsonRecord | undefined): void {
  if (selector) defaultString(selector, 'apiVersion', 'v1');
}

function httpGetAction(handler: JsonRecord | undefined): void {
  const action = handler && recordAt(handler, 'httpGet');
  if (!action) return;
  defaultString(action, 'path', '/');
  defaultString(action, 'scheme', 'HTTP');
}

function probe(container: JsonRecord, field: string): void {
  const value = recordAt(container, field);
  if (!value) return;
  defaultInteger(value, 'timeoutSeconds', 1);
  defaultInteger(value, 'periodSeconds', 10);
  defaultInteger(value, 'successThreshold', 1);
  defaultInteger(value, 'failureThreshold', 3);
  httpGetAction(value);
  const grpc = recordAt(value, 'grpc');
  if (grpc) defaultPointer(grpc, 'service', '');
}

function container(value: JsonRecord): void {
  // A Go struct, never omitted when serialized: admission sees `resources: {}` on every container.
  structAt(value, 'resources');
  defaultString(value, 'imagePullPolicy', defaultPullPolicy(value.image));
  defaultString(value, 'terminationMessagePath', TERMINATION_MESSAGE_PATH);
  defaultString(value, 'terminationMessagePolicy', 'File');
  for (const port of recordsAt(value, 'ports')) defaultString(port, 'protocol', 'TCP');
  for (const variable of recordsAt(value, 'env')) {
    const source = recordAt(variable, 'valueFrom');
    if (!source) continue;
    objectFieldSelector(recordAt(source, 'fieldRef'));
    const fileKey = recordAt(source, 'fileKeyRef');
    if (fileKey) defaultPointer(fileKey, 'optional', false);
  }
  probe(value, 'livenessProbe');
  probe(value, 'readinessProbe');
  probe(value, 'startupProbe');
  const lifecycle = recordAt(value, 'lifecycle');
  if (lifecycle) {
    httpGetAction(recordAt(lifecycle, 'postStart'));
    httpGetAction(recordAt(lifecycle, 'preStop'));
  }
}

function persistentVolumeClaimSpec(spec: JsonRecord | undefined): void {
  if (!spec) return;
  defaultPointer(spec, 'volumeMode', 'Filesystem');
  structAt(spec, 'resources');
}

/** A volume that names no source at all is an emptyDir. */
function hasVolumeSource(value: JsonRecord): boolean {
  return Object.keys(value).some((key) => key !== 'name' && value[key] !== null && value[key] !== undefined);
}

function volume(value: JsonRecord): void {
  if (!hasVolumeSource(value)) setField(value, 'emptyDir', {});
  const hostPath = recordAt(value, 'hostPath');
  if (hostPath) defaultPointer(hostPath, 'type', '');
  const secret = recordAt(value, 'secret');
  if (secret) defaultPointer(secret, 'defaultMode', VOLUME_DEFAULT_MODE);
  const configMap = recordAt(value, 'configMap');
  if (configMap) defaultPointer(configMap, 'defaultMode', VOLUME_DEFAULT_MODE);
  const iscsi = recordAt(value, 'iscsi');
  if (iscsi) defaultString(iscsi, 'iscsiInterface', 'default');
  const rbd = recordAt(value, 'rbd');
  if (rbd) {
    defaultString(rbd, 'pool', 'rbd');
    defaultString(rbd, 'user', 'admin');
    defaultString(rbd, 'keyring', '/etc/ceph/keyring');
  }
  const downwardApi = recordAt(value, 'downwardAPI');
  if (downwardApi) {
    defaultPointer(downwardApi, 'defaultMode', VOLUME_DEFAULT_MODE);
    for (const item of recordsAt(downwardApi, 'items')) objectFieldSelector(recordAt(item, 'fieldRef'));
  }
  const azureDisk = recordAt(value, 'azureDisk');
  if (azureDisk) {
    defaultPointer(azureDisk, 'cachingMode', 'ReadWrite');
    defaultPointer(azureDisk, 'fsType', 'ext4');
    defaultPointer(azureDisk, 'readOnly', false);
    defaultPointer(azureDisk, 'kind', 'Shared');
  }
  const projected = recordAt(value, 'projected');
  if (projected) {
    defaultPointer(projected, 'defaultMode', VOLUME_DEFAULT_MODE);
    for (const source of recordsAt(projected, 'sources')) {
      const downward = recordAt(source, 'downwardAPI');
      if (downward)
        for (const item of recordsAt(downward, 'items')) objectFieldSelector(recordAt(item, 'fieldRef'));
      const token = recordAt(source, 'serviceAccountToken');
      if (token) defaultPointer(token, 'expirationSeconds', TOKEN_EXPIRATION_SECONDS);
    }
  }
  const scaleIo = recordAt(value, 'scaleIO');
  if (scaleIo) {
    defaultString(scaleIo, 'storageMode', 'ThinProvisioned');
    defaultString(scaleIo, 'fsType', 'xfs');
  }
  const ephemeral = recordAt(value, 'ephemeral');
  const claimTemplate = ephemeral && recordAt(ephemeral, 'volumeClaimTemplate');
  if (claimTemplate) {
    structAt(claimTemplate, 'metadata');
    persistentVolumeClaimSpec(structAt(claimTemplate, 'spec'));
  }
}

/** SetDefaults_PodSpec and what the generated code applies inside every pod spec. */
export function defaultPodSpec(spec: JsonRecord): void {
  defaultString(spec, 'dnsPolicy', 'ClusterFirst');
  defaultString(spec, 'restartPolicy', 'Always');
  defaultPointer(spec, 'securityContext', {});
  defaultPointer(spec, 'terminationGracePeriodSeconds', 30);
  defaultString(spec, 'schedulerName', 'default-scheduler');
  for (const value of recordsAt(spec, 'volumes')) volume(value);
  for (const field of ['initContainers', 'containers', 'ephemeralContainers'])
    for (const value of recordsAt(spec, field)) container(value);
}

/**
 * A pod template (`spec.template`): its pod spec, and its metadata and spec as the server serializes
 * Go structs, `{}` when empty.
 */
export function defaultTemplateSpec(template: JsonRecord | undefined): void {
  if (!template) return;
  structAt(template, 'metadata');
  const spec = structAt(template, 'spec');
  if (spec) defaultPodSpec(spec);
}

/** Limits without a request: the request is the limit (quantities copied as written). */
function requestsFromLimits(value: JsonRecord): void {
  const resources = recordAt(value, 'resources');
  const limits = resources && recordAt(resources, 'limits');
  if (!resources || !limits) return;
  const requests = structAt(resources, 'requests');
  if (!requests) return;
  for (const [name, quantity] of Object.entries(limits))
    if (!Object.hasOwn(requests, name)) setField(requests, name, quantity);
}

/** SetDefaults_Pod: what only a Pod gets, not a pod template. */
function defaultPodOnly(pod: JsonRecord): void {
  const spec = structAt(pod, 'spec');
  if (!spec) return;
  for (const field of ['containers', 'initContainers'])
    for (const value of recordsAt(spec, field)) requestsFromLimits(value);
  defaultPointer(spec, 'enableServiceLinks', true);
  if (spec.hostNetwork === true)
    for (const field of ['containers', 'initContainers'])
      for (const value of recordsAt(spec, field))
        for (const port of recordsAt(value, 'ports'))
          defaultInteger(port, 'hostPort', port.containerPort as number);
}

export function defaultPod(pod: JsonRecord): void {
  defaultPodOnly(pod);
  const spec = structAt(pod, 'spec');
  if (spec) defaultPodSpec(spec);
}

export function defaultPodTemplate(podTemplate: JsonRecord): void {
  defaultTemplateSpec(structAt(podTemplate, 'template'));
}

function labelsOf(record: JsonRecord | undefined): JsonRecord | undefined {
  const metadata = record && recordAt(record, 'metadata');
  return metadata && recordAt(metadata, 'labels');
}

/** An object without labels gets its template's (ReplicationController, Job). */
export function labelsFromTemplate(object: JsonRecord, template: JsonRecord | undefined): void {
  const templateLabels = labelsOf(template);
  // An empty map is not written back either (omitempty): nothing to copy.
  if (!templateLabels || Object.keys(templateLabels).length === 0) return;
  const metadata = structAt(object, 'metadata');
  const labels = metadata && metadata.labels;
  if (metadata && (!isRecord(labels) || Object.keys(labels).length === 0))
    setField(metadata, 'labels', { ...templateLabels });
}

export function defaultReplicationController(controller: JsonRecord): void {
  const spec = structAt(controller, 'spec');
  if (!spec) return;
  const template = recordAt(spec, 'template');
  const templateLabels = labelsOf(template);
  if (templateLabels && Object.keys(templateLabels).length > 0) {
    const selector = spec.selector;
    if (!isRecord(selector) || Object.keys(selector).length === 0)
      setField(spec, 'selector', { ...templateLabels });
    labelsFromTemplate(controller, template);
  }
  defaultPointer(spec, 'replicas', 1);
  if (template) defaultTemplateSpec(template);
}

function externallyAccessible(spec: JsonRecord): boolean {
  return (
    spec.type === 'LoadBalancer' ||
    spec.type === 'NodePort' ||
    (spec.type === 'ClusterIP' && Array.isArray(spec.externalIPs) && spec.externalIPs.length > 0)
  );
}

function clientIpTimeoutSet(spec: JsonRecord): boolean {
  const config = recordAt(spec, 'sessionAffinityConfig');
  const clientIp = config && recordAt(config, 'clientIP');
  return clientIp !== undefined && clientIp.timeoutSeconds !== undefined && clientIp.timeoutSeconds !== null;
}

/**
 * SetDefaults_Service. The registry then allocates cluster IPs, node ports and IP families before
 * validation; those depend on the cluster and are not guessed here.
 */
export function defaultService(service: JsonRecord): void {
  const spec = structAt(service, 'spec');
  if (!spec) return;
  defaultString(spec, 'sessionAffinity', 'None');
  if (spec.sessionAffinity === 'None') removeField(spec, 'sessionAffinityConfig');
  if (spec.sessionAffinity === 'ClientIP' && !clientIpTimeoutSet(spec))
    setField(spec, 'sessionAffinityConfig', { clientIP: { timeoutSeconds: CLIENT_IP_AFFINITY_SECONDS } });
  defaultString(spec, 'type', 'ClusterIP');
  for (const port of recordsAt(spec, 'ports')) {
    defaultString(port, 'protocol', 'TCP');
    const target = port.targetPort;
    if (target === undefined || target === null || target === 0 || target === '')
      setField(port, 'targetPort', port.port);
  }
  if (externallyAccessible(spec)) defaultString(spec, 'externalTrafficPolicy', 'Cluster');
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer' || spec.type === 'ClusterIP')
    defaultPointer(spec, 'internalTrafficPolicy', 'Cluster');
  if (spec.type === 'LoadBalancer') {
    defaultPointer(spec, 'allocateLoadBalancerNodePorts', true);
    const status = recordAt(service, 'status');
    const loadBalancer = status && recordAt(status, 'loadBalancer');
    for (const ingress of loadBalancer ? recordsAt(loadBalancer, 'ingress') : [])
      if (typeof ingress.ip === 'string' && ingress.ip !== '') defaultPointer(ingress, 'ipMode', 'VIP');
  }
}

export function defaultSecret(secret: JsonRecord): void {
  defaultString(secret, 'type', 'Opaque');
}

/** Every namespace carries its own name as a label. */
export function defaultNamespace(namespace: JsonRecord): void {
  const metadata = recordAt(namespace, 'metadata');
  const name = metadata?.name;
  if (!metadata || typeof name !== 'string' || name === '') return;
  const labels = isRecord(metadata.labels) ? metadata.labels : {};
  if (labels['kubernetes.io/metadata.name'] !== name)
    setField(metadata, 'labels', { ...labels, 'kubernetes.io/metadata.name': name });
}

/**
 * A claim by itself: Filesystem. Its default `status.phase: Pending` is not applied: the registry
 * clears a new claim's status before validation (PrepareForCreate), so admission never sees it.
 */
export function defaultPersistentVolumeClaim(claim: JsonRecord): void {
  persistentVolumeClaimSpec(structAt(claim, 'spec'));
}

/**
 * A StatefulSet's claim template keeps the defaulted status (nothing clears it), and the conversion
 * to apps/v1 names its apiVersion and kind (pkg/apis/apps/v1/conversion.go).
 */
export function defaultClaimTemplate(claim: JsonRecord): void {
  defaultString(claim, 'apiVersion', 'v1');
  defaultString(claim, 'kind', 'PersistentVolumeClaim');
  const status = structAt(claim, 'status');
  if (status) defaultString(status, 'phase', 'Pending');
  persistentVolumeClaimSpec(structAt(claim, 'spec'));
}
