import type { DetailLevel } from './api';

// Privacy-aware text. Adapters never write a sensitive value into a plain string: object names,
// namespace names, ports, CIDRs, hosts, selectors and usage figures are parts that the views render
// per detail level (DESIGN.md section 4). That makes "no foreign name at summary" a property of the
// renderer rather than of every adapter's care.

/** A name of a Kubernetes object (or a namespace). `namespace: null` means cluster-scoped. */
export interface NamePart {
  name: string;
  namespace: string | null;
  /** Text shown instead when the name is hidden; default `redacted`. */
  redacted?: string;
}

/** A rule detail (port, CIDR, host, selector, usage figure): shown at `detailed` and `full`. */
export interface DetailPart {
  detail: string;
  redacted?: string;
}

export type TextPart = string | NamePart | DetailPart;
export type Text = readonly TextPart[];

export const REDACTED = 'redacted';

/** Who is looking and at which level. */
export interface Viewer {
  level: DetailLevel;
  /** The namespace the view is for: names of objects in it are always visible. */
  namespace: string;
  /**
   * Names shown whatever their namespace (`namespace/name`, empty namespace for cluster-scoped):
   * those a self-naming admission policy prints itself (model/name-visibility.ts).
   */
  revealed?: ReadonlySet<string>;
}

export function objectName(name: string, namespace: string | null, redacted?: string): NamePart {
  return redacted === undefined ? { name, namespace } : { name, namespace, redacted };
}

/** A namespace's own name: visible to viewers of that namespace, hidden from others below `full`. */
export function namespaceName(namespace: string): NamePart {
  return { name: namespace, namespace };
}

export function detail(value: string, redacted?: string): DetailPart {
  return redacted === undefined ? { detail: value } : { detail: value, redacted };
}

/**
 * Tagged template building Text: `text\`NetworkPolicy ${objectName(n, ns)} denies ${detail('port 80')}\``.
 * Interpolated plain strings are kept as safe literal text, so only pass names through the part helpers.
 */
export function text(strings: TemplateStringsArray, ...parts: Array<TextPart | Text>): Text {
  // A loop rather than `forEach`: verdicts build texts on every admission check.
  const result: TextPart[] = [];
  for (let index = 0; index < strings.length; index++) {
    const literal = strings[index];
    if (literal) result.push(literal);
    if (index < parts.length) {
      const part = parts[index];
      if (Array.isArray(part)) for (const item of part as Text) result.push(item);
      else result.push(part as TextPart);
    }
  }
  return result;
}

/** Joins several texts with a separator (itself plain text). */
export function joinText(texts: readonly Text[], separator: string): Text {
  const result: TextPart[] = [];
  texts.forEach((item, index) => {
    if (index > 0) result.push(separator);
    result.push(...item);
  });
  return result;
}

export function isNamePart(part: TextPart): part is NamePart {
  return typeof part === 'object' && 'name' in part;
}

export function isDetailPart(part: TextPart): part is DetailPart {
  return typeof part === 'object' && 'detail' in part;
}

export function isNameVisible(namespace: string | null, viewer: Viewer): boolean {
  return viewer.level === 'full' || (namespace !== null && namespace === viewer.namespace);
}

export function isDetailVisible(viewer: Viewer): boolean {
  return viewer.level !== 'summary';
}

/** The key of a name in `Viewer.revealed`. */
export function revealedNameKey(part: Pick<NamePart, 'name' | 'namespace'>): string {
  return `${part.namespace ?? ''}/${part.name}`;
}

/** Whether a name inside a text is shown: the namespace rule, or revealed for this constraint. */
export function isNamePartVisible(part: NamePart, viewer: Viewer): boolean {
  return (
    isNameVisible(part.namespace, viewer) ||
    (viewer.revealed !== undefined && viewer.revealed.has(revealedNameKey(part)))
  );
}

export function renderText(value: Text, viewer: Viewer): string {
  let rendered = '';
  for (const part of value) {
    if (typeof part === 'string') rendered += part;
    else if (isNamePart(part))
      rendered += isNamePartVisible(part, viewer) ? part.name : (part.redacted ?? REDACTED);
    else rendered += isDetailVisible(viewer) ? part.detail : (part.redacted ?? REDACTED);
  }
  return rendered;
}

/** The unredacted rendering, for the in-cluster list API used by the webhook. */
export function renderFullText(value: Text): string {
  let rendered = '';
  for (const part of value) {
    if (typeof part === 'string') rendered += part;
    else if (isNamePart(part)) rendered += part.name;
    else rendered += part.detail;
  }
  return rendered;
}
