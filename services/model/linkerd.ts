// Linkerd's default inbound policy (what meshed pods' proxies do on ports no Server selects): set on a
// Namespace for its pods, or on a pod (a workload's pod template) for itself, which then wins. Read by
// the mesh adapter (the Namespace) and by the verdicts (the admitted pods' own).

export const LINKERD_DEFAULT_INBOUND_POLICY_ANNOTATION = 'config.linkerd.io/default-inbound-policy';

/** The constraint the mesh adapter builds from a Namespace's default. */
export const LINKERD_DEFAULT_INBOUND_CONSTRAINT = 'linkerd/default-inbound-policy';

export const LINKERD_DEFAULT_INBOUND_POLICIES = [
  'all-unauthenticated',
  'all-authenticated',
  'cluster-unauthenticated',
  'cluster-authenticated',
  'deny',
  'audit',
] as const;

/** Linkerd's own default: it restricts nothing. */
export const LINKERD_PERMISSIVE_POLICY = 'all-unauthenticated';
