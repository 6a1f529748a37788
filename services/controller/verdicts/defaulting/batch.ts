import {
  defaultPointer,
  defaultString,
  recordAt,
  recordsAt,
  setField,
  structAt,
  type JsonRecord,
} from './fields';
import { defaultTemplateSpec, labelsFromTemplate } from './core';

// The batch group's defaults (k8s.io/kubernetes v1.34.4, pkg/apis/batch/v1/defaults.go), with the pod
// template's. JobPodReplacementPolicy is GA in v1.34: podReplacementPolicy is defaulted. A CronJob's
// job template gets only the pod template's defaults and its pod failure policy's, not a Job's: the
// generated code does not call SetDefaults_Job there.

/** The backoff limit when `backoffLimitPerIndex` is set: math.MaxInt32. */
const UNLIMITED_BACKOFF = 2147483647;

function podFailurePolicy(jobSpec: JsonRecord): void {
  const policy = recordAt(jobSpec, 'podFailurePolicy');
  for (const rule of policy ? recordsAt(policy, 'rules') : [])
    for (const pattern of recordsAt(rule, 'onPodConditions')) defaultString(pattern, 'status', 'True');
}

export function defaultJob(job: JsonRecord): void {
  const spec = structAt(job, 'spec');
  if (!spec) return;
  const unset = (field: string) => spec[field] === undefined || spec[field] === null;
  if (unset('completions') && unset('parallelism')) {
    setField(spec, 'completions', 1);
    setField(spec, 'parallelism', 1);
  }
  defaultPointer(spec, 'parallelism', 1);
  defaultPointer(spec, 'backoffLimit', unset('backoffLimitPerIndex') ? 6 : UNLIMITED_BACKOFF);
  const template = structAt(spec, 'template');
  labelsFromTemplate(job, template);
  defaultPointer(spec, 'completionMode', 'NonIndexed');
  defaultPointer(spec, 'suspend', false);
  defaultPointer(spec, 'podReplacementPolicy', unset('podFailurePolicy') ? 'TerminatingOrFailed' : 'Failed');
  defaultPointer(spec, 'manualSelector', false);
  podFailurePolicy(spec);
  defaultTemplateSpec(template);
}

export function defaultCronJob(cronJob: JsonRecord): void {
  const spec = structAt(cronJob, 'spec');
  if (!spec) return;
  defaultString(spec, 'concurrencyPolicy', 'Allow');
  defaultPointer(spec, 'suspend', false);
  defaultPointer(spec, 'successfulJobsHistoryLimit', 3);
  defaultPointer(spec, 'failedJobsHistoryLimit', 1);
  const jobTemplate = structAt(spec, 'jobTemplate');
  if (jobTemplate) structAt(jobTemplate, 'metadata');
  const jobSpec = jobTemplate && structAt(jobTemplate, 'spec');
  if (!jobSpec) return;
  podFailurePolicy(jobSpec);
  defaultTemplateSpec(structAt(jobSpec, 'template'));
}
