import { isRecord } from '../../../model/kubernetes';
import { withFields } from '../../../model/object-copy';
import type { VerdictContext } from '../types';
import { jsonLengthWithin } from '../guard/bounded-size';
import { NotEvaluable } from './kyverno-errors';
import { queryJmesPath } from './kyverno-jmespath';
import { MAX_SUBSTITUTED_LENGTH } from './variable-substitution';
import { resolve, substituteVariables, type JsonContext } from './kyverno-variables';

// The JSON context a Kyverno rule's variables read (pkg/engine/context): the admission request as the
// webhook knows it, then the rule's `context` entries in order. `variable` entries are computed here
// (a value, a JMESPath over it or over the context, a default); the others (apiCall, configMap,
// globalReference, imageRegistry) come from the cluster, and reading one makes the rule `unknown`.

type Fields = Record<string, unknown>;

/** The rule's `context`: `variable` entries are computed; the others come from the cluster. */
export function ruleContext(rule: Fields, base: JsonContext, checkpoint: () => void): JsonContext {
  const entries = Array.isArray(rule.context) ? rule.context.filter(isRecord) : [];
  let context = base;
  const unbound: string[] = [...base.unbound];
  for (const entry of entries) {
    if (typeof entry.name !== 'string') continue;
    if (!isRecord(entry.variable)) {
      unbound.push(entry.name);
      context = withFields(context, { unbound });
      continue;
    }
    const variable = entry.variable;
    let value: unknown = null;
    if (variable.value !== undefined) {
      value = substituteVariables(variable.value, context, checkpoint);
      if (typeof variable.jmesPath === 'string') value = queryJmesPath(variable.jmesPath, value) ?? null;
    } else if (typeof variable.jmesPath === 'string') {
      const path = substituteVariables(variable.jmesPath, context, checkpoint);
      value = typeof path === 'string' ? resolve(path, context) : null;
    }
    if ((value === null || value === undefined) && variable.default !== undefined)
      value = substituteVariables(variable.default, context, checkpoint);
    // A value that shares its parts (`value: ["{{v}}", "{{v}}"]` doubles at each variable) is
    // measured as the JSON it would print to: past the bound the rule is not evaluated.
    checkpoint();
    if (jsonLengthWithin(value, MAX_SUBSTITUTED_LENGTH, checkpoint) === undefined)
      throw new NotEvaluable(
        `its context variable ${entry.name} is larger than the ${MAX_SUBSTITUTED_LENGTH} characters of JSON a value may have here`,
      );
    context = { data: withFields(context.data, { [entry.name]: value }), unbound };
  }
  return context;
}

/**
 * Who asks, as Kyverno binds it: `request.userInfo`, and `serviceAccountName` /
 * `serviceAccountNamespace` parsed from a service account's user name (empty for other users).
 *
 * Built property by property, never by spreading a part into a literal followed by more fields:
 * Node 20's V8 gives every object made that way a hidden class of its own (measured: 5 µs per call,
 * and every later read of such an object misses its inline caches), and this runs once per rule.
 */
export function baseContext(subject: { value: Fields }, context: VerdictContext): JsonContext {
  const { operation, namespace, oldObject, requester } = context.admitted;
  const request: Fields = {};
  let data: Fields;
  if (requester) {
    const account = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(requester.username);
    data = {
      serviceAccountName: account?.[2] ?? '',
      serviceAccountNamespace: account?.[1] ?? '',
      request,
    };
    request.userInfo = { username: requester.username, groups: [...requester.groups] };
    if (requester.roles) request.roles = [...requester.roles];
    if (requester.clusterRoles) request.clusterRoles = [...requester.clusterRoles];
  } else data = { request };
  request.operation = operation;
  request.object = subject.value;
  request.oldObject = oldObject ?? null;
  const metadata = subject.value.metadata;
  request.namespace =
    isRecord(metadata) && typeof metadata.namespace === 'string' ? metadata.namespace : namespace;
  return { data, unbound: [] };
}
