import { groupOf, isRecord, versionOf, type KubernetesObject } from '../../../model/kubernetes';
import { defaultDaemonSet, defaultDeployment, defaultReplicaSet, defaultStatefulSet } from './apps';
import { defaultCronJob, defaultJob } from './batch';
import {
  defaultNamespace,
  defaultPersistentVolumeClaim,
  defaultPod,
  defaultPodTemplate,
  defaultReplicationController,
  defaultSecret,
  defaultService,
} from './core';
import { copyJson, wouldWriteDefaults, type JsonRecord } from './fields';
import type { EvaluationGuard } from '../guard/evaluation-guard';

// The API server defaults an object when it decodes it, before mutating admission, validation and
// validating admission: a ValidatingAdmissionPolicy, Pod Security Admission or a webhook sees
// `imagePullPolicy: Always` on a container whose manifest names none. Verdicts are evaluated on the
// object so defaulted (docs/decisions.md, "Verdicts on the defaulted object"). Defaults only add
// fields and never reorder a list, so every evidence path still names a field of the manifest.

type Defaulting = (object: JsonRecord) => void;

/** By `group/version/kind`: the versions v1.34 serves; other versions are left as written. */
const DEFAULTINGS: Readonly<Record<string, Defaulting>> = {
  '/v1/Pod': defaultPod,
  '/v1/PodTemplate': defaultPodTemplate,
  '/v1/ReplicationController': defaultReplicationController,
  '/v1/Service': defaultService,
  '/v1/Secret': defaultSecret,
  '/v1/Namespace': defaultNamespace,
  '/v1/PersistentVolumeClaim': defaultPersistentVolumeClaim,
  'apps/v1/Deployment': defaultDeployment,
  'apps/v1/StatefulSet': defaultStatefulSet,
  'apps/v1/DaemonSet': defaultDaemonSet,
  'apps/v1/ReplicaSet': defaultReplicaSet,
  'batch/v1/Job': defaultJob,
  'batch/v1/CronJob': defaultCronJob,
};

/** Whether the server defaults objects of this apiVersion and kind (as far as Forewarn knows). */
export function hasServerDefaults(object: KubernetesObject): boolean {
  return DEFAULTINGS[keyOf(object)] !== undefined;
}

function keyOf(object: KubernetesObject): string {
  return `${groupOf(object.apiVersion)}/${versionOf(object.apiVersion)}/${object.kind ?? ''}`;
}

/**
 * The object as the API server holds it after defaulting: a copy with the defaults set, or the
 * object itself when its kind has none or it lacks none (what the webhook forwards: the server
 * defaulted it before admission). The caller's object is never changed. Under a guard, the copy
 * counts against the object's deadline (a 5,000-container object takes milliseconds to copy); the
 * probe and the defaults themselves are a constant amount of work per field of the object.
 */
export function withServerDefaults<T extends KubernetesObject>(object: T, guard?: EvaluationGuard): T {
  const defaulting = DEFAULTINGS[keyOf(object)];
  if (!defaulting || !isRecord(object)) return object;
  if (!wouldWriteDefaults(defaulting, object)) return object;
  const copy = guard ? copyJson(object, () => guard.checkpoint()) : copyJson(object);
  defaulting(copy);
  return copy;
}
