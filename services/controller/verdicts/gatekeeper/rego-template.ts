import type { RegoCode } from '../../../model/gatekeeper';
import { groupOf, isRecord, versionOf, type KubernetesObject } from '../../../model/kubernetes';
import { pluralOfKind } from '../../../model/resources';
import { detail, text } from '../../../model/text';
import { workloadKind } from '../../../model/workload-kinds';
import { factOfEvaluation } from '../evaluation-memo';
import { noteClockBoundOutcome } from '../guard/evaluation-guard';
import { MAX_RESULT_LENGTH } from '../guard/isolate-protocol';
import type { Evidence, VerdictContext } from '../types';
import { INVENTORY_FUEL, type FueledReply } from './fueled-rego';
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
 * Fuel (wasm-fuel.ts: one unit is at most one Wasm instruction, or a host built-in's share) the
 * Rego templates of one object may spend together, and each template at most. Calibrated on this
 * machine with adversarial templates (bench/rego-fuel.js, docs/benchmarks.md "Rego on the event
 * loop"): the object's whole budget stays well under the guard's 50 ms deadline and the 100 ms
 * event-loop bound, while a real template on an ordinary object spends under 1% of one template's.
 */
export const REGO_OBJECT_FUEL = 200_000_000;
export const REGO_TEMPLATE_FUEL = 50_000_000;

/**
 * Each constraint's answer for the object; `objectBound`: it was given less than a template's
 * budget because the object's other templates had spent the rest (so the answer depends on their
 * order, and is not remembered); `refused`: nothing was left for it.
 */
type RegoAnswer = { reply: FueledReply; objectBound: boolean } | 'refused';
type RegoAnswers = Map<KubernetesObject, RegoAnswer>;

/**
 * Templates that spent a template's budget on an object (a loop, or quadratic in what an object
 * holds): from then on each is evaluated after the object's other templates, so that what it
 * spends never leaves them less. One that finishes within its budget is trusted again.
 */
const lateTemplates = new Set<string>();
const LATE_TEMPLATES_KEPT = 1000;

function noteLate(policy: string, reply: FueledReply): void {
  if (reply !== 'spent') {
    lateTemplates.delete(policy);
    return;
  }
  if (lateTemplates.size >= LATE_TEMPLATES_KEPT) lateTemplates.clear();
  lateTemplates.add(policy);
}

/** The object's Rego fuel left, shared by its templates. */
function fuelOf(context: VerdictContext): { left: number } {
  return factOfEvaluation(context.guard, 'gatekeeper-rego-fuel', context.admitted, () => ({
    left: REGO_OBJECT_FUEL,
  }));
}

/** Evaluates one constraint's template on the event loop with the fuel the object has left for it. */
function evaluateFueled(
  item: { source: KubernetesObject; code: RegoCode; policy: string },
  context: VerdictContext,
  engine: RegoEngine,
): RegoAnswer {
  context.guard.checkDeadline();
  const fuel = fuelOf(context);
  const budget = Math.min(REGO_TEMPLATE_FUEL, fuel.left);
  if (budget <= 0) return 'refused';
  // The review is the same for every constraint, the parameters for every object: each is
  // serialized and encoded once, and the input is their bytes side by side (in Wasm memory).
  const review = factOfEvaluation(context.guard, 'gatekeeper-review-json', context.admitted, () =>
    encoder.encode(`{"review":${JSON.stringify(reviewOf(context))}`),
  );
  let parameters = parametersJson.get(item.source);
  if (parameters === undefined) {
    const spec = isRecord(item.source.spec) ? item.source.spec : {};
    parameters = encoder.encode(`,"parameters":${JSON.stringify(spec.parameters ?? {})}}`);
    parametersJson.set(item.source, parameters);
  }
  // The inventory an admitted object is judged with, built once for all its constraints.
  const inventory = analysisOf(item.code).referential
    ? factOfEvaluation(context.guard, 'gatekeeper-inventory', context.admitted, () => {
        const data = { inventory: namespaceInventory(context) };
        return { key: JSON.stringify(data), data };
      })
    : undefined;
  const { reply, used } = engine.evaluator.evaluate(item.policy, [review, parameters], budget, inventory);
  fuel.left -= used;
  const objectBound = budget < REGO_TEMPLATE_FUEL;
  if (!objectBound) noteLate(item.policy, reply);
  return { reply, objectBound };
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
      engine.noteAnswerWhileCompiling();
      return { unknown: text`the template's Rego is being compiled by opa; ask again in a moment` };
    case 'failed':
      return {
        unknown: text`opa cannot compile the template's Rego: ${detail(compiled.reason, 'a compile error')}`,
      };
  }
  const answers = factOfEvaluation(
    context.guard,
    'gatekeeper-rego-answers',
    context.admitted,
    (): RegoAnswers => new Map(),
  );
  let answer = answers.get(constraint);
  if (answer === undefined) {
    const item = { source: constraint, code, policy: compiled.policy };
    // A late template runs after the object's other Rego templates (those not late themselves),
    // so that what it spends leaves them nothing less; any other runs when asked.
    if (lateTemplates.has(compiled.policy))
      for (const other of otherRegoConstraints()) {
        if (other.source === constraint || answers.has(other.source) || cannotEvaluate(other.code)) continue;
        const otherCompiled = engine.policyFor(other.code);
        if (otherCompiled.state === 'ready' && !lateTemplates.has(otherCompiled.policy))
          answers.set(
            other.source,
            evaluateFueled({ ...other, policy: otherCompiled.policy }, context, engine),
          );
      }
    answer = evaluateFueled(item, context, engine);
    answers.set(constraint, answer);
  }
  return outcomeOfAnswer(answer, context);
}

/** The verdict an evaluation's reply gives. */
function outcomeOfAnswer(answer: RegoAnswer, context: VerdictContext): TemplateOutcome {
  // A stop that depends on what the object's other templates spent before is not remembered.
  if (answer === 'refused' || (answer.objectBound && answer.reply === 'spent')) {
    noteClockBoundOutcome();
    return {
      unknown: text`evaluation stopped at its work budget of ${String(REGO_OBJECT_FUEL)} Rego fuel units for one object, spent by the object's other Rego templates`,
    };
  }
  const { reply } = answer;
  if (reply === 'inventory-spent')
    return {
      unknown: text`evaluation stopped at its work budget of ${String(INVENTORY_FUEL)} Rego fuel units for loading Gatekeeper's synced Namespaces (data.inventory): the cluster has more than it can load`,
    };
  if (reply === 'spent')
    return {
      unknown: text`evaluation stopped at its work budget of ${String(REGO_TEMPLATE_FUEL)} Rego fuel units for one template and object`,
    };
  context.guard.checkDeadline();
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
