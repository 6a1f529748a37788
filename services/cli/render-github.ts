import type { ManifestCheckReport } from '../controller/check/manifest-check';
import { singleLine } from '../model/warnings';
import { findingText, locateFindings, objectLabel, type FindingLevel } from './ci-findings';

// `forewarn check -o github`: GitHub Actions workflow commands (`::error file=F,line=L,title=T::text`),
// which the runner turns into annotations on the pull request's diff at the manifest's line. One
// line per finding; the level from the verdict, as in SARIF (GitHub calls `note` `notice`).

const COMMAND: Record<FindingLevel, string> = { error: 'error', warning: 'warning', note: 'notice' };

/** The message of a workflow command: `%`, CR and LF encoded, as the runner decodes them. */
export function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A property value (file, title): also `:` and `,`, which separate the properties. */
export function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

export function renderGithubAnnotations(
  reports: readonly ManifestCheckReport[],
  contents: ReadonlyMap<string, string>,
): string {
  return locateFindings(reports, contents)
    .map((located) => {
      const { finding } = located;
      const title = `${objectLabel(located.object)}: ${finding.sourceKind} ${singleLine(finding.name)}`;
      const properties = [
        ...(located.file === '<stdin>' ? [] : [`file=${escapeProperty(located.file)}`]),
        `line=${located.line}`,
        `title=${escapeProperty(title)}`,
      ].join(',');
      return `::${COMMAND[located.level]} ${properties}::${escapeData(findingText(finding))}\n`;
    })
    .join('');
}
