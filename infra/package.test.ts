// The component as a package: its Pulumi schema (multi-language readiness, read from the TypeScript
// source by ComponentProvider.getSchema), construction through the provider as another language would,
// and `import { Forewarn } from 'forewarn'` from both CommonJS and ESM programs.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ComponentProvider } from '@pulumi/pulumi/provider/experimental';
import * as ts from 'typescript';
import { Forewarn } from './';
import { installMocks, settle, valueOf } from '../test/support/infra-harness';

const REPO = path.resolve(__dirname, '..');
const INFRA = path.join(REPO, 'infra');

interface SchemaProperty {
  type?: string;
  $ref?: string;
  description?: string;
  enum?: Array<{ name: string; value: string }>;
}
interface SchemaType {
  type: string;
  properties?: { [name: string]: SchemaProperty };
  enum?: Array<{ name: string; value: string }>;
  description?: string;
}
interface PulumiSchema {
  name: string;
  resources: {
    [token: string]: {
      isComponent: boolean;
      inputProperties: { [name: string]: SchemaProperty };
      properties: { [name: string]: SchemaProperty };
      description?: string;
    };
  };
  types: { [token: string]: SchemaType };
}

let workDir: string;

beforeAll(() => {
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forewarn-package-'));
});

afterAll(() => {
  fs.rmSync(workDir, { recursive: true, force: true });
});

/**
 * The analyzer reads `package.json` and `tsconfig.json` in its directory and maps the package entry
 * (`main`, with .js -> .ts) to a source file. The repository's entry points at the compiled
 * dist/infra/index.js, so the test hands it a manifest whose entry is the source itself, exactly what a
 * source-based plugin directory contains (see docs/deploy.md, "Other languages").
 */
function schemaDirectory(): string {
  const dir = path.join(workDir, 'schema');
  fs.mkdirSync(dir, { recursive: true });
  const version = (
    JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }
  ).version;
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'forewarn', version, main: path.join(INFRA, 'index.js') }),
  );
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: path.join(REPO, 'tsconfig.json'),
      compilerOptions: { types: ['node'] },
      files: [path.join(INFRA, 'index.ts')],
      include: [],
    }),
  );
  return dir;
}

describe('Pulumi schema (ComponentProvider.getSchema)', () => {
  let provider: ComponentProvider;
  let schema: PulumiSchema;

  beforeAll(async () => {
    provider = new ComponentProvider({
      components: [Forewarn],
      dirname: schemaDirectory(),
      name: 'forewarn',
    });
    schema = JSON.parse(await provider.getSchema()) as PulumiSchema;
  }, 120_000);

  it('describes the component forewarn:index:Forewarn with its inputs and outputs', () => {
    const component = schema.resources['forewarn:index:Forewarn'];
    expect(component.isComponent).toBe(true);
    expect(Object.keys(component.inputProperties).sort()).toEqual(
      [
        'admissionWebhook',
        'annotations',
        'controller',
        'imagePullSecrets',
        'images',
        'labels',
        'namespace',
        'nodeSelector',
        'priorityClassName',
        'tolerations',
      ].sort(),
    );
    expect(Object.keys(component.properties).sort()).toEqual(
      [
        'caCertificate',
        'controllerServiceName',
        'namespace',
        'portForwardCommand',
        'tlsSecretName',
        'webhookConfigurationName',
        'webhookServiceName',
      ].sort(),
    );
    expect(component.description).toMatch(/admission warnings that never block/);
  });

  it('exposes the closed sets as enums with their values', () => {
    const values = (token: string): string[] =>
      (schema.types[token].enum ?? []).map((member) => member.value);
    expect(values('forewarn:index:CertManagement')).toEqual(['self-signed', 'managed']);
    expect(values('forewarn:index:DetailLevel')).toEqual(['summary', 'detailed', 'full']);
    expect(values('forewarn:index:FailurePolicy')).toEqual(['Ignore', 'Fail']);
    expect(values('forewarn:index:IssuerKind')).toEqual(['ClusterIssuer', 'Issuer']);
  });

  it('documents every argument, and the default of every *Args field', () => {
    const undocumented: string[] = [];
    const inputs = schema.resources['forewarn:index:Forewarn'].inputProperties;
    const check = (owner: string, properties: { [name: string]: SchemaProperty }): void => {
      for (const [name, property] of Object.entries(properties)) {
        const needsDefault = owner.endsWith('Args');
        if (!property.description || (needsDefault && !property.description.includes('Default'))) {
          undocumented.push(`${owner}.${name}`);
        }
      }
    };
    check('ForewarnArgs', inputs);
    for (const [token, type] of Object.entries(schema.types)) {
      if (type.properties) {
        check(token.split(':')[2], type.properties);
      }
    }
    expect(undocumented).toEqual([]);
    expect(
      schema.types['forewarn:index:AdmissionWebhookArgs'].properties?.timeoutSeconds.description,
    ).toMatch(/1 to 9\. Default: 5/);
  });

  it('constructs the component from plain inputs, as another language would', async () => {
    const registered = installMocks();
    const result = await provider.construct(
      'from-python',
      'forewarn:index:Forewarn',
      {
        admissionWebhook: {
          certManagement: 'managed',
          certIssuer: { issuerName: 'ca', issuerKind: 'ClusterIssuer' },
        },
      },
      {},
    );
    const state = result.state as { [name: string]: import('@pulumi/pulumi').Output<unknown> };
    expect(await valueOf(state.webhookConfigurationName)).toBe('from-python-webhook');
    await settle(registered);
    expect(registered.some((r) => r.type === 'kubernetes:cert-manager.io/v1:Certificate')).toBe(true);
  });
});

/**
 * Builds a copy of the package as npm would install it: package.json + CommonJS dist/infra and the
 * dist/services/model and dist/services/flags it imports (infra may import these, never a service:
 * docs/architecture.md).
 */
function installedPackage(): string {
  const pkg = path.join(workDir, 'forewarn');
  fs.mkdirSync(pkg, { recursive: true });
  fs.copyFileSync(path.join(REPO, 'package.json'), path.join(pkg, 'package.json'));
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(pkg, 'node_modules'), 'dir');
  for (const folder of ['infra', path.join('services', 'model'), path.join('services', 'flags')]) {
    const out = path.join(pkg, 'dist', folder);
    fs.mkdirSync(out, { recursive: true });
    const sources = fs
      .readdirSync(path.join(REPO, folder))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'stack.ts');
    for (const file of sources) {
      const source = fs.readFileSync(path.join(REPO, folder, file), 'utf8');
      const { outputText } = ts.transpileModule(source, {
        compilerOptions: {
          module: ts.ModuleKind.CommonJS,
          target: ts.ScriptTarget.ES2022,
          esModuleInterop: true,
        },
      });
      fs.writeFileSync(path.join(out, file.replace(/\.ts$/, '.js')), outputText);
    }
  }
  const consumer = path.join(workDir, 'consumer');
  fs.mkdirSync(path.join(consumer, 'node_modules'), { recursive: true });
  fs.symlinkSync(pkg, path.join(consumer, 'node_modules', 'forewarn'), 'dir');
  return consumer;
}

describe('package entry', () => {
  let consumer: string;
  beforeAll(() => {
    consumer = installedPackage();
  });

  const run = (args: string[]): string =>
    execFileSync(process.execPath, args, { cwd: consumer, encoding: 'utf8', timeout: 60_000 }).trim();

  it('works from an ESM program: import { Forewarn } from "forewarn"', () => {
    const output = run([
      '--input-type=module',
      '-e',
      "import { Forewarn, CertManagement, DetailLevel, FailurePolicy } from 'forewarn';" +
        'console.log(typeof Forewarn, CertManagement.Managed, DetailLevel.Full, FailurePolicy.Ignore);',
    ]);
    expect(output).toBe('function managed full Ignore');
  }, 60_000);

  it('works from a CommonJS program: require("forewarn")', () => {
    const output = run([
      '-e',
      "const { Forewarn, CertManagement } = require('forewarn'); console.log(typeof Forewarn, CertManagement.SelfSigned);",
    ]);
    expect(output).toBe('function self-signed');
  }, 60_000);
});
