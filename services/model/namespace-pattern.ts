import { matchesWildcard } from './wildcard';

// Namespace lists of policy engines may hold wildcards: Gatekeeper `match.namespaces` allows a
// prefix or suffix `*` (`kube-*`, `*-system`), Kyverno `*` and `?` anywhere. Namespace names cannot
// contain either character, so reading both as wildcards in every list changes no exact name.

/** Whether `namespace` matches `pattern`: `*` any run of characters, `?` one character. */
export function namespaceMatchesPattern(pattern: string, namespace: string): boolean {
  if (!pattern.includes('*') && !pattern.includes('?')) return pattern === namespace;
  return matchesWildcard(pattern, namespace);
}

/** Whether any pattern of the list matches the namespace. */
export function namespaceListMatches(patterns: readonly string[], namespace: string): boolean {
  return patterns.some((pattern) => namespaceMatchesPattern(pattern, namespace));
}
