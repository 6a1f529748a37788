import type { ManifestCheckReport } from '../controller/check/manifest-check';
import type { CheckOutputFormat } from './output-formats';
import { renderGithubAnnotations } from './render-github';
import { renderJunit } from './render-junit';
import { renderSarif } from './render-sarif';

// `check -o sarif|junit|github`: the result in the format a CI system reads (docs/cli.md).

export function renderCheckFormat(
  format: CheckOutputFormat,
  result: {
    reports: readonly ManifestCheckReport[];
    contents: ReadonlyMap<string, string>;
    clusterProblems: readonly string[];
  },
  toolVersion: string,
): string {
  if (format === 'sarif')
    return renderSarif({
      reports: result.reports,
      contents: result.contents,
      clusterProblems: result.clusterProblems,
      toolVersion,
    });
  if (format === 'junit') return renderJunit(result.reports, result.contents);
  return renderGithubAnnotations(result.reports, result.contents);
}
