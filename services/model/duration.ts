// Go `time.Duration` strings (`24h`, `1h30m`, `500ms`), as Kubernetes manifests, cert-manager and
// Forewarn's own flags write them, and the one rule for the controller's rescan interval. In the
// model so the controller's flags and the Pulumi component's argument checks share them.

const GO_DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
const GO_DURATION_UNIT_MS: { [unit: string]: number } = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Milliseconds of a Go duration string, or undefined when it is not one. */
export function parseGoDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (!GO_DURATION.test(trimmed)) return undefined;
  let total = 0;
  for (const match of trimmed.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) {
    total += Number(match[1]) * GO_DURATION_UNIT_MS[match[2]];
  }
  return total;
}

/** Rescans hit the API server's discovery endpoints: faster than once a second is a mistake. */
export const MIN_RESCAN_INTERVAL_MS = 1_000;

/** Why a rescan interval of this many milliseconds is refused, or undefined when it is fine. */
export function rescanIntervalProblem(milliseconds: number): string | undefined {
  return milliseconds < MIN_RESCAN_INTERVAL_MS ? 'must be at least 1s (discovery is not free)' : undefined;
}
