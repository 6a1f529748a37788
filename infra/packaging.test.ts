import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CONTROLLER_COMMAND } from './controller';
import { CONTROLLER_NODE_FLAGS, PROCESS_NODE_FLAGS, WEBHOOK_NODE_FLAGS } from './node-flags';

// The image runs the controller and the webhook only: the Pulumi packages (about 39 MB) are for the
// component's users, who install them next to `forewarn` (peer dependencies). The base image is
// pinned so a rebuild gives the same image.

const REPO = path.resolve(__dirname, '..');

interface PackageManifest {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const manifest = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as PackageManifest;
const dockerfile = readFileSync(path.join(REPO, 'Dockerfile'), 'utf8');

describe('packaging', () => {
  const pulumiPackages = ['@pulumi/kubernetes', '@pulumi/pulumi', '@pulumi/tls'];

  it('declares the Pulumi packages as peer (and dev) dependencies, not runtime ones', () => {
    for (const name of pulumiPackages) {
      expect(manifest.dependencies).not.toHaveProperty(name);
      expect(manifest.peerDependencies).toHaveProperty(name);
    }
  });

  it('develops against exact Pulumi versions, the oldest that the peer ranges allow', () => {
    // The dev versions pair with the provider binaries the deploy tier builds (docs/e2e.md); users get
    // the wider peer range, whose floor is exactly what the tier tested.
    for (const name of pulumiPackages) {
      const tested = manifest.devDependencies[name];
      expect({ name, tested }).toEqual({ name, tested: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
      expect([tested, `^${tested}`]).toContain(manifest.peerDependencies?.[name]);
    }
    expect(manifest.devDependencies['@pulumi/kubernetes']).toBe('4.25.0');
    expect(manifest.devDependencies['@pulumi/tls']).toBe('5.3.0');
  });

  it('leaves peer dependencies out of the runtime image', () => {
    const runtimeInstall = dockerfile.split(/^FROM .* AS runtime$/m)[1];
    expect(runtimeInstall).toMatch(/npm ci [^\n]*--omit=dev[^\n]*--omit=peer/);
  });

  it('pins the base image to a full Node version', () => {
    const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
    expect(base).toMatch(/^node:\d+\.\d+\.\d+-bookworm-slim(@sha256:[0-9a-f]{64})?$/);
  });

  it('pins the Go image that builds opa to a full version too', () => {
    const go = /^ARG GO_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
    expect(go).toMatch(/^golang:\d+\.\d+\.\d+-bookworm(@sha256:[0-9a-f]{64})?$/);
  });

  it('starts each process with its Node flags of infra/node-flags.ts', () => {
    const flags = WEBHOOK_NODE_FLAGS.join(' ');
    expect(dockerfile).toContain(`exec node ${flags} /app/dist/services/webhook/main.js "$@"`);
    const command = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(JSON.parse(command ?? '[]')).toEqual(CONTROLLER_COMMAND);
    expect(CONTROLLER_COMMAND).toEqual([
      'node',
      ...CONTROLLER_NODE_FLAGS,
      '/app/dist/services/controller/main.js',
    ]);
  });

  // Node exits with "bad option" on a V8 flag its release does not know (Node 20's
  // `--memory-reducer-single-gc` is Node 22's `--memory-reducer-gc-count`): the suite runs under the
  // development Node and again under the image's (.ci/image-node), so each flag is checked on both.
  it.each([
    ['controller', CONTROLLER_NODE_FLAGS],
    ['webhook', WEBHOOK_NODE_FLAGS],
  ])('the %s’s flags are accepted by this Node release', (_process, flags) => {
    expect(
      execFileSync(process.execPath, [...flags, '-e', 'process.stdout.write("started")'], {
        encoding: 'utf8',
      }),
    ).toBe('started');
  });

  it('gives V8 a young generation that starts at its 16 MiB ceiling with those flags', () => {
    // On the command line, as the image passes them: Node refuses this flag in NODE_OPTIONS.
    const newSpaceBytes = (flags: readonly string[]) =>
      Number(
        execFileSync(
          process.execPath,
          [
            ...flags,
            '-e',
            'const v8 = require("v8"); const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space"); process.stdout.write(String(space.space_size))',
          ],
          { encoding: 'utf8' },
        ),
      );
    expect(newSpaceBytes(PROCESS_NODE_FLAGS)).toBeGreaterThanOrEqual(16 * 1024 * 1024);
    expect(newSpaceBytes([])).toBeLessThan(16 * 1024 * 1024);
  });
});
