import { groupOf, versionOf } from '../model/kubernetes';
import type { AdmissionQuery } from '../controller/check/manifest-check';
import { constraintQueryOf, parseAdmissionReview } from '../model/admission-review';
import type { ConstraintQuery } from '../model/admission-query';

// `forewarn check --url`: the exact query the webhook would send for an object. The object is
// wrapped in the AdmissionReview the API server would send on CREATE and read by the webhook's own
// parser, so labels and companion hints (annotations, port names) are what the webhook extracts.

export function webhookQueryFor(query: AdmissionQuery): ConstraintQuery {
  const { object } = query;
  const kind = object.kind ?? '';
  const review = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'forewarn-check',
      operation: 'CREATE',
      namespace: query.namespace,
      name: object.metadata?.name,
      kind: { group: groupOf(object.apiVersion), version: versionOf(object.apiVersion), kind },
      resource: { ...query.resource, version: versionOf(object.apiVersion) },
      object,
    },
  };
  const parsed = parseAdmissionReview(review);
  if (!parsed.ok) return { namespace: query.namespace, resource: query.resource, labels: query.labels };
  return constraintQueryOf(parsed.request);
}
