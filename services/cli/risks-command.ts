import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { isDns1123Label } from '../model/kubernetes';
import { errorMessage } from '../model/error-message';
import type { ImpactReport } from '../controller/risks/impact';
import type { RisksReport } from '../controller/risks/risk-view';
import type { ControllerApi } from './controller-api';
import {
  checkExitCode,
  EXIT_CODES,
  FAIL_ON_LEVELS,
  unavailableError,
  usageError,
  type ExitCode,
  type FailOn,
} from './exit-codes';
import type { OfflineCluster } from './offline-index';
import type { createStyle, OutputStream } from './output';
// Engines, parsers and tables load when a command runs, not with the program (start-up, lazy-modules.ts).
import { lazy } from './lazy-modules';

// `forewarn risks` and `forewarn impact` (issue 35, docs/cli.md): the running workloads that would be
// rejected on their next apply, and what a proposed policy would reject, against a controller or
// offline against a directory of cluster manifests (`--manifests`, evaluated in this process with the
// controller's own code).

/** What the commands need from the program (program.ts). */
export interface RiskCommandContext {
  environment: { stdout: OutputStream; env: NodeJS.ProcessEnv; readStdin(): Promise<string> };
  controller: () => ControllerApi;
  print: (value: unknown, table: () => string) => void;
  style: () => ReturnType<typeof createStyle>;
  setExitCode: (code: ExitCode) => void;
}

// The controller's answers, checked before rendering (unknown fields pass through to -o json).
function requireNamespace(namespace: string): string {
  if (!isDns1123Label(namespace))
    throw usageError(
      `invalid namespace ${JSON.stringify(namespace)}: lowercase letters, digits and "-", at most 63 characters`,
    );
  return namespace;
}

function manifestsOrUrl(program: Command, manifests: string | undefined): void {
  if (manifests !== undefined && program.getOptionValueSource('url') === 'cli')
    throw usageError(
      '--manifests and --url are alternatives: evaluate offline against a directory, or ask a controller',
    );
}

/** Every workload of DIR evaluated once, synchronously (nothing else waits in a one-shot command). */
async function evaluatedOffline(directory: string): Promise<OfflineCluster> {
  const cluster = await lazy.offlineIndex().loadOfflineCluster(directory);
  cluster.risks.start();
  cluster.risks.evaluatePendingNow();
  cluster.risks.stop();
  return cluster;
}

function offlineRisks(cluster: OfflineCluster, namespaces: readonly string[]): RisksReport[] {
  return namespaces.map((namespace) =>
    lazy.riskView().buildRisksReport(cluster.risks, namespace, 'full', new Date()),
  );
}

function risksExitCode(reports: readonly RisksReport[], failOn: FailOn): ExitCode {
  const rejected = reports.reduce((sum, report) => sum + report.atRiskCount, 0);
  const warned = reports.reduce((sum, report) => sum + report.warnedCount, 0);
  return checkExitCode(rejected, warned, failOn);
}

const failOnOption = () =>
  new Option('--fail-on <level>', 'lowest finding that fails the command')
    .choices(FAIL_ON_LEVELS)
    .default('never');

export function addRisksCommand(program: Command, context: RiskCommandContext): void {
  program
    .command('risks')
    .description(
      'running workloads that would be rejected or warned about if applied again now (exit 0; with --fail-on: 1 warned, 3 rejected)',
    )
    .option('-n, --namespace <namespace>', 'namespace', 'default')
    .option('-A, --all-namespaces', 'with --manifests: every namespace of the directory')
    .option(
      '--manifests <dir>',
      'evaluate offline the workloads and policies of this directory of cluster manifests',
    )
    .addOption(failOnOption())
    .action(
      async (options: { namespace: string; allNamespaces?: boolean; manifests?: string; failOn: FailOn }) => {
        manifestsOrUrl(program, options.manifests);
        const namespace = requireNamespace(options.namespace);
        let reports: RisksReport[];
        if (options.manifests !== undefined) {
          const cluster = await evaluatedOffline(options.manifests);
          const namespaces = options.allNamespaces
            ? [...new Set(cluster.risks.keptWorkloads().map((kept) => kept.identity.namespace))].sort()
            : [namespace];
          reports = offlineRisks(cluster, namespaces).filter(
            (report) => !options.allNamespaces || report.workloads.length > 0,
          );
        } else {
          if (options.allNamespaces)
            throw usageError('--all-namespaces goes with --manifests; ask a controller with -n');
          const body = await context.controller().getJson(`resources/risks/${namespace}`);
          reports = [
            lazy
              .riskSchemas()
              .validated(lazy.riskSchemas().risksSchema, body, 'a risks report') as unknown as RisksReport,
          ];
        }
        const width = lazy.output().wrapWidth(context.environment.stdout, context.environment.env);
        context.print(options.allNamespaces ? { reports } : reports[0], () =>
          lazy.renderRisks().renderRisksTable(reports, context.style(), width),
        );
        context.setExitCode(risksExitCode(reports, options.failOn));
      },
    );
}

async function readPolicies(filenames: readonly string[], readStdin: () => Promise<string>) {
  const objects = [];
  for (const file of filenames) {
    let content: string;
    try {
      content = file === '-' ? await readStdin() : await readFile(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw usageError(`-f ${file}: no such file`);
      throw unavailableError(`cannot read ${file}: ${errorMessage(error)}`);
    }
    const parsed = lazy.manifestParsing().parseManifest(file, content);
    if (parsed.problems.length > 0)
      throw usageError(
        parsed.problems.map((problem) => `${problem.file}:${problem.line}: ${problem.message}`).join('\n'),
      );
    objects.push(...parsed.objects);
  }
  try {
    return lazy.impact().proposedObjectsOf({ objects });
  } catch (error) {
    if (error instanceof lazy.impact().ImpactRequestError) throw usageError(error.message);
    throw error;
  }
}

export function addImpactCommand(program: Command, context: RiskCommandContext): void {
  program
    .command('impact')
    .description(
      'which running workloads proposed policies would newly reject or warn about, before applying them (exit 0; with --fail-on: 1 newly warned, 3 newly rejected)',
    )
    .requiredOption('-f, --filename <path...>', 'policy manifest files; - reads standard input')
    .option(
      '--manifests <dir>',
      'evaluate offline against this directory of cluster manifests instead of a controller',
    )
    .addOption(failOnOption())
    .action(async (options: { filename: string[]; manifests?: string; failOn: FailOn }) => {
      manifestsOrUrl(program, options.manifests);
      const objects = await readPolicies(options.filename, context.environment.readStdin);
      let report: ImpactReport;
      if (options.manifests !== undefined) {
        const cluster = await evaluatedOffline(options.manifests);
        report = await lazy.impact().computeImpact(
          {
            index: cluster.index,
            ingestor: cluster.ingestor,
            workloads: (namespaces) => cluster.risks.keptWorkloads(namespaces),
            objectOf: (identity) => cluster.risks.objectOf(identity),
          },
          objects,
        );
      } else {
        const body = await context.controller().postJson('/api/v1/impact', { objects });
        report = lazy
          .riskSchemas()
          .validated(lazy.riskSchemas().impactSchema, body, 'an impact report') as unknown as ImpactReport;
      }
      const width = lazy.output().wrapWidth(context.environment.stdout, context.environment.env);
      context.print(report, () => lazy.renderRisks().renderImpactTable(report, context.style(), width));
      context.setExitCode(
        options.failOn === 'never'
          ? EXIT_CODES.ok
          : checkExitCode(report.newlyRejectedCount, report.newlyWarnedCount, options.failOn),
      );
    });
}
