// Our bridged pulumi-resource-tls (test/deploy/provider-tls, built by build-tools.sh) must speak the
// same package as the @pulumi/tls SDK it pairs with: every resource the SDK declares, under the SDK's
// token, with the SDK's input and output property names. The schema is the one the binary serves
// (`pulumi package get-schema`), the SDK's names are read from its declaration files with the
// TypeScript compiler, so a drift on either side fails here rather than in `pulumi up`.
import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { repositoryRoot } from '../e2e/forewarn-support';
import { PulumiWorkspace, runCommand } from './pulumi-cli';
import { deployToolDirs, requireDeployTools, toolPath } from './tools';

interface SchemaResource {
  inputProperties?: Record<string, unknown>;
  properties?: Record<string, unknown>;
}

interface PackageSchema {
  name: string;
  version?: string;
  resources: Record<string, SchemaResource>;
}

interface SdkResource {
  token: string;
  inputs: string[];
  outputs: string[];
}

const sdkDir = path.join(repositoryRoot, 'node_modules', '@pulumi', 'tls');

/** Property names of a class (readonly outputs) or interface (args) declared in a .d.ts file. */
function declaredMembers(source: ts.SourceFile, name: string): string[] {
  const members: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node)) && node.name?.text === name) {
      for (const member of node.members) {
        const isProperty = ts.isPropertyDeclaration(member) || ts.isPropertySignature(member);
        const isStatic = ts.canHaveModifiers(member)
          ? (ts.getModifiers(member) ?? []).some((m) => m.kind === ts.SyntaxKind.StaticKeyword)
          : false;
        if (isProperty && !isStatic && member.name && ts.isIdentifier(member.name)) {
          members.push(member.name.text);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return members.filter((member) => member !== 'urn' && member !== 'id').sort();
}

/** Every custom resource of the SDK: its token (from the .js) and property names (from the .d.ts). */
async function sdkResources(): Promise<SdkResource[]> {
  const resources: SdkResource[] = [];
  for (const file of (await readdir(sdkDir)).filter((entry) => entry.endsWith('.js'))) {
    const code = await readFile(path.join(sdkDir, file), 'utf8');
    const token = /\.__pulumiType = '(tls:index\/[^']+)'/.exec(code)?.[1];
    if (!token) continue;
    const className = token.split(':').pop() ?? '';
    const declarations = await readFile(path.join(sdkDir, file.replace(/\.js$/, '.d.ts')), 'utf8');
    const source = ts.createSourceFile(file, declarations, ts.ScriptTarget.Latest, false);
    resources.push({
      token,
      inputs: declaredMembers(source, `${className}Args`),
      outputs: declaredMembers(source, className),
    });
  }
  return resources.sort((a, b) => a.token.localeCompare(b.token));
}

let schema: PackageSchema;

beforeAll(async () => {
  requireDeployTools();
  const workDir = await mkdtemp(path.join(tmpdir(), 'forewarn-deploy-tls-schema-'));
  const pulumi = new PulumiWorkspace({
    workDir,
    kubeconfig: path.join(workDir, 'no-cluster'),
    binDirs: deployToolDirs(),
    passphrase: 'unused',
  });
  await pulumi.init();
  const result = await pulumi.succeed(workDir, ['package', 'get-schema', toolPath('pulumi-resource-tls')]);
  schema = JSON.parse(result.stdout) as PackageSchema;
}, 120_000);

test('the binary is the tls package at the version of the @pulumi/tls SDK', async () => {
  const sdkManifest = JSON.parse(await readFile(path.join(sdkDir, 'package.json'), 'utf8')) as {
    version: string;
  };
  // The bridge leaves the version out of the schema; the plugin reports it with -version.
  const reported = await runCommand(
    toolPath('pulumi-resource-tls'),
    ['-version'],
    repositoryRoot,
    {},
    30_000,
  );
  expect({ name: schema.name, version: reported.stdout.trim() }).toEqual({
    name: 'tls',
    version: sdkManifest.version,
  });
});

test("every SDK resource exists in the schema under the SDK's token, with the SDK's property names", async () => {
  const resources = await sdkResources();
  expect(resources.map((resource) => resource.token)).toEqual(
    expect.arrayContaining(['tls:index/privateKey:PrivateKey', 'tls:index/selfSignedCert:SelfSignedCert']),
  );
  for (const resource of resources) {
    const served = schema.resources[resource.token];
    expect({ token: resource.token, served: served !== undefined }).toEqual({
      token: resource.token,
      served: true,
    });
    expect({ token: resource.token, inputs: Object.keys(served.inputProperties ?? {}).sort() }).toEqual({
      token: resource.token,
      inputs: resource.inputs,
    });
    expect({ token: resource.token, outputs: Object.keys(served.properties ?? {}).sort() }).toEqual({
      token: resource.token,
      outputs: resource.outputs,
    });
  }
});
