import { readFileSync } from 'node:fs';
import path from 'node:path';

// What ships is what is tested (docs/decisions.md, "The image's Node.js"): the Node.js release of the
// container image (the Dockerfile's NODE_IMAGE) is the one CI fetches and runs the suite on
// (tools/fetch-image-node.sh, .ci/image-node), to the patch version; package.json's engines admits it
// and the Node these tests run on; docs/deploy.md names the same image.

const ROOT = path.join(__dirname, '../../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** `22.23.3` from `ARG NODE_IMAGE=node:22.23.3-bookworm-slim` (a digest may follow the tag). */
function imageNodeVersion(dockerfile: string): string {
  const match = /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-bookworm-slim(@sha256:[0-9a-f]{64})?$/m.exec(
    dockerfile,
  );
  if (!match?.[1])
    throw new Error('the Dockerfile has no `ARG NODE_IMAGE=node:X.Y.Z-bookworm-slim` line (a full version)');
  return match[1];
}

/** The version tools/fetch-image-node.sh fetches and CI's image-node tier runs on. */
function fetchedNodeVersion(script: string): string {
  const match = /^readonly IMAGE_NODE_VERSION=(\d+\.\d+\.\d+)$/m.exec(script);
  if (!match?.[1])
    throw new Error('tools/fetch-image-node.sh has no `readonly IMAGE_NODE_VERSION=X.Y.Z` line');
  return match[1];
}

type Version = [number, number, number];

function parseVersion(text: string): Version {
  const parts = text.replace(/^v/, '').split('.').map(Number);
  while (parts.length < 3) parts.push(0);
  if (parts.length !== 3 || parts.some((part) => !Number.isInteger(part) || part < 0))
    throw new Error(`not a version: ${text}`);
  return parts as Version;
}

function compare(left: Version, right: Version): number {
  for (let index = 0; index < 3; index += 1) {
    const difference = left[index]! - right[index]!;
    if (difference !== 0) return difference;
  }
  return 0;
}

/**
 * Whether `version` satisfies an engines range of the form `>=A.B[.C] <D[.E[.F]]`, the form this
 * package uses; any other form is an error here rather than a guess.
 */
function satisfiesEngines(range: string, version: string): boolean {
  const match = /^>=\s*(\d+(?:\.\d+){0,2})\s+<\s*(\d+(?:\.\d+){0,2})$/.exec(range.trim());
  if (!match?.[1] || !match[2])
    throw new Error(`engines.node "${range}" is not of the form ">=A.B <C" this test understands`);
  const checked = parseVersion(version);
  return compare(checked, parseVersion(match[1])) >= 0 && compare(checked, parseVersion(match[2])) < 0;
}

const imageVersion = imageNodeVersion(read('Dockerfile'));
const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;

describe("the image's Node.js", () => {
  it('is the release CI fetches and runs the suite on, to the patch version', () => {
    expect(fetchedNodeVersion(read('tools/fetch-image-node.sh'))).toBe(imageVersion);
  });

  it('is a release package.json engines admits, as is the Node running these tests', () => {
    expect({ version: imageVersion, admitted: satisfiesEngines(engines, imageVersion) }).toEqual({
      version: imageVersion,
      admitted: true,
    });
    expect({ version: process.version, admitted: satisfiesEngines(engines, process.version) }).toEqual({
      version: process.version,
      admitted: true,
    });
  });

  it('is the image docs/deploy.md names', () => {
    expect(read('docs/deploy.md')).toContain(`\`node:${imageVersion}-bookworm-slim\``);
  });
});

describe('reading the versions', () => {
  it('takes the full version from the Dockerfile line, with or without a digest', () => {
    expect(imageNodeVersion('FROM x\nARG NODE_IMAGE=node:22.23.3-bookworm-slim\n')).toBe('22.23.3');
    const digest = `@sha256:${'a'.repeat(64)}`;
    expect(imageNodeVersion(`ARG NODE_IMAGE=node:22.4.0-bookworm-slim${digest}\n`)).toBe('22.4.0');
    expect(() => imageNodeVersion('ARG NODE_IMAGE=node:22-bookworm-slim\n')).toThrow(/full version/);
  });

  it('checks both bounds of an engines range and refuses a form it does not know', () => {
    expect(satisfiesEngines('>=20.19 <23', 'v20.19.0')).toBe(true);
    expect(satisfiesEngines('>=20.19 <23', 'v22.23.3')).toBe(true);
    expect(satisfiesEngines('>=20.19 <23', 'v20.18.3')).toBe(false);
    expect(satisfiesEngines('>=20.19 <23', 'v23.0.0')).toBe(false);
    expect(() => satisfiesEngines('^20 || ^22', 'v22.0.0')).toThrow(/not of the form/);
  });
});
