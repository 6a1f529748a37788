// The names of `-o`, apart from the code that writes them, so the command line can list them
// without loading a YAML writer or a check engine (start-up time, docs/benchmarks.md).

/** Formats of every command. */
export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Formats of `check` only: CI annotations and reports (docs/cli.md). */
export const CHECK_OUTPUT_FORMATS = ['sarif', 'junit', 'github'] as const;
export type CheckOutputFormat = (typeof CHECK_OUTPUT_FORMATS)[number];

export function isCheckOutputFormat(format: string): format is CheckOutputFormat {
  return (CHECK_OUTPUT_FORMATS as readonly string[]).includes(format);
}
