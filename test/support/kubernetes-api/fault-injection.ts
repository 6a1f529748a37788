// Programmable misbehaviour: the failures a cluster source must survive, triggered on demand. Each
// rule matches requests by method, path fragment and whether they are watches, and is consumed by
// the first `times` requests it matches.

export interface RequestMatcher {
  /** HTTP method, e.g. 'GET'. */
  method?: string;
  /** A fragment of the path, e.g. '/configmaps'. */
  pathIncludes?: string;
  /** true: only watch requests; false: only non-watch requests; unset: both. */
  watch?: boolean;
}

export interface FailureRule extends RequestMatcher {
  /** HTTP status of the Status answer, e.g. 500, 403, 410, 429. */
  status: number;
  /** How many matching requests fail; default 1. */
  times?: number;
  message?: string;
  reason?: string;
}

export interface HangRule extends RequestMatcher {
  times?: number;
}

export interface DelayRule extends RequestMatcher {
  ms: number;
  times?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  watch: boolean;
  /** The request's Content-Type header, e.g. which patch strategy a client chose. */
  contentType: string | undefined;
  /** When it arrived (ms since the epoch). */
  at: number;
  /** The HTTP status answered; undefined while pending (or for a connection that was dropped). */
  status?: number;
}

interface ArmedRule<Rule> {
  rule: Rule;
  remaining: number;
}

function matches(matcher: RequestMatcher, request: RecordedRequest): boolean {
  return (
    (matcher.method === undefined || matcher.method.toUpperCase() === request.method) &&
    (matcher.pathIncludes === undefined || request.path.includes(matcher.pathIncludes)) &&
    (matcher.watch === undefined || matcher.watch === request.watch)
  );
}

function take<Rule extends RequestMatcher>(
  rules: ArmedRule<Rule>[],
  request: RecordedRequest,
): Rule | undefined {
  const armed = rules.find((candidate) => candidate.remaining > 0 && matches(candidate.rule, request));
  if (!armed) return undefined;
  armed.remaining -= 1;
  if (armed.remaining === 0) rules.splice(rules.indexOf(armed), 1);
  return armed.rule;
}

export class FaultInjector {
  private readonly failures: ArmedRule<FailureRule>[] = [];
  private readonly hangs: ArmedRule<HangRule>[] = [];
  private readonly delays: ArmedRule<DelayRule>[] = [];

  failNext(rule: FailureRule): void {
    this.failures.push({ rule, remaining: rule.times ?? 1 });
  }

  hangNext(rule: HangRule): void {
    this.hangs.push({ rule, remaining: rule.times ?? 1 });
  }

  delayNext(rule: DelayRule): void {
    this.delays.push({ rule, remaining: rule.times ?? 1 });
  }

  takeFailure(request: RecordedRequest): FailureRule | undefined {
    return take(this.failures, request);
  }

  takeHang(request: RecordedRequest): boolean {
    return take(this.hangs, request) !== undefined;
  }

  takeDelay(request: RecordedRequest): number {
    return take(this.delays, request)?.ms ?? 0;
  }

  clear(): void {
    this.failures.length = 0;
    this.hangs.length = 0;
    this.delays.length = 0;
  }
}
