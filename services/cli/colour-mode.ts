// Whether `forewarn` paints its tables: `--color=auto|always|never` (`--no-color` is `never`). In
// `auto`, a non-empty FORCE_COLOR other than `0`/`false` forces colour (CI logs that render ANSI,
// `less -R`), then a non-empty NO_COLOR (https://no-color.org) turns it off, else colour only on a
// terminal. FORCE_COLOR wins over NO_COLOR as in Node's own tty colour detection; the flag wins over
// both (docs/decisions.md).

export const COLOUR_MODES = ['auto', 'always', 'never'] as const;
export type ColourMode = (typeof COLOUR_MODES)[number];

export function decideColour(mode: ColourMode, stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (mode !== 'auto') return mode === 'always';
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') return force !== '0' && force.toLowerCase() !== 'false';
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return stream.isTTY === true;
}
