// Go-style durations (`24h`, `90s`, `1h30m`, `500ms`) and the rules on them that the controller's
// flags and the Pulumi component must agree on. Pure, so infra/ can share them (it imports only
// the model).

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a Go-style duration, or undefined when the text is not one. */
export function durationMs(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const [, amount, , unit] of trimmed.matchAll(/(\d+(\.\d+)?)(ms|s|m|h)/g))
    total += Number(amount) * DURATION_UNITS_MS[unit];
  return Math.round(total);
}

/** Rescans hit the API server's discovery endpoints: faster than once a second is a mistake. */
export const MIN_RESCAN_INTERVAL_MS = 1_000;

/** Why `text` is not a valid `--rescan-interval`, or undefined when it is one. */
export function rescanIntervalProblem(text: string): string | undefined {
  const milliseconds = durationMs(text);
  if (milliseconds === undefined)
    return `expected a duration such as 24h, 30m, 90s or 1h30m, got ${JSON.stringify(text)}`;
  if (milliseconds < MIN_RESCAN_INTERVAL_MS)
    return `must be at least 1s (discovery is not free), got ${JSON.stringify(text)}`;
  return undefined;
}
