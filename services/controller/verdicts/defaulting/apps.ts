import {
  defaultPointer,
  defaultString,
  recordAt,
  recordsAt,
  setField,
  structAt,
  type JsonRecord,
} from './fields';
import { defaultClaimTemplate, defaultTemplateSpec } from './core';

// The apps group's defaults (k8s.io/kubernetes v1.34.4, pkg/apis/apps/v1/defaults.go), with the pod
// template's. v1.34's default feature gates: StatefulSet PVC retention (GA) applies,
// MaxUnavailableStatefulSet (alpha, off) does not.

const REVISION_HISTORY_LIMIT = 10;

function specOf(object: JsonRecord): JsonRecord | undefined {
  const spec = structAt(object, 'spec');
  if (spec) defaultTemplateSpec(structAt(spec, 'template'));
  return spec;
}

export function defaultDeployment(deployment: JsonRecord): void {
  const spec = specOf(deployment);
  if (!spec) return;
  defaultPointer(spec, 'replicas', 1);
  const strategy = structAt(spec, 'strategy');
  if (strategy) {
    defaultString(strategy, 'type', 'RollingUpdate');
    if (strategy.type === 'RollingUpdate') {
      defaultPointer(strategy, 'rollingUpdate', {});
      const rollingUpdate = recordAt(strategy, 'rollingUpdate');
      if (rollingUpdate) {
        defaultPointer(rollingUpdate, 'maxUnavailable', '25%');
        defaultPointer(rollingUpdate, 'maxSurge', '25%');
      }
    }
  }
  defaultPointer(spec, 'revisionHistoryLimit', REVISION_HISTORY_LIMIT);
  defaultPointer(spec, 'progressDeadlineSeconds', 600);
}

export function defaultDaemonSet(daemonSet: JsonRecord): void {
  const spec = specOf(daemonSet);
  if (!spec) return;
  const strategy = structAt(spec, 'updateStrategy');
  if (strategy) {
    defaultString(strategy, 'type', 'RollingUpdate');
    if (strategy.type === 'RollingUpdate') {
      defaultPointer(strategy, 'rollingUpdate', {});
      const rollingUpdate = recordAt(strategy, 'rollingUpdate');
      if (rollingUpdate) {
        defaultPointer(rollingUpdate, 'maxUnavailable', 1);
        defaultPointer(rollingUpdate, 'maxSurge', 0);
      }
    }
  }
  defaultPointer(spec, 'revisionHistoryLimit', REVISION_HISTORY_LIMIT);
}

export function defaultStatefulSet(statefulSet: JsonRecord): void {
  const spec = specOf(statefulSet);
  if (!spec) return;
  defaultString(spec, 'podManagementPolicy', 'OrderedReady');
  const strategy = structAt(spec, 'updateStrategy');
  if (strategy) {
    // A rollingUpdate is added only when the type itself was defaulted.
    if (strategy.type === undefined || strategy.type === null || strategy.type === '') {
      setField(strategy, 'type', 'RollingUpdate');
      defaultPointer(strategy, 'rollingUpdate', {});
    }
    const rollingUpdate = recordAt(strategy, 'rollingUpdate');
    if (strategy.type === 'RollingUpdate' && rollingUpdate) defaultPointer(rollingUpdate, 'partition', 0);
  }
  defaultPointer(spec, 'persistentVolumeClaimRetentionPolicy', {});
  const retention = recordAt(spec, 'persistentVolumeClaimRetentionPolicy');
  if (retention) {
    defaultString(retention, 'whenDeleted', 'Retain');
    defaultString(retention, 'whenScaled', 'Retain');
  }
  defaultPointer(spec, 'replicas', 1);
  defaultPointer(spec, 'revisionHistoryLimit', REVISION_HISTORY_LIMIT);
  for (const claim of recordsAt(spec, 'volumeClaimTemplates')) defaultClaimTemplate(claim);
}

export function defaultReplicaSet(replicaSet: JsonRecord): void {
  const spec = specOf(replicaSet);
  if (spec) defaultPointer(spec, 'replicas', 1);
}
