import type { AttributeNode } from './plan-internals';

// @bufbuild/cel plans an expression it has not type-checked, so a dotted name such as
// `object.spec.template` becomes a list of every way it could be read: a variable named
// `object.spec.template`, then `object.spec` with `.template`, then `object` with `.spec.template`
// (cel-go's checker settles this once, at compile time). Every evaluation tries them in that order,
// and each miss looks the name up in the activation and in the type registry (2-3 µs of CPU per
// admission check of the demo cluster's CEL policies). The variables Forewarn binds (Kubernetes' `object`,
// `params`, `variables`, ... and comprehension variables) are CEL identifiers, without dots, so a dotted
// candidate can only resolve to a type or enum constant of the registry, which is known while planning.
// The candidates that can never resolve are dropped once, at planning; the order of the others is kept.

/** The fields of @bufbuild/cel's AbsoluteAttr (access.js) read here. */
interface AbsoluteAttributeNode extends AttributeNode {
  nsNames: string[];
  accesses_: NonNullable<AttributeNode['accesses_']>;
  findIdent(name: string): unknown;
}

const isAbsolute = (candidate: AttributeNode): candidate is AbsoluteAttributeNode =>
  candidate.constructor.name === 'AbsoluteAttr';

function mayResolve(candidate: AttributeNode): boolean {
  if (!isAbsolute(candidate)) return true;
  return candidate.nsNames.some(
    (name) =>
      !name.includes('.') || (candidate.accesses_.length === 0 && candidate.findIdent(name) !== undefined),
  );
}

/** Drops, in place, the candidates of a name read several ways that no evaluation can resolve. */
export function dropUnresolvableCandidates(attribute: AttributeNode): void {
  const candidates = attribute.attrs;
  if (!candidates || candidates.length < 2) return;
  const kept = candidates.filter(mayResolve);
  // None left would turn a missing name's error into another: leave such a list as it was.
  if (kept.length === 0 || kept.length === candidates.length) return;
  candidates.splice(0, candidates.length, ...kept);
}
