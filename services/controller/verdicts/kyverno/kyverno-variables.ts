import { isRecord } from '../../../model/kubernetes';
import { defineField } from '../../../model/object-copy';
import { NotEvaluable } from './kyverno-errors';
import { queryJmesPath } from './kyverno-jmespath';
import { substituteText } from './variable-substitution';

// Kyverno's variables (https://kyverno.io/docs/writing-policies/variables/): `{{ <JMESPath> }}` in
// strings, resolved against the rule's JSON context. A string that is one variable becomes the
// variable's value (any type); a variable inside text is printed into it (JSON for non-strings).
// What the webhook knows is bound: request.operation, request.object, request.oldObject,
// request.namespace, who asks (request.userInfo, serviceAccountName/Namespace) when the review said,
// the rule's `variable` context entries, and foreach's element / elementIndex.
// The rest (who asks, offline; the requester's roles; cluster data: apiCall, configMap,
// globalReference, imageRegistry; `{{@}}`; time and randomness) makes the rule `unknown`.

export interface JsonContext {
  /** The JSON document variables are resolved against: `request`, `element`, context variables. */
  data: Record<string, unknown>;
  /** Context entries Kyverno loads from the cluster (apiCall, configMap...): reading one is `unknown`. */
  unbound: readonly string[];
}

/**
 * Names whose value depends on who makes the request, never on the object: bound only when the
 * webhook's review said who asks (kyverno-rule-context.ts); roles never are (no role bindings read).
 */
const REQUESTER = /\b(request\.(userInfo|roles|clusterRoles)|serviceAccountName|serviceAccountNamespace)\b/g;

function isRequesterNameBound(name: string, data: Record<string, unknown>): boolean {
  if (name.startsWith('request.')) {
    const request = data.request;
    return isRecord(request) && request[name.slice('request.'.length)] !== undefined;
  }
  return data[name] !== undefined;
}

const variablesIn = new WeakMap<object, boolean>();

/** Whether a policy's document holds variables, remembered per document. */
function holdsVariables(document: object): boolean {
  let holds = variablesIn.get(document);
  if (holds === undefined) {
    holds = hasVariables(document);
    variablesIn.set(document, holds);
  }
  return holds;
}

/** Top-level names Kyverno fills from its configuration or the cluster, not from the request. */
const CLUSTER_STATE = /(^|[^\w.])(images|target)\b/;

export function hasVariables(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('{{');
  if (Array.isArray(value)) return value.some(hasVariables);
  if (isRecord(value))
    return Object.entries(value).some(([key, item]) => hasVariables(key) || hasVariables(item));
  return false;
}

/** Evaluates one JMESPath expression in the context, with the checks of what is bound here. */
export function resolve(expression: string, context: JsonContext): unknown {
  const trimmed = expression.trim();
  for (const [name] of trimmed.matchAll(REQUESTER))
    if (!isRequesterNameBound(name, context.data))
      throw new NotEvaluable(
        'it depends on who makes the request (request.userInfo, its roles or the service account)',
      );
  if (CLUSTER_STATE.test(trimmed))
    throw new NotEvaluable(
      'it reads images (image references Kyverno parses with its configuration) or target (an object in the cluster)',
    );
  if (trimmed === '@' || trimmed.startsWith('@.'))
    throw new NotEvaluable('it uses {{@}}, the value at the pattern location, not substituted here');
  for (const name of context.unbound)
    if (new RegExp(`(^|[^\\w.])${name.replace(/[^\w]/g, '\\$&')}\\b`).test(trimmed))
      throw new NotEvaluable(`it reads ${name}, which Kyverno loads from the cluster`);
  return queryJmesPath(trimmed, context.data);
}

function substituteString(text: string, context: JsonContext, checkpoint: () => void): unknown {
  return substituteText(text, (expression) => resolve(expression, context), checkpoint);
}

/** Substitutes every variable in a document (keys and values), as Kyverno's SubstituteAll does. */
export function substituteVariables(
  document: unknown,
  context: JsonContext,
  checkpoint: () => void,
): unknown {
  checkpoint();
  // Most patterns have no variables: they are used as they are (and stay prepared, pattern.ts).
  if (typeof document === 'object' && document !== null && !holdsVariables(document)) return document;
  if (typeof document === 'string')
    return document.includes('{{') ? substituteString(document, context, checkpoint) : document;
  if (Array.isArray(document)) return document.map((item) => substituteVariables(item, context, checkpoint));
  if (!isRecord(document)) return document;
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(document)) {
    const newKey = key.includes('{{') ? substituteString(key, context, checkpoint) : key;
    defineField(
      result,
      typeof newKey === 'string' ? newKey : JSON.stringify(newKey),
      substituteVariables(item, context, checkpoint),
    );
  }
  return result;
}
