import { groupOf, isRecord, stringLabels, type KubernetesObject } from '../../model/kubernetes';
import { LabelSelectorError, matchesLabelSelector, parseLabelSelector } from '../../model/label-selector';
import { PARAM_KINDS_FLAG } from '../../model/param-kinds';
import { detail, text, type Text } from '../../model/text';
import type { CompiledPolicy } from './cel/compiled-policy';
import type { VerdictContext } from './types';

// The params of one ValidatingAdmissionPolicyBinding, chosen as the API server chooses them
// (CollectParams in k8s.io/apiserver, admission/plugin/policy/generic/policy_dispatcher.go): no
// paramKind or no paramRef → one evaluation without params; a namespaced param kind is looked up in
// paramRef.namespace, else in the admitted object's namespace; `name` picks one object, `selector`
// every matching one (each is evaluated, the results ANDed); none found with parameterNotFoundAction
// Deny is a configuration error, which the policy's failurePolicy decides, as are the misconfigured
// references the server refuses. Params the controller does not read leave the verdict `unknown`.

export type ParamResolution =
  /** Evaluate once per entry (`null`: without params); empty: nothing to evaluate, admitted. */
  | { params: KubernetesObject[] | [null] }
  | { missing: Text }
  /** The server's configuration error for this binding: its failurePolicy decides. */
  | { configurationError: string };

const NOT_FOUND_DENIED = 'no params found for policy binding with `Deny` parameterNotFoundAction';

function unreadKind(apiVersion: string, kind: string): Text {
  return groupOf(apiVersion) === ''
    ? text`its params are ${kind} objects, which Forewarn does not read (least privilege: they may hold anything)`
    : text`its params are ${kind} objects (${apiVersion}), which the controller does not read: add their group/version/plural to ${PARAM_KINDS_FLAG}`;
}

function selectByName(
  reference: Record<string, unknown>,
  candidates: readonly KubernetesObject[],
): KubernetesObject[] | { configurationError: string } {
  if (reference.selector !== undefined && reference.selector !== null)
    return { configurationError: 'paramRef.name and paramRef.selector are mutually exclusive' };
  return candidates.filter((candidate) => candidate.metadata?.name === reference.name);
}

function selectBySelector(
  selector: unknown,
  candidates: readonly KubernetesObject[],
): KubernetesObject[] | { configurationError: string } {
  try {
    const parsed = parseLabelSelector(selector, 'paramRef.selector');
    return candidates.filter((candidate) =>
      matchesLabelSelector(parsed, stringLabels(candidate.metadata?.labels)),
    );
  } catch (error) {
    if (error instanceof LabelSelectorError) return { configurationError: error.message };
    throw error;
  }
}

export function resolveParams(
  compiledPolicy: CompiledPolicy,
  binding: KubernetesObject,
  context: VerdictContext,
): ParamResolution {
  const spec = isRecord(binding.spec) ? binding.spec : {};
  if (!compiledPolicy.paramKind || !isRecord(spec.paramRef)) return { params: [null] };
  const reference = spec.paramRef;
  const { apiVersion, kind } = compiledPolicy.paramKind;
  const known = context.index.paramsOfKind(groupOf(apiVersion), kind);
  if (!known) return { missing: unreadKind(apiVersion, kind) };
  const referenceNamespace =
    typeof reference.namespace === 'string' && reference.namespace !== '' ? reference.namespace : undefined;
  const denyWhenNotFound = reference.parameterNotFoundAction === 'Deny';
  const admittedNamespace = context.admitted.namespace;
  let namespace: string | null;
  if (known.namespaced === undefined) {
    // No CRD and no object tells the scope, so no object can be found; only the scope errors
    // (which the failurePolicy decides) could make an Allow binding differ from "not found".
    if (!denyWhenNotFound && (referenceNamespace !== undefined || admittedNamespace === ''))
      return { missing: text`the scope of its param kind ${kind} is not known (no CRD and no object of it)` };
    namespace = null;
  } else if (known.namespaced) {
    namespace = referenceNamespace ?? admittedNamespace;
    if (namespace === '')
      return {
        configurationError:
          'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources',
      };
  } else {
    if (referenceNamespace !== undefined)
      return {
        configurationError: 'paramRef.namespace must not be provided for a cluster-scoped `paramKind`',
      };
    namespace = null;
  }
  const candidates = known.objects.filter(
    (candidate) => (candidate.metadata?.namespace ?? null) === namespace,
  );
  let found: KubernetesObject[] | { configurationError: string };
  if (typeof reference.name === 'string' && reference.name !== '')
    found = selectByName(reference, candidates);
  else if (isRecord(reference.selector)) found = selectBySelector(reference.selector, candidates);
  else found = { configurationError: 'one of name or selector must be provided' };
  if (!Array.isArray(found)) return found;
  if (found.length === 0 && denyWhenNotFound) return { configurationError: NOT_FOUND_DENIED };
  return { params: found };
}

/** How the reason of an admitted binding without params reads. */
export function noParamsReason(binding: KubernetesObject): Text {
  const spec = isRecord(binding.spec) ? binding.spec : {};
  const reference = isRecord(spec.paramRef) ? spec.paramRef : {};
  const wanted =
    typeof reference.name === 'string'
      ? text`no param named ${detail(reference.name, 'in the binding')}`
      : text`no param matches its selector`;
  return text`${wanted}, and its parameterNotFoundAction is not Deny: the API server evaluates nothing and admits the object`;
}
