// Namespace lists of policy engines may hold wildcards: Gatekeeper `match.namespaces` allows a
// prefix or suffix `*` (`kube-*`, `*-system`), Kyverno `*` and `?` anywhere. Namespace names cannot
// contain either character, so reading both as wildcards in every list changes no exact name.

/** Whether `namespace` matches `pattern`: `*` any run of characters, `?` one character. */
export function namespaceMatchesPattern(pattern: string, namespace: string): boolean {
  if (!pattern.includes('*') && !pattern.includes('?')) return pattern === namespace;
  // Iterative glob matching with backtracking to the last `*`: linear in practice, no regex built.
  let patternAt = 0;
  let namespaceAt = 0;
  let starAt = -1;
  let resumeAt = 0;
  while (namespaceAt < namespace.length) {
    const expected = pattern[patternAt];
    if (
      expected === '?' ||
      (expected !== undefined && expected !== '*' && expected === namespace[namespaceAt])
    ) {
      patternAt++;
      namespaceAt++;
    } else if (expected === '*') {
      starAt = patternAt++;
      resumeAt = namespaceAt;
    } else if (starAt !== -1) {
      patternAt = starAt + 1;
      namespaceAt = ++resumeAt;
    } else return false;
  }
  while (pattern[patternAt] === '*') patternAt++;
  return patternAt === pattern.length;
}

/** Whether any pattern of the list matches the namespace. */
export function namespaceListMatches(patterns: readonly string[], namespace: string): boolean {
  return patterns.some((pattern) => namespaceMatchesPattern(pattern, namespace));
}
