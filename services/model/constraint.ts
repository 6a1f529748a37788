import type {
  AdapterName,
  ConstraintType,
  Effect,
  Metrics,
  Privilege,
  RemediationStepType,
  Severity,
} from './api';
import type { KubernetesObject, ResourceTarget } from './kubernetes';
import type { PodSecurityDefaults, PodSecurityExemptions } from './pod-security';
import type { Selector } from './selector';
import type { QuotaScopeRequirement } from './quota-scope';
import type { Text } from './text';
import type { PolicySourceKinds, PolicySourceName } from './watched-kinds';

// Re-exported: constraints name their targets with it, and most callers import it from here.
export type { ResourceTarget };

// The constraint as the index keeps it. Views turn it into the wire shapes of api.ts at a detail
// level; every human-readable string is a Text so the views can redact it (see text.ts).

/** Where a constraint applies. */
export type NamespaceScope =
  /** A namespaced source applies to its own namespace only. */
  | { kind: 'namespace'; namespace: string }
  /**
   * A cluster-scoped source (or a mesh-wide one from the mesh root namespace) applies to every
   * namespace its scope admits: all conditions that are set must hold.
   */
  | {
      kind: 'cluster';
      /** Only these namespaces, when set. Entries may hold `*`/`?` wildcards (namespace-pattern.ts). */
      namespaces?: string[];
      /** Never these namespaces; wildcards as in `namespaces`. */
      excludedNamespaces?: string[];
      /** Evaluated against the Namespace's labels (a Calico expression for Calico sources). */
      namespaceSelector?: Selector;
    }
  /**
   * In no namespace's report: the source selects no pod (Cilium `reserved:*` identities, node
   * selectors) or intercepts only cluster-scoped resources (CertificateSigningRequests, ...). The
   * constraint is still indexed and counted; `reason` says why it reaches no namespace.
   */
  | { kind: 'none'; reason: string };

/**
 * A different outcome of one cluster-wide constraint in some namespaces (Kyverno
 * `validationFailureActionOverrides`, rule-level `failureActionOverrides`): in a namespace the first
 * override whose scope admits it replaces severity, effect, summary and hint.
 */
export interface NamespaceOutcome {
  scope: NamespaceScope;
  severity: Severity;
  effect: Effect;
  summary: Text;
  remediationHint: Text;
  tags: string[];
}

/** A resource an admission constraint intercepts: API group and plural resource; `*` honoured. */

export interface SourceObject {
  kind: string;
  /** `<group>/<version>`, or `v1` for the core group. */
  apiVersion: string;
  name: string;
  /** null for cluster-scoped objects. */
  namespace: string | null;
}

export interface RemediationStepTemplate {
  type: RemediationStepType;
  description: Text;
  command?: Text;
  /** Set on manual steps; filled from `forewarn.io/contact` or `--contact` when absent. */
  contact?: string;
  requiresPrivilege?: Privilege;
  automated?: boolean;
}

export interface Constraint {
  /**
   * Unique within the index: the source object's key plus the part of the object it came from.
   * Adapters set only the part (e.g. `ingress`, a rule name); the ingest layer prefixes the key.
   */
  id: string;
  name: string;
  type: ConstraintType;
  severity: Severity;
  effect: Effect;
  adapter: AdapterName;
  source: SourceObject;
  scope: NamespaceScope;
  /**
   * Pods this applies to, by their labels; undefined means every workload of the namespace. A label
   * selector, or a Calico expression for Calico sources (selector.ts evaluates both).
   */
  workloadSelector?: Selector;
  /** Resources this intercepts; undefined means any resource. */
  resourceTargets?: ResourceTarget[];
  tags: string[];
  /** The constraint's name as Text, so views can redact it (cross-namespace, cluster-scoped). */
  displayName: Text;
  summary: Text;
  remediationHint: Text;
  remediation: { summary: Text; steps: RemediationStepTemplate[] };
  /** Only for ResourceLimit constraints. */
  metrics?: Metrics;
  /** A scoped ResourceQuota's scope: it applies only to objects in it (quota-scope.ts). */
  quotaScopes?: QuotaScopeRequirement[];
  /** Applies only to pods running one of these images (Kyverno `imageReferences`; image-references.ts). */
  imageReferences?: string[];
  /** Per-namespace outcomes of a cluster-wide constraint; the index applies them (constraint-index.ts). */
  namespaceOutcomes?: NamespaceOutcome[];
  /**
   * Other objects the adapter read to describe this constraint (a ValidatingAdmissionPolicy for its
   * binding, a Gatekeeper template, Linkerd's authorizations): a caller sees the constraint at `full`
   * through its own RBAC only when it may `get` all of them as well as the source (issue 24).
   */
  relatedSources?: SourceObject[];
  /** ISO 8601: when the source object was last seen. */
  lastObserved: string;
  /**
   * The opaque reference the index gives it (model/opaque-reference.ts): shown where its name is
   * redacted, looked up by callers entitled to `full`. Absent on findings not in the index.
   */
  ref?: string;
}

/** What adapters receive besides the object: settings and a way to see related objects. */
export interface AdapterContext {
  /** Contact for manual remediation steps (`--contact`). */
  defaultContact: string;
  /** Our own webhook configuration, never reported (`--own-webhook`). */
  ownWebhookName: string;
  /** Mesh root namespace whose policies apply mesh-wide. */
  meshRootNamespace: string;
  /** Pod Security Admission defaults of the cluster (`--pod-security-default`); unknown when absent. */
  podSecurityDefaults?: PodSecurityDefaults;
  /** What the cluster's Pod Security Admission exempts (`--pod-security-exempt-*`); none when absent. */
  podSecurityExemptions?: PodSecurityExemptions;
  /** Related objects retained by the ingest layer (e.g. a ValidatingAdmissionPolicy for its binding). */
  lookup(apiVersionKind: { group: string; kind: string }, namespace: string | null, name: string): unknown;
  /**
   * Every retained object of one kind in a namespace (null: cluster-scoped; undefined: in every
   * namespace), e.g. a Server's authorizations.
   */
  lookupAll(groupKind: { group: string; kind: string }, namespace: string | null | undefined): unknown[];
}

/** A constraint before the ingest layer stamps observation time and applies annotation overrides. */
export type ConstraintDraft = Omit<Constraint, 'lastObserved'>;

/** Thrown by adapters on objects they cannot read; counted as a parse error, never fatal. */
export class AdapterParseError extends Error {}

export interface Adapter {
  name: PolicySourceName;
  /** Kinds routed to this adapter by exact group and kind (its entry in POLICY_SOURCE_KINDS). */
  kinds: PolicySourceKinds['kinds'];
  /** Whole API groups whose every kind belongs to this adapter (see PolicySourceKinds). */
  dynamicGroups?: PolicySourceKinds['dynamicGroups'];
  /**
   * Kinds kept whole by the ingest layer because constraints depend on more than one object; when one
   * of them changes, every retained object of this adapter is evaluated again.
   */
  retainedKinds?: Array<{ group: string; kind: string }>;
  toConstraints(object: KubernetesObject, context: AdapterContext): ConstraintDraft[];
  /**
   * Constraints this adapter reads from every Namespace (annotations such as Linkerd's default
   * inbound policy), besides the adapter the Namespace kind is routed to. Same error contract.
   */
  namespaceConstraints?(namespace: KubernetesObject, context: AdapterContext): ConstraintDraft[];
}
