// Answers of `POST /api/v1/admission-check`, remembered per state of what they are computed from.
// An answer is a pure function of the index (its revision), the companion inventory behind the
// prospective findings, the viewer and the request body, so identical objects (a Deployment's
// replicas, a retried review) are answered from here until any of those change. Spec 8 requires a
// controller query per admission request from the webhook; it does not forbid the controller from
// reusing an answer computed for the same state. The memo is cleared as a whole when the state
// changes, so it never holds a stale answer; its size is bounded by entries and by body size.

// The entries are held in two generations rather than one map with the oldest deleted first: under a
// load of distinct reviews, a map that deletes one entry for every one it adds is rehashed again and
// again, and V8's scavenges keep each discarded table (and the bodies it still links to) alive until a
// full collection. Few entries, so that a body and its answer are garbage before the next scavenge
// (a review allocates about 150 KB: 16 MB of young generation is about a hundred reviews) and never
// reach the old generation; 256 entries took every one of them there (issue 33, docs/decisions.md).

export const ADMISSION_MEMO_MAX_ENTRIES = 64;
/** Larger bodies are evaluated every time: 64 entries of this size stay under 4 MiB. */
export const ADMISSION_MEMO_MAX_BODY_BYTES = 64 * 1024;

/** One body's answers, by the viewer level they were rendered for. */
type AnswersByLevel = Record<string, string>;

// A Map keyed by the body would hash the whole body (4-60 KB) on every check, to find that a distinct
// review was never seen (V8 hashes every character: about 6 µs for a 4 KB review). Two reviews of
// different objects differ in their first kilobyte (the request's name and resource come before the
// object), so the entries are found by that prefix and then compared whole: equal bodies have equal
// prefixes, so nothing remembered is missed, and a string comparison stops at the first difference.
export const ADMISSION_MEMO_PREFIX_CHARACTERS = 1024;

interface MemoEntry {
  body: string;
  answers: AnswersByLevel;
}

/** The entries of one generation, by their bodies' prefixes (bodies that share one are few). */
class Generation {
  private readonly byPrefix = new Map<string, MemoEntry[]>();
  size = 0;

  get(body: string, prefix: string): AnswersByLevel | undefined {
    const entries = this.byPrefix.get(prefix);
    if (entries === undefined) return undefined;
    for (const entry of entries) if (entry.body === body) return entry.answers;
    return undefined;
  }

  add(body: string, prefix: string, answers: AnswersByLevel): void {
    const entries = this.byPrefix.get(prefix);
    if (entries === undefined) this.byPrefix.set(prefix, [{ body, answers }]);
    else entries.push({ body, answers });
    this.size++;
  }
}

export class AdmissionCheckMemo {
  private state: string | undefined;
  /** Answers remembered lately, then the generation before: each holds half the entries. */
  private recent = new Generation();
  private older = new Generation();
  private readonly generationSize: number;
  /** The last body's prefix: a check looks its body up, then remembers it (one slice, one hash). */
  private lastBody: string | undefined;
  private lastPrefix = '';

  constructor(maxEntries = ADMISSION_MEMO_MAX_ENTRIES) {
    this.generationSize = Math.max(1, Math.floor(maxEntries / 2));
  }

  /** Bodies kept (each with its answers for one or more levels). */
  get size(): number {
    return this.recent.size + this.older.size;
  }

  /**
   * The serialised answer for this body at this level in this state, if computed before. The body
   * itself is the key (not the level and the body joined): a joined key would be a new string to
   * flatten and hash on every check, 10-60 KB each.
   */
  lookup(state: string, body: string, level = ''): string | undefined {
    if (state !== this.state) {
      this.forget(state);
      return undefined;
    }
    return this.answersOf(body)?.[level];
  }

  /** Whether an answer for this body at this level is kept in this state. */
  has(state: string, body: string, level = ''): boolean {
    if (state !== this.state) return false;
    return this.answersOf(body)?.[level] !== undefined;
  }

  remember(state: string, body: string, answer: string, level = ''): void {
    if (body.length > ADMISSION_MEMO_MAX_BODY_BYTES) return;
    if (state !== this.state) this.forget(state);
    const kept = this.answersOf(body);
    if (kept) {
      kept[level] ??= answer;
      return;
    }
    // The older generation goes as a whole: the oldest half of the entries.
    if (this.recent.size >= this.generationSize) {
      this.older = this.recent;
      this.recent = new Generation();
    }
    this.recent.add(body, this.prefixOf(body), { [level]: answer });
  }

  private answersOf(body: string): AnswersByLevel | undefined {
    const prefix = this.prefixOf(body);
    return this.recent.get(body, prefix) ?? this.older.get(body, prefix);
  }

  private prefixOf(body: string): string {
    // The same string object as the last call (lookup, then remember, then has): its prefix again.
    if (body !== this.lastBody) {
      this.lastBody = body;
      this.lastPrefix = body.slice(0, ADMISSION_MEMO_PREFIX_CHARACTERS);
    }
    return this.lastPrefix;
  }

  private forget(state: string): void {
    this.recent = new Generation();
    this.older = new Generation();
    this.state = state;
  }
}
