import { stringify } from 'yaml';
import type { Severity } from '../model/api';
import { decideColour } from './colour-mode';
import { OUTPUT_FORMATS, type OutputFormat } from './output-formats';

// Output formats and terminal styling. Colour as colour-mode.ts decides (by default only on a
// terminal without NO_COLOR), so pipes, files and CI logs get plain text.

export { OUTPUT_FORMATS, type OutputFormat };

export interface OutputStream {
  write(text: string): unknown;
  isTTY?: boolean;
  /** A terminal's width (node sets it on a TTY stream). */
  columns?: number;
}

/** Narrower terminals still get lines this long: a word per line helps nobody. */
const MINIMUM_WRAP_WIDTH = 40;

/**
 * The width to wrap text at: the terminal's columns, else a numeric COLUMNS in the environment;
 * undefined for pipes and files, which get whole lines (grep, diffs, CI logs).
 */
export function wrapWidth(stream: OutputStream, env: NodeJS.ProcessEnv): number | undefined {
  const columns = stream.isTTY === true && stream.columns ? stream.columns : Number(env.COLUMNS);
  return Number.isInteger(columns) && columns > 0 ? Math.max(columns, MINIMUM_WRAP_WIDTH) : undefined;
}

/** `--color=auto`: FORCE_COLOR, then NO_COLOR, then whether the stream is a terminal (colour-mode.ts). */
export function shouldColour(stream: OutputStream, env: NodeJS.ProcessEnv): boolean {
  return decideColour('auto', stream, env);
}

const ANSI = {
  red: '\u001b[31m',
  yellow: '\u001b[33m',
  dim: '\u001b[2m',
  bold: '\u001b[1m',
  reset: '\u001b[0m',
};

export interface Style {
  severity(severity: Severity, text: string): string;
  bold(text: string): string;
  dim(text: string): string;
}

export function createStyle(colour: boolean): Style {
  const paint = (code: string, text: string) => (colour ? `${code}${text}${ANSI.reset}` : text);
  return {
    severity: (severity, text) =>
      paint(severity === 'Critical' ? ANSI.red : severity === 'Warning' ? ANSI.yellow : ANSI.dim, text),
    bold: (text) => paint(ANSI.bold, text),
    dim: (text) => paint(ANSI.dim, text),
  };
}

/** Machine formats print the value as the API returned it. */
export function formatData(value: unknown, format: Exclude<OutputFormat, 'table'>): string {
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : stringify(value);
}

function width(text: string): number {
  return [...text].length;
}

/**
 * Breaks `text` at spaces into lines of at most `maxWidth` characters, the first starting with
 * `indent`, the others with `hangingIndent`; a word longer than a line is cut. Without a width: one
 * line.
 */
export function wrapText(
  text: string,
  maxWidth: number | undefined,
  indent: string,
  hangingIndent = indent,
): string[] {
  if (maxWidth === undefined) return [indent + text];
  const lines: string[] = [];
  let line = indent;
  let empty = true;
  const room = () => maxWidth - width(line);
  for (let word of text.split(' ').filter((each) => each !== '')) {
    if (!empty && width(word) + 1 > room()) {
      lines.push(line);
      line = hangingIndent;
      empty = true;
    }
    // A word wider than a whole line (a URL, a long path) is cut where the line ends.
    while (empty && width(word) > room() && room() > 0) {
      const characters = [...word];
      const cut = room();
      lines.push(line + characters.slice(0, cut).join(''));
      word = characters.slice(cut).join('');
      line = hangingIndent;
    }
    line += (empty ? '' : ' ') + word;
    empty = false;
  }
  lines.push(line);
  return lines;
}

/** Narrower than this, the last column goes below its row: a word per line helps nobody. */
const MINIMUM_LAST_COLUMN = 24;
/** The indent of a last column printed below its row. */
const BELOW_INDENT = '    ';

/**
 * Aligned columns separated by two spaces; the last column is not padded (it holds long text).
 * `paint` styles a cell after padding, so escape codes never disturb the alignment. With `maxWidth`
 * (a terminal's), the last column is wrapped under itself so that rows fit it, as `check` wraps;
 * where the other columns leave it too little room, it is wrapped on lines of its own below the row.
 */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  paint: (row: number, column: number, text: string) => string = (_row, _column, text) => text,
  maxWidth?: number,
): string {
  const widths = headers.map((header, column) =>
    Math.max(width(header), ...rows.map((row) => width(row[column] ?? ''))),
  );
  const last = headers.length - 1;
  const lastStart = widths.slice(0, last).reduce((sum, each) => sum + each + 2, 0);
  const below = maxWidth !== undefined && maxWidth - lastStart < MINIMUM_LAST_COLUMN;
  const lastLines = (text: string): string[] => {
    if (maxWidth === undefined) return [text];
    if (below) return ['', ...(text === '' ? [] : wrapText(text, maxWidth, BELOW_INDENT))];
    return wrapText(text, maxWidth - lastStart, '').map((each, index) =>
      index === 0 ? each : ' '.repeat(lastStart) + each,
    );
  };
  const line = (cells: readonly string[], row: number) => {
    const [first = '', ...rest] = lastLines(cells[last] ?? '');
    const padded = cells
      .map((cell, column) => {
        const text = column === last ? first : cell + ' '.repeat(Math.max(widths[column] - width(cell), 0));
        return row < 0 ? text : paint(row, column, text);
      })
      .join('  ')
      .trimEnd();
    return [padded, ...rest].join('\n');
  };
  return [line(headers, -1), ...rows.map((row, index) => line(row, index))].join('\n') + '\n';
}
