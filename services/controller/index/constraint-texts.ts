import type { Constraint, RemediationStepTemplate, SourceObject } from '../../model/constraint';
import type { NamePart, Text, TextPart } from '../../model/text';

// A constraint's texts kept as templates filled from its source at read time (issue 26, memory).
// Adapters write the source object's name and namespace into every text (`NetworkPolicy "web"
// allows ... in team-1`), so each constraint held its own display name, summary, hint and
// remediation: about 650 bytes of arrays and objects per constraint, unique only because of those
// names. The index keeps instead, per constraint, one template in which each such name is a slot
// (`{sourceSlot: 'name'}`): equal across namespaces and policies of the same shape, so SharedValues
// keeps one. Reading `summary` (and the three others) fills the slots from `constraint.source`,
// giving back parts equal to the adapter's, key for key, so every rendering stays what it was.
//
// The texts are accessor properties of the constraint itself (enumerable, defined once and shared
// by every constraint of the same keys), so spreading, JSON and deep equality see them as before.

/** A name written by the adapter that the template takes from the constraint's source instead. */
export interface SourceSlot {
  /**
   * `name`: the source's own name; `namespace`: its namespace's name; `inNamespace`: another name
   * (`name`) in the source's namespace (a Kyverno rule, an Istio workload).
   */
  sourceSlot: 'name' | 'namespace' | 'inNamespace';
  name?: string;
}

export type TemplateText = ReadonlyArray<TextPart | SourceSlot>;

interface StepTemplate extends Omit<RemediationStepTemplate, 'description' | 'command'> {
  description: TemplateText;
  command?: TemplateText;
}

/** The four texts of a constraint, their source names as slots. */
export interface TextsTemplate {
  displayName: TemplateText;
  summary: TemplateText;
  remediationHint: TemplateText;
  remediation: { summary: TemplateText; steps: readonly StepTemplate[] };
}

type ConstraintTexts = Pick<Constraint, keyof TextsTemplate>;

const TEXT_KEYS: ReadonlySet<string> = new Set<keyof TextsTemplate>([
  'displayName',
  'summary',
  'remediationHint',
  'remediation',
]);

/** The hidden property holding a constraint's template (not enumerable: no view or test sees it). */
const TEMPLATE_KEY = 'textsTemplate';

/** Only parts made by `objectName(name, namespace)`: the fill gives back exactly those two keys. */
function isPlainNamePart(part: TextPart | SourceSlot): part is NamePart {
  if (typeof part !== 'object') return false;
  const keys = Object.keys(part);
  return keys.length === 2 && keys[0] === 'name' && keys[1] === 'namespace';
}

function templateText(value: Text, source: SourceObject): TemplateText {
  return value.map((part): TextPart | SourceSlot => {
    if (!isPlainNamePart(part) || part.namespace !== source.namespace) return part;
    if (part.name === source.name) return { sourceSlot: 'name' };
    if (source.namespace === null) return part;
    if (part.name === source.namespace) return { sourceSlot: 'namespace' };
    return { sourceSlot: 'inNamespace', name: part.name };
  });
}

function templateStep(step: RemediationStepTemplate, source: SourceObject): StepTemplate {
  // Key for key, in the step's own order.
  return Object.fromEntries(
    Object.entries(step).map(([key, value]) => [
      key,
      (key === 'description' || key === 'command') && Array.isArray(value)
        ? templateText(value as Text, source)
        : value,
    ]),
  ) as unknown as StepTemplate;
}

/** The template of a constraint's texts: what `filledText` turns back into them. */
export function textsTemplateOf(texts: ConstraintTexts, source: SourceObject): TextsTemplate {
  return {
    displayName: templateText(texts.displayName, source),
    summary: templateText(texts.summary, source),
    remediationHint: templateText(texts.remediationHint, source),
    remediation: {
      summary: templateText(texts.remediation.summary, source),
      steps: texts.remediation.steps.map((step) => templateStep(step, source)),
    },
  };
}

function isSourceSlot(part: TextPart | SourceSlot): part is SourceSlot {
  return typeof part === 'object' && 'sourceSlot' in part;
}

function slotPart(slot: SourceSlot, source: SourceObject): NamePart {
  if (slot.sourceSlot === 'name') return { name: source.name, namespace: source.namespace };
  if (slot.sourceSlot === 'namespace') return { name: source.namespace ?? '', namespace: source.namespace };
  return { name: slot.name ?? '', namespace: source.namespace };
}

function isSlotAt(template: TemplateText, position: number): boolean {
  const part = template[position];
  return typeof part === 'object' && isSourceSlot(part);
}

/** The text with its slots filled; the template itself (no copy) when it has none. */
export function filledText(template: TemplateText, source: SourceObject): Text {
  let first = 0;
  while (first < template.length && !isSlotAt(template, first)) first++;
  if (first === template.length) return template as Text;
  // Built by push: a slice of a frozen array keeps its frozen element kind, and writing into one
  // takes V8's slow path (measured: twice the time of a whole report).
  const filled: TextPart[] = [];
  for (let position = 0; position < template.length; position++) {
    const part = template[position];
    filled.push(
      isSourceSlot(part as TextPart | SourceSlot) ? slotPart(part as SourceSlot, source) : (part as TextPart),
    );
  }
  return Object.freeze(filled);
}

function filledStep(step: StepTemplate, source: SourceObject): RemediationStepTemplate {
  const description = filledText(step.description, source);
  const command = step.command === undefined ? undefined : filledText(step.command, source);
  if (description === step.description && command === step.command) return step as RemediationStepTemplate;
  // Key by key in the step's own order (a spread of a frozen object is several times slower).
  const filled: Record<string, unknown> = {};
  for (const key in step)
    filled[key] =
      key === 'description' ? description : key === 'command' ? command : step[key as keyof StepTemplate];
  return filled as unknown as RemediationStepTemplate;
}

/** What the accessors read: the constraint's source and its template. */
interface TemplatedConstraint {
  readonly source: SourceObject;
  readonly [TEMPLATE_KEY]: TextsTemplate;
}

function templateOf(constraint: TemplatedConstraint): TextsTemplate {
  return constraint[TEMPLATE_KEY];
}

// One descriptor object per text, so every constraint of the same keys shares one hidden class.
const TEXT_ACCESSORS: Record<keyof TextsTemplate, PropertyDescriptor> = {
  displayName: {
    enumerable: true,
    get(this: TemplatedConstraint) {
      return filledText(templateOf(this).displayName, this.source);
    },
  },
  summary: {
    enumerable: true,
    get(this: TemplatedConstraint) {
      return filledText(templateOf(this).summary, this.source);
    },
  },
  remediationHint: {
    enumerable: true,
    get(this: TemplatedConstraint) {
      return filledText(templateOf(this).remediationHint, this.source);
    },
  },
  remediation: {
    enumerable: true,
    get(this: TemplatedConstraint) {
      const { summary, steps } = templateOf(this).remediation;
      return {
        summary: filledText(summary, this.source),
        steps: steps.map((step) => filledStep(step, this.source)),
      };
    },
  },
};

/** JSON of an object with each set of data keys seen (see SharedValues.objectOf for why). */
const objectTemplates = new Map<string, string>();
/** Constraint key sets are a handful per adapter; beyond this, objects are built key by key. */
const MOST_OBJECT_TEMPLATES = 1_024;

function objectWithKeys(keys: readonly string[]): Record<string, unknown> {
  const signature = keys.join('\u0000');
  let template = objectTemplates.get(signature);
  if (template === undefined) {
    if (objectTemplates.size >= MOST_OBJECT_TEMPLATES || keys.includes('__proto__'))
      return Object.fromEntries(keys.map((key) => [key, null])) as Record<string, unknown>;
    template = JSON.stringify(Object.fromEntries(keys.map((key) => [key, null])));
    objectTemplates.set(signature, template);
  }
  return JSON.parse(template) as Record<string, unknown>;
}

/**
 * The constraint as the index keeps it: its other properties shared by `share`, its texts one
 * shared template behind accessors (see the module comment). Frozen, as SharedValues' values are.
 */
export function templatedConstraint<Kept extends Constraint>(
  constraint: Kept,
  share: <Value>(value: Value) => Value,
): Kept {
  const record = constraint as unknown as Record<string, unknown>;
  const keys = Object.keys(record).filter((key) => !TEXT_KEYS.has(key));
  const kept = objectWithKeys([...keys, TEMPLATE_KEY]);
  for (const key of keys) kept[key] = share(record[key]);
  const source = kept.source as SourceObject;
  kept[TEMPLATE_KEY] = share(textsTemplateOf(constraint, source));
  // Redefining the last in-object property keeps the object's fast layout; adding one would not.
  Object.defineProperty(kept, TEMPLATE_KEY, { enumerable: false });
  for (const key of Object.keys(TEXT_ACCESSORS) as Array<keyof TextsTemplate>)
    Object.defineProperty(kept, key, TEXT_ACCESSORS[key]);
  return Object.freeze(kept) as unknown as Kept;
}

/** The shared template behind an indexed constraint's texts; undefined for any other constraint. */
export function sharedTextsTemplate(constraint: Constraint): TextsTemplate | undefined {
  const descriptor = Object.getOwnPropertyDescriptor(constraint, TEMPLATE_KEY);
  return descriptor?.value as TextsTemplate | undefined;
}
