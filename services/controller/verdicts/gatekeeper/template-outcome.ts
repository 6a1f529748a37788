import type { Text } from '../../../model/text';
import type { Evidence } from '../types';

/** What running a template on the object gives: its violations, nothing to review, or why not known. */
export type TemplateOutcome = { violations: Evidence[] } | { matched: false } | { unknown: Text };
