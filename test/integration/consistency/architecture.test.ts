// The import rules of docs/architecture.md, checked on the sources (tests, fixtures and bench are
// free to reach across layers): every import goes in an allowed direction, and no module imports
// itself back through others.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * Which areas each area may import (besides itself). An area is a folder of services/ (controller
 * split into its sub-folders; controller/ for its top-level files) or infra/. Keep in step with the
 * table in docs/architecture.md.
 */
const ALLOWED: Record<string, readonly string[]> = {
  model: [],
  // How a worker thread starts (from a build, or from the sources under jest): imports nothing of ours.
  threads: [],
  logging: ['model'],
  net: ['model', 'logging'],
  flags: ['model', 'logging'],
  'controller/adapters': ['model'],
  'controller/index': ['model', 'controller/adapters'],
  'controller/missing': ['model', 'controller/index'],
  'controller/sources': ['model', 'logging', 'threads', 'controller/adapters'],
  'controller/views': ['model', 'controller/index', 'controller/sources'],
  'controller/verdicts': ['model', 'threads', 'controller/index', 'controller/views'],
  'controller/check': [
    'model',
    'controller/index',
    'controller/sources',
    'controller/views',
    'controller/verdicts',
  ],
  // Workloads at risk and impact (issue 35): the admission check's evaluation over the inventory;
  // impact's requests share check's per-request CPU budget (check/request-budget.ts).
  'controller/risks': [
    'model',
    'controller/index',
    'controller/views',
    'controller/verdicts',
    'controller/check',
  ],
  'controller/http': [
    'model',
    'logging',
    'net',
    'controller/index',
    'controller/views',
    'controller/sources',
    'controller/verdicts',
    'controller/risks',
    'controller/check',
  ],
  'controller/mcp': [
    'model',
    'logging',
    'net',
    'controller/index',
    'controller/views',
    'controller/check',
    'controller/http',
    'controller/sources',
    'controller/verdicts',
    'controller/risks',
  ],
  controller: [
    'model',
    'logging',
    'net',
    'flags',
    ...['adapters', 'index', 'missing', 'sources', 'views', 'verdicts', 'check', 'risks', 'http', 'mcp'].map(
      (folder) => `controller/${folder}`,
    ),
  ],
  webhook: ['model', 'logging', 'net', 'flags'],
  // The CLI runs the controller's check core offline; it reads objects as the webhook does through
  // the model (model/admission-review.ts), never through the webhook's code.
  cli: [
    'model',
    'logging',
    'flags',
    ...['adapters', 'index', 'missing', 'sources', 'views', 'check', 'risks'].map(
      (folder) => `controller/${folder}`,
    ),
  ],
  // The Pulumi policy pack (policy-pack/ in the package) is another front end of the CLI's check:
  // it runs `forewarn check`'s lookups and texts inside `pulumi preview`.
  'policy-pack': [
    'model',
    'logging',
    'cli',
    ...['adapters', 'index', 'missing', 'sources', 'views', 'check'].map((folder) => `controller/${folder}`),
  ],
  // Infra ships as a package: it may use the model and the flag value rules, never a service.
  infra: ['model', 'flags'],
};

function areaOf(file: string): string {
  const [top, folder, sub, ...rest] = path.relative(ROOT, file).split(path.sep);
  if (top === 'infra') return 'infra';
  if (folder === 'controller')
    return rest.length > 0 || (sub && !sub.endsWith('.ts')) ? `controller/${sub}` : 'controller';
  return folder;
}

function sourceFiles(directory: string): string[] {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** Relative imports of a file, resolved to the files they name. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map((imported) => imported.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => {
      const target = path.resolve(path.dirname(file), name.replace(/\.js$/, ''));
      return fs.existsSync(`${target}.ts`) ? `${target}.ts` : path.join(target, 'index.ts');
    });
}

const files = [...sourceFiles(path.join(ROOT, 'services')), ...sourceFiles(path.join(ROOT, 'infra'))];
const graph = new Map(files.map((file) => [file, importsOf(file)]));
const relative = (file: string) => path.relative(ROOT, file);

describe('architecture (docs/architecture.md)', () => {
  it('knows the area of every source file', () => {
    const unknown = [...new Set(files.map(areaOf))].filter((area) => !(area in ALLOWED));
    expect(unknown).toEqual([]);
  });

  it('imports only in the allowed directions', () => {
    const violations: string[] = [];
    for (const [file, imports] of graph)
      for (const target of imports) {
        const from = areaOf(file);
        const to = areaOf(target);
        if (from !== to && !ALLOWED[from]?.includes(to))
          violations.push(`${relative(file)} (${from}) imports ${relative(target)} (${to})`);
      }
    expect(violations).toEqual([]);
  });

  it('has no import cycle', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, trail: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...trail.slice(trail.indexOf(file)), file].map(relative).join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const target of graph.get(file) ?? []) visit(target, [...trail, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });
});
