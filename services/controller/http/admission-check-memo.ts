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

export class AdmissionCheckMemo {
  private state: string | undefined;
  /** Answers remembered lately, then the generation before: each holds half the entries. */
  private recent = new Map<string, AnswersByLevel>();
  private older = new Map<string, AnswersByLevel>();
  private readonly generationSize: number;

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
    return (this.recent.get(body) ?? this.older.get(body))?.[level];
  }

  /** Whether an answer for this body at this level is kept in this state. */
  has(state: string, body: string, level = ''): boolean {
    if (state !== this.state) return false;
    return (this.recent.get(body) ?? this.older.get(body))?.[level] !== undefined;
  }

  remember(state: string, body: string, answer: string, level = ''): void {
    if (body.length > ADMISSION_MEMO_MAX_BODY_BYTES) return;
    if (state !== this.state) this.forget(state);
    const kept = this.recent.get(body) ?? this.older.get(body);
    if (kept) {
      kept[level] ??= answer;
      return;
    }
    // The older generation goes as a whole: the oldest half of the entries.
    if (this.recent.size >= this.generationSize) {
      this.older = this.recent;
      this.recent = new Map();
    }
    this.recent.set(body, { [level]: answer });
  }

  private forget(state: string): void {
    this.recent = new Map();
    this.older = new Map();
    this.state = state;
  }
}
