import { Argument, Command, CommanderError, Option } from 'commander';
import { addFlags, applyEnvironment, flag, flagValues, UsageError } from '../flags/command-line';
import { isDns1123Label } from '../model/kubernetes';
import { packageVersion } from '../model/package-version';
import type { CheckCommandResult } from './check-command';
import type { ControllerApi } from './controller-api';
import {
  CliError,
  EXIT_CODES,
  exitCodesHelp,
  FAIL_ON_LEVELS,
  usageError,
  type ExitCode,
  type FailOn,
} from './exit-codes';
import type { OutputStream, Style } from './output';
import {
  CHECK_OUTPUT_FORMATS,
  isCheckOutputFormat,
  OUTPUT_FORMATS,
  type CheckOutputFormat,
  type OutputFormat,
} from './output-formats';
import { COLOUR_MODES, decideColour, type ColourMode } from './colour-mode';
import { COMPLETION_SHELLS, type CompletionShell } from './completion';
import { errorMessage } from '../model/error-message';
import { parseBoolean } from '../flags/values';
import { lazy } from './lazy-modules';
import { withoutTerminalControls } from './terminal-text';
import { ParamKindError, parseParamKinds, type ParamKindResource } from '../model/param-kinds';
import { addImpactCommand, addRisksCommand } from './risks-command';

// `forewarn`: the command line of Forewarn (docs/cli.md). Runs against an injected environment
// (argv, streams, env) and returns the exit code, so tests and main.ts share one path. Engines,
// parsers, schemas and the HTTP client are loaded inside the actions that use them (lazy-modules.ts):
// `--help` and `--version` load commander and little else (docs/benchmarks.md, start-up).

export interface CliEnvironment {
  stdout: OutputStream;
  stderr: OutputStream;
  env: NodeJS.ProcessEnv;
  readStdin(): Promise<string>;
  /** How help and errors name the program: `kubectl forewarn` when run as a kubectl plugin. */
  programName?: string;
}

/** The global flags of every subcommand. */
const GLOBAL_FLAGS = {
  url: flag({
    flags: '--url <url>',
    help: 'Forewarn controller URL (kubectl -n forewarn-system port-forward svc/forewarn-controller 8080:8080)',
    env: 'FOREWARN_URL',
    default: 'http://localhost:8080',
  }),
  output: flag({
    flags: '-o, --output <format>',
    help: 'output format',
    choices: [...OUTPUT_FORMATS, ...CHECK_OUTPUT_FORMATS],
    default: 'table' as OutputFormat | CheckOutputFormat,
  }),
  color: flag({
    flags: '--color <when>',
    help: 'colour tables: auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR forces it), always or never',
    choices: COLOUR_MODES,
    default: 'auto' as ColourMode,
  }),
  timeout: flag({ flags: '--timeout <seconds>', help: 'how long to wait for the controller', default: '10' }),
  asMe: flag({
    flags: '--as-me [enabled]',
    help: "send the current kubeconfig context's credentials, so the controller shows in full what your own RBAC lets you get (docs/cli.md)",
    env: 'FOREWARN_AS_ME',
    parse: parseBoolean,
    default: false,
    preset: 'true',
  }),
};

function parseTimeoutSeconds(value: string): number {
  const seconds = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || seconds <= 0)
    throw usageError(`--timeout expects seconds, got ${JSON.stringify(value)}`);
  return seconds * 1000;
}

function requireNamespace(namespace: string): string {
  if (!isDns1123Label(namespace))
    throw usageError(
      `invalid namespace ${JSON.stringify(namespace)}: lowercase letters, digits and "-", at most 63 characters`,
    );
  return namespace;
}

/** What the subcommands share: the streams, the controller client, output and the exit code. */
interface ProgramContext {
  environment: CliEnvironment;
  controller: () => ControllerApi;
  print: (value: unknown, table: () => string) => void;
  style: () => Style;
  outputFormat: () => OutputFormat | CheckOutputFormat;
  setExitCode: (code: ExitCode) => void;
}

function paramKindsOption(value: string): ParamKindResource[] {
  try {
    return parseParamKinds(value);
  } catch (error) {
    if (error instanceof ParamKindError) throw usageError(`--param-kinds: ${error.message}`);
    throw error;
  }
}

/** What the check ran without or is unsure of, on stderr: the report itself stays on stdout. */
function writeCheckNotes(result: CheckCommandResult, stderr: OutputStream): void {
  for (const problem of result.clusterProblems)
    stderr.write(`warning: ${problem} (its objects are not part of the check)\n`);
  for (const skipped of result.skippedFiles)
    stderr.write(`note: ${skipped.file}: skipped, ${skipped.reason}\n`);
  for (const unknown of result.unknownNamespaces) stderr.write(`warning: ${unknown.message}\n`);
}

/** `check`'s output: notes on stderr, then the CI format, or the table/JSON/YAML, and the exit code. */
function printCheckResult(result: CheckCommandResult, context: ProgramContext): void {
  writeCheckNotes(result, context.environment.stderr);
  const format = context.outputFormat();
  if (isCheckOutputFormat(format)) {
    const { renderCheckFormat } = lazy.ciFormats();
    context.environment.stdout.write(renderCheckFormat(format, result, packageVersion()));
    return;
  }
  const critical = result.reports.reduce((sum, report) => sum + report.criticalCount, 0);
  const warnings = result.reports.reduce((sum, report) => sum + report.warningCount, 0);
  const data = {
    reports: result.reports,
    criticalCount: critical,
    warningCount: warnings,
    skippedFiles: result.skippedFiles,
    unknownNamespaces: result.unknownNamespaces,
  };
  context.print(data, () =>
    lazy
      .renderCheck()
      .renderCheckTable(
        result.reports,
        context.style(),
        lazy.output().wrapWidth(context.environment.stdout, context.environment.env),
      ),
  );
}

function addCheckCommand(program: Command, context: ProgramContext): void {
  program
    .command('check')
    .description(
      'what the cluster will do with manifests, without applying them (exit 0 nothing found, 1 audited, warned or not evaluated, 3 will be rejected)',
    )
    .addHelpText('after', `\n${exitCodesHelp()}`)
    .option(
      '-f, --filename <path...>',
      'manifest file or directory to check; - reads standard input (files of Helm and Kustomize in a directory are skipped with a note)',
    )
    .option(
      '-k, --kustomize <dir>',
      'not rendered here: pipe the rendering instead, kustomize build DIR | forewarn check -f -',
    )
    .option(
      '--manifests <dir>',
      'check offline against this directory of cluster manifests instead of a controller',
    )
    .option(
      '--param-kinds <resources>',
      'with --manifests: custom resources (group/version/plural, comma-separated) whose objects in DIR ValidatingAdmissionPolicies use as params, as the controller flag',
    )
    .option('-n, --namespace <namespace>', 'namespace for objects that set none (as kubectl apply -n)')
    .addOption(
      new Option('--fail-on <level>', 'lowest finding that fails the check')
        .choices(FAIL_ON_LEVELS)
        .default('warning'),
    )
    .action(
      async (options: {
        filename?: string[];
        kustomize?: string;
        manifests?: string;
        paramKinds?: string;
        namespace?: string;
        failOn: FailOn;
      }) => {
        if (options.manifests !== undefined && program.getOptionValueSource('url') === 'cli')
          throw usageError(
            '--manifests and --url are alternatives: check offline against a directory, or ask a controller',
          );
        if (options.paramKinds !== undefined && options.manifests === undefined)
          throw usageError('--param-kinds goes with --manifests (a controller has its own --param-kinds)');
        // No kustomize library renders as kustomize does (generators, components, remote bases):
        // the real tool's output, piped, is the only rendering the API server would see.
        if (options.kustomize !== undefined)
          throw usageError(
            `forewarn does not render kustomizations; pipe kustomize's own rendering: kustomize build ${options.kustomize} | forewarn check -f -`,
          );
        if (options.filename === undefined)
          throw usageError("required option '-f, --filename <path...>' not specified");
        const { runCheck } = lazy.checkCommand();
        const result = await runCheck({
          filenames: options.filename,
          manifests: options.manifests,
          paramKinds: options.paramKinds === undefined ? [] : paramKindsOption(options.paramKinds),
          namespace: options.namespace === undefined ? undefined : requireNamespace(options.namespace),
          failOn: options.failOn,
          controller: context.controller,
          readStdin: context.environment.readStdin,
        });
        printCheckResult(result, context);
        context.setExitCode(result.exitCode);
      },
    );
}

/** `report` and `get`: views of the controller's index. */
function addViewCommands(program: Command, context: ProgramContext): void {
  const { controller, print, style } = context;
  program
    .command('report')
    .description('list every constraint that applies to a namespace')
    .option('-n, --namespace <namespace>', 'namespace', 'default')
    .action(async (options: { namespace: string }) => {
      const namespace = requireNamespace(options.namespace);
      const { parseReport } = lazy.wireSchemas();
      const report = parseReport(await controller().getJson(`resources/reports/${namespace}`));
      print(report, () =>
        lazy
          .renderViews()
          .renderReportTable(
            report,
            style(),
            lazy.output().wrapWidth(context.environment.stdout, context.environment.env),
          ),
      );
    });

  program
    .command('get')
    .description(
      'show one constraint in detail (names may contain "/", e.g. api-allow-frontend/ingress), or with --ref the constraint behind a redacted name',
    )
    .argument('[namespace]', 'namespace')
    .argument('[name]', 'constraint name')
    .option(
      '--ref <ref>',
      'the opaque reference shown for a redacted name (fw-...); needs the full detail level',
    )
    .action(
      async (namespaceArgument: string | undefined, name: string | undefined, options: { ref?: string }) => {
        const { parseConstraintView, parseReferencedConstraint } = lazy.wireSchemas();
        const { renderConstraintTable, renderReferenceTable } = lazy.renderViews();
        const { isOpaqueReference } = lazy.opaqueReference();
        if (options.ref !== undefined) {
          if (namespaceArgument !== undefined)
            throw usageError('--ref names the constraint by itself: give no namespace or name with it');
          if (!isOpaqueReference(options.ref))
            throw usageError(
              `--ref ${JSON.stringify(options.ref)} is not a reference; expected fw- and 16 hex digits`,
            );
          const referenced = parseReferencedConstraint(
            await context.controller().getJson(`resources/references/${options.ref}`),
          );
          context.print(referenced, () => renderReferenceTable(referenced, context.style()));
          return;
        }
        if (namespaceArgument === undefined || name === undefined)
          throw usageError('get needs <namespace> <name>, or --ref <ref>');
        const namespace = requireNamespace(namespaceArgument);
        const encodedName = name.split('/').map(encodeURIComponent).join('/');
        const view = parseConstraintView(
          await context.controller().getJson(`resources/constraints/${namespace}/${encodedName}`),
        );
        context.print(view, () => renderConstraintTable(view, context.style()));
      },
    );
}

function buildProgram(environment: CliEnvironment, setExitCode: (code: ExitCode) => void): Command {
  const program = new Command(environment.programName ?? 'forewarn')
    .description(
      'Shows the policies that constrain a Kubernetes namespace and the admission warnings a manifest would get.',
    )
    .version(packageVersion(), '--version', 'print the version');
  addFlags(program, GLOBAL_FLAGS)
    .addOption(new Option('--no-color', 'same as --color=never'))
    .showSuggestionAfterError()
    .addHelpText('after', `\n${exitCodesHelp()}`);

  // The environment given to runCli, not process.env, sets the global flags the command line left out.
  program.hook('preAction', (_program, action) => {
    applyEnvironment(program, GLOBAL_FLAGS, environment.env);
    const format = flagValues(program, GLOBAL_FLAGS).output;
    // Refused before any request: the CI formats describe findings, which only check has.
    if (isCheckOutputFormat(format) && action.name() !== 'check')
      throw usageError(`-o ${format} is a format of check; ${action.name()} prints table, json or yaml`);
  });
  const globals = () => flagValues(program, GLOBAL_FLAGS);
  // `--no-color` sets the value false; otherwise one of COLOUR_MODES.
  const colourMode = (): ColourMode =>
    program.getOptionValue('color') === false ? 'never' : globals().color;
  const style = () =>
    lazy.output().createStyle(decideColour(colourMode(), environment.stdout, environment.env));
  const controller = (): ControllerApi => {
    const { createControllerApi, parseControllerUrl } = lazy.controllerApi();
    const url = parseControllerUrl(globals().url);
    if (!globals().asMe) return createControllerApi(url, parseTimeoutSeconds(globals().timeout));
    const { currentContextToken, requireSafeUrlForCredentials } = lazy.kubeCredentials();
    requireSafeUrlForCredentials(url);
    return createControllerApi(url, parseTimeoutSeconds(globals().timeout), () =>
      currentContextToken(environment.env),
    );
  };
  const outputFormat = () => globals().output;
  const print = (value: unknown, table: () => string) => {
    const format = outputFormat();
    if (isCheckOutputFormat(format)) throw new Error(`-o ${format} reached print`);
    const { formatData } = lazy.output();
    environment.stdout.write(format === 'table' ? table() : formatData(value, format));
  };

  const context: ProgramContext = { environment, controller, print, style, outputFormat, setExitCode };
  addViewCommands(program, context);
  addCheckCommand(program, context);
  addRisksCommand(program, context);
  addImpactCommand(program, context);
  addCompletionCommand(program, environment);
  return program;
}

/** `completion bash|zsh|fish`: made from the program's own commands and flags (completion.ts). */
function addCompletionCommand(program: Command, environment: CliEnvironment): void {
  program
    .command('completion')
    .description('print a shell completion script (bash: source <(forewarn completion bash); docs/cli.md)')
    .addArgument(new Argument('<shell>', 'the shell').choices(COMPLETION_SHELLS))
    .action((shell: CompletionShell) => {
      const { completionScript, completionSpecOf } = lazy.completion();
      const spec = completionSpecOf(program, ['forewarn', 'kubectl-forewarn'], {
        completion: COMPLETION_SHELLS,
      });
      environment.stdout.write(completionScript(shell, spec));
    });
}

export async function runCli(argv: readonly string[], environment: CliEnvironment): Promise<ExitCode> {
  let exitCode: ExitCode = EXIT_CODES.ok;
  const program = buildProgram(environment, (code) => (exitCode = code));
  program.exitOverride();
  for (const command of [program, ...program.commands])
    command.exitOverride().configureOutput({
      writeOut: (text) => environment.stdout.write(text),
      writeErr: (text) => environment.stderr.write(text),
    });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
    if (error instanceof CliError || error instanceof UsageError) {
      const message = withoutTerminalControls(error.message);
      environment.stderr.write(`error: ${message.replace(/\n/g, '\nerror: ')}\n`);
      return error.exitCode;
    }
    const message = withoutTerminalControls(errorMessage(error));
    environment.stderr.write(`error: ${message} (this is a bug, please report it)\n`);
    return EXIT_CODES.unavailable;
  }
}
