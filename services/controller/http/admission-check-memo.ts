// Answers of `POST /api/v1/admission-check`, remembered per state of what they are computed from.
// An answer is a pure function of the index (its revision), the companion inventory behind the
// prospective findings, the viewer and the request body, so identical objects (a Deployment's
// replicas, a retried review) are answered from here until any of those change. Spec 8 requires a
// controller query per admission request from the webhook; it does not forbid the controller from
// reusing an answer computed for the same state. The memo is cleared as a whole when the state
// changes, so it never holds a stale answer; its size is bounded by entries and by body size.

export const ADMISSION_MEMO_MAX_ENTRIES = 256;
/** Larger bodies are evaluated every time: 256 entries of this size stay under 16 MiB. */
export const ADMISSION_MEMO_MAX_BODY_BYTES = 64 * 1024;

export class AdmissionCheckMemo {
  private state: string | undefined;
  private readonly answers = new Map<string, string>();

  constructor(private readonly maxEntries = ADMISSION_MEMO_MAX_ENTRIES) {}

  get size(): number {
    return this.answers.size;
  }

  /** The serialised answer for this body in this state, if computed before. */
  lookup(state: string, body: string): string | undefined {
    if (state !== this.state) {
      this.answers.clear();
      this.state = state;
      return undefined;
    }
    return this.answers.get(body);
  }

  /** Whether an answer for this body is kept in this state. */
  has(state: string, body: string): boolean {
    return state === this.state && this.answers.has(body);
  }

  remember(state: string, body: string, answer: string): void {
    if (body.length > ADMISSION_MEMO_MAX_BODY_BYTES) return;
    if (state !== this.state) {
      this.answers.clear();
      this.state = state;
    }
    // Map keeps insertion order: the oldest entry goes first.
    if (this.answers.size >= this.maxEntries && !this.answers.has(body)) {
      const oldest = this.answers.keys().next().value;
      if (oldest !== undefined) this.answers.delete(oldest);
    }
    this.answers.set(body, answer);
  }
}
