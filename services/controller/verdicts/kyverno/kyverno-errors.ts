// Why a Kyverno rule gets no pass or fail here.

/** The rule cannot be evaluated here; the message says why (shown as the verdict's reason). */
export class NotEvaluable extends Error {}

/** Kyverno itself answers an error for this rule (an invalid query, a function on the wrong type). */
export class KyvernoRuleError extends Error {}
