import type { RegoCode } from '../../../model/gatekeeper';
import { groupOf, isRecord, versionOf, type KubernetesObject } from '../../../model/kubernetes';
import { pluralOfKind } from '../../../model/resources';
import { detail, text } from '../../../model/text';
import { workloadKind } from '../../../model/workload-kinds';
import { factOfEvaluation } from '../evaluation-memo';
import { noteClockBoundOutcome } from '../guard/evaluation-guard';
import { MAX_RESULT_LENGTH, type RegoItem, type RegoReply } from '../guard/isolate-protocol';
import type { Evidence, VerdictContext } from '../types';
import type { RegoEngine } from './rego-engine';
import type { TemplateOutcome } from './template-outcome';

// A template's Rego as Gatekeeper runs it (its constraint framework's hook): the template's
// `violation` rule with `input.review` (the AdmissionRequest: kind, resource, name, namespace,
// operation, object, oldObject) and `input.parameters` (the constraint's spec.parameters); each
// result's `msg` is what Gatekeeper answers. Referential templates read `data.inventory`, Gatekeeper's
// copy of synced objects: the index provides Namespaces (`data.inventory.cluster.v1.Namespace`);
// a template reading any other kind is `unknown`, as is one calling an external data provider.

const READS_REQUESTER = /\binput\.review\.userInfo\b/;
const EXTERNAL_DATA = /\bexternal_data\s*\(/;
const INVENTORY = /\bdata\.inventory\b/;
/** Kind names a referential template mentions after `data.inventory` on the same line. */
const INVENTORY_KIND = /["'.]([A-Z][A-Za-z0-9]*)\b/g;
const INVENTORY_KINDS_IN_INDEX = new Set(['Namespace']);

function inventoryKinds(code: RegoCode): string[] {
  const kinds = new Set<string>();
  for (const source of [code.rego, ...code.libs])
    for (const line of source.split('\n')) {
      const at = line.search(INVENTORY);
      if (at === -1) continue;
      for (const match of line.slice(at).matchAll(INVENTORY_KIND)) kinds.add(match[1]);
    }
  return [...kinds].sort();
}

interface RegoAnalysis {
  external: boolean;
  requester: boolean;
  referential: boolean;
  /** Kinds a referential template reads that the index does not provide. */
  missingKinds: string[];
}

// What a template's text says it needs, read once per template revision.
const analyses = new WeakMap<RegoCode, RegoAnalysis>();

function analysisOf(code: RegoCode): RegoAnalysis {
  let analysis = analyses.get(code);
  if (!analysis) {
    const sources = [code.rego, ...code.libs];
    analysis = {
      external: sources.some((source) => EXTERNAL_DATA.test(source)),
      requester: sources.some((source) => READS_REQUESTER.test(source)),
      referential: sources.some((source) => INVENTORY.test(source)),
      missingKinds: inventoryKinds(code).filter((kind) => !INVENTORY_KINDS_IN_INDEX.has(kind)),
    };
    analyses.set(code, analysis);
  }
  return analysis;
}

function reviewOf(context: VerdictContext): Record<string, unknown> {
  const { object, oldObject, operation, namespace } = context.admitted;
  const group = groupOf(object.apiVersion);
  const version = versionOf(object.apiVersion);
  return {
    kind: { group, version, kind: object.kind ?? '' },
    resource: { group, version, resource: pluralOfKind(object.kind ?? '') },
    name: object.metadata?.name ?? '',
    namespace,
    operation,
    object,
    oldObject: oldObject ?? null,
    dryRun: false,
  };
}

/** `data.inventory` as Gatekeeper would hold it with Namespaces synced from the cluster. */
function namespaceInventory(context: VerdictContext): Record<string, unknown> {
  const namespaces: Record<string, unknown> = {};
  const { namespace, namespaceLabels } = context.admitted;
  const known = [...(context.index.namespaces?.() ?? []), { name: namespace, labels: namespaceLabels }];
  for (const { name, labels } of known)
    if (name !== '')
      namespaces[name] = { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { ...labels } } };
  return { cluster: { v1: { Namespace: namespaces } }, namespace: {} };
}

function containerPaths(object: KubernetesObject): Array<{ name: string; path: string }> {
  const entry = workloadKind(groupOf(object.apiVersion), object.kind ?? '');
  const templatePath = entry ? entry.podTemplatePath.join('.') : '';
  let podSpec: unknown = object;
  for (const key of [...(entry?.podTemplatePath ?? []), 'spec'])
    podSpec = isRecord(podSpec) ? podSpec[key] : undefined;
  if (!isRecord(podSpec)) return [];
  const prefix = templatePath === '' ? 'spec' : `${templatePath}.spec`;
  const found: Array<{ name: string; path: string }> = [];
  for (const list of ['containers', 'initContainers', 'ephemeralContainers']) {
    const containers = podSpec[list];
    if (!Array.isArray(containers)) continue;
    containers.forEach((container, index) => {
      if (isRecord(container) && typeof container.name === 'string' && container.name !== '')
        found.push({ name: container.name, path: `${prefix}.${list}[${index}]` });
    });
  }
  return found;
}

/** The field a message is about, when it names one of the object's containers; else the object. */
function evidencePath(message: string, object: KubernetesObject): string {
  const named = containerPaths(object).filter(({ name }) =>
    new RegExp(`(^|[^\\w.-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\w.-])`).test(message),
  );
  return named.length === 1 ? named[0].path : '';
}

/** `,"parameters":{...}}`: the end of the input for a constraint, as UTF-8. */
const parametersJson = new WeakMap<object, Uint8Array>();
const encoder = new TextEncoder();

/** Why a template has no verdict without evaluating it; undefined when it can be evaluated. */
function cannotEvaluate(code: RegoCode): TemplateOutcome | undefined {
  const { external, requester, referential, missingKinds } = analysisOf(code);
  if (external)
    return {
      unknown: text`the template asks an external data provider, which is only reachable at admission`,
    };
  if (requester)
    return { unknown: text`the template depends on who makes the request (input.review.userInfo)` };
  if (referential && missingKinds.length > 0)
    return {
      unknown: text`the template reads ${detail(missingKinds.join(', '), 'other objects')} from Gatekeeper's synced data (data.inventory), which the index does not hold`,
    };
  return undefined;
}

/** A Gatekeeper constraint whose template is in Rego: its source object and the template's code. */
export interface RegoConstraint {
  source: KubernetesObject;
  code: RegoCode;
}

/**
 * What the isolate answered for each constraint of the object; `stopped`: it ran out of time;
 * `starting`: the isolate was being replaced, nothing was evaluated; `waiting`: a late template
 * that stopped at its own deadline before, not evaluated until its retry time.
 */
type RegoReplies = Map<KubernetesObject, RegoReply | 'stopped' | 'starting' | 'waiting'>;

/**
 * Templates that ran out of an object's time (a loop, or quadratic in what an object holds): each
 * is evaluated on its own afterwards, with at most LATE_TEMPLATE_MILLISECONDS, in an isolate of
 * their own, so that it takes neither the time of the templates beside it nor their isolate. One
 * that finishes in time is trusted again. One that runs out of its own deadline too is not
 * evaluated again for a while (LATE_TEMPLATE_RETRY_*): each run that stops ends an isolate, and
 * a template that loops on every object would otherwise cost a new isolate per admission.
 */
interface LateTemplate {
  /** Runs in a row that stopped at the late deadline. */
  stops: number;
  /** performance.now() before which the template is not evaluated again. */
  retryAt: number;
}
const lateTemplates = new Map<string, LateTemplate>();
const LATE_TEMPLATES_KEPT = 1000;
export const LATE_TEMPLATE_MILLISECONDS = 10;
/** A late template that stops again waits 1 s, doubled at each stop, up to 5 minutes. */
const LATE_TEMPLATE_RETRY_FIRST_MILLISECONDS = 1_000;
const LATE_TEMPLATE_RETRY_MAX_MILLISECONDS = 300_000;

function markLate(policy: string): void {
  if (lateTemplates.has(policy)) return;
  if (lateTemplates.size >= LATE_TEMPLATES_KEPT) lateTemplates.clear();
  lateTemplates.set(policy, { stops: 0, retryAt: 0 });
}

function stoppedAgain(policy: string): void {
  const late = lateTemplates.get(policy);
  if (!late) return;
  late.stops++;
  const wait = Math.min(
    LATE_TEMPLATE_RETRY_FIRST_MILLISECONDS * 2 ** (late.stops - 1),
    LATE_TEMPLATE_RETRY_MAX_MILLISECONDS,
  );
  late.retryAt = performance.now() + wait;
}

/**
 * Evaluates `batch` in the evaluation isolate, in one call: every Rego constraint of the object
 * costs one round trip together (the review is sent once), and the wait is the guard's time left.
 */
function evaluateInIsolate(
  batch: ReadonlyArray<{ source: KubernetesObject; code: RegoCode; policy: string }>,
  context: VerdictContext,
  engine: RegoEngine,
  replies: RegoReplies,
  waitCap = Number.POSITIVE_INFINITY,
  isolate = engine.evaluator,
): void {
  // The parameters are the same for every object, the review for every constraint: each is
  // serialized and encoded once, and the input is their bytes side by side (in the isolate).
  const review = factOfEvaluation(context.guard, 'gatekeeper-review-json', context.admitted, () =>
    encoder.encode(`{"review":${JSON.stringify(reviewOf(context))}`),
  );
  const items: RegoItem[] = batch.map(({ source, code, policy }) => {
    let parameters = parametersJson.get(source);
    if (parameters === undefined) {
      const spec = isRecord(source.spec) ? source.spec : {};
      parameters = encoder.encode(`,"parameters":${JSON.stringify(spec.parameters ?? {})}}`);
      parametersJson.set(source, parameters);
    }
    if (!analysisOf(code).referential) return { policy, parameters };
    // The inventory an admitted object is judged with, built once for all its constraints.
    const { inventory, key } = factOfEvaluation(
      context.guard,
      'gatekeeper-inventory',
      context.admitted,
      () => {
        const inventory = { inventory: namespaceInventory(context) };
        return { inventory, key: JSON.stringify(inventory) };
      },
    );
    return { policy, parameters, inventory: { key, data: inventory } };
  });
  context.guard.checkDeadline();
  const call = isolate.call(
    { kind: 'rego', review, items },
    context.guard.remainingWallMilliseconds(waitCap),
  );
  for (const reply of call.replies)
    if (reply.kind === 'rego')
      reply.replies.forEach((itemReply, index) => {
        replies.set(batch[index].source, itemReply);
        lateTemplates.delete(batch[index].policy);
      });
  if (call.starting) {
    for (const { source } of batch) replies.set(source, 'starting');
    return;
  }
  const late = call.finished ? undefined : batch[call.itemInProgress ?? 0];
  if (late) markLate(late.policy);
  for (const { source } of batch) if (!replies.has(source)) replies.set(source, 'stopped');
}

export function evaluateRegoTemplate(
  code: RegoCode,
  constraint: KubernetesObject,
  context: VerdictContext,
  engine: RegoEngine,
  otherRegoConstraints: () => readonly RegoConstraint[] = () => [],
): TemplateOutcome {
  const refused = cannotEvaluate(code);
  if (refused) return refused;
  const compiled = engine.policyFor(code);
  switch (compiled.state) {
    case 'no-opa':
      return {
        unknown: text`Rego templates need Open Policy Agent's opa binary to be compiled: the controller image ships it; elsewhere put opa on PATH or pass --opa-path`,
      };
    case 'compiling':
      return { unknown: text`the template's Rego is being compiled by opa; ask again in a moment` };
    case 'failed':
      return {
        unknown: text`opa cannot compile the template's Rego: ${detail(compiled.reason, 'a compile error')}`,
      };
  }
  const replies = factOfEvaluation(
    context.guard,
    'gatekeeper-rego-replies',
    context.admitted,
    (): RegoReplies => new Map(),
  );
  let reply = replies.get(constraint);
  const wasLate = lateTemplates.has(compiled.policy);
  if (reply === undefined) {
    // The object's other Rego constraints that can be evaluated, together with this one unless it
    // was late: a late one runs after them, alone, so that its running out of time (and the isolate
    // being replaced) costs them nothing.
    const batch = wasLate ? [] : [{ source: constraint, code, policy: compiled.policy }];
    for (const other of otherRegoConstraints()) {
      if (other.source === constraint || replies.has(other.source) || cannotEvaluate(other.code)) continue;
      const otherCompiled = engine.policyFor(other.code);
      if (otherCompiled.state === 'ready' && !lateTemplates.has(otherCompiled.policy))
        batch.push({ ...other, policy: otherCompiled.policy });
    }
    if (batch.length > 0) evaluateInIsolate(batch, context, engine, replies);
    const retryAt = lateTemplates.get(compiled.policy)?.retryAt ?? 0;
    if (wasLate && performance.now() < retryAt) replies.set(constraint, 'waiting');
    else if (wasLate) {
      evaluateInIsolate(
        [{ source: constraint, code, policy: compiled.policy }],
        context,
        engine,
        replies,
        LATE_TEMPLATE_MILLISECONDS,
        engine.lateEvaluator(compiled.policy),
      );
      if (replies.get(constraint) === 'stopped') stoppedAgain(compiled.policy);
    }
    reply = replies.get(constraint) ?? 'stopped';
  }
  return outcomeOfReply(reply, wasLate, context);
}

/** The verdict a reply of the isolate gives (or the object's stop, when its Rego ran out of time). */
function outcomeOfReply(
  reply: RegoReply | 'stopped' | 'starting' | 'waiting',
  wasLate: boolean,
  context: VerdictContext,
): TemplateOutcome {
  if (reply === 'starting' || reply === 'stopped' || reply === 'waiting') noteClockBoundOutcome();
  if (reply === 'waiting')
    return {
      unknown: text`the template's Rego stopped at its deadline of ${String(LATE_TEMPLATE_MILLISECONDS)} ms, the time given to a template that ran out of an object's time before, and is not evaluated again for a while`,
    };
  if (reply === 'starting')
    return {
      unknown: text`the evaluation isolate that runs Rego is restarting after an evaluation that ran out of time; ask again in a moment`,
    };
  if (reply === 'stopped' && wasLate)
    return {
      unknown: text`the template's Rego stopped at its deadline of ${String(LATE_TEMPLATE_MILLISECONDS)} ms, the time given to a template that ran out of an object's time before`,
    };
  context.guard.checkDeadline();
  if (reply === 'stopped') context.guard.stopAtDeadline("the template's Rego did not finish in time");
  if ('error' in reply)
    return { unknown: text`OPA cannot evaluate the template: ${detail(reply.error, 'an evaluation error')}` };
  if ('tooLarge' in reply)
    return {
      unknown: text`OPA's result for the template is larger than the ${String(MAX_RESULT_LENGTH / (1024 * 1024))} MiB an evaluation may return`,
    };
  if ('notViolations' in reply)
    return { unknown: text`OPA returned a result that is not a set of violations` };
  const evidence: Evidence[] = reply.messages.map((message) => ({
    path: evidencePath(message, context.admitted.object),
    message: [detail(message, 'it fails a rule of the constraint')],
  }));
  return { violations: evidence };
}
