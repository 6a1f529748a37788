// The PolicyReport CRDs (wgpolicyk8s.io/v1alpha2) as Kyverno ships them, read at test time from the
// Kyverno module the Go toolchain holds (never copied into the repository), as bench/lib/gatekeeper-
// webhook.js reads Gatekeeper's: `go mod download` answers from the module cache without a network.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

const KYVERNO_MODULE = 'github.com/kyverno/kyverno';
const KYVERNO_VERSION = process.env.FOREWARN_KYVERNO_VERSION ?? 'v1.19.1';

/** The module's directory: FOREWARN_KYVERNO_MODULE_DIR, else what `go mod download -json` says. */
function kyvernoModuleDirectory(): string {
  const configured = process.env.FOREWARN_KYVERNO_MODULE_DIR;
  if (configured) return configured;
  let answer: string;
  try {
    answer = execFileSync('go', ['mod', 'download', '-json', `${KYVERNO_MODULE}@${KYVERNO_VERSION}`], {
      encoding: 'utf8',
      env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' },
    });
  } catch (error) {
    throw new Error(
      `the Kyverno module ${KYVERNO_MODULE}@${KYVERNO_VERSION} (its PolicyReport CRDs) could not be found with go mod download; set FOREWARN_KYVERNO_MODULE_DIR: ${String(error)}`,
    );
  }
  const { Dir } = JSON.parse(answer) as { Dir?: string };
  if (!Dir) throw new Error(`go mod download named no directory for ${KYVERNO_MODULE}@${KYVERNO_VERSION}`);
  return Dir;
}

/** Kyverno's config/crds/policyreport/*.yaml, as one multi-document YAML text for `kubectl apply`. */
export function policyReportCrdsYaml(): string {
  const directory = path.join(kyvernoModuleDirectory(), 'config', 'crds', 'policyreport');
  const files = readdirSync(directory).filter((file) => file.endsWith('.yaml'));
  const texts = files.map((file) => readFileSync(path.join(directory, file), 'utf8'));
  const kinds = texts.flatMap((text) =>
    parseAllDocuments(text).map(
      (document) => (document.toJSON() as { spec?: { names?: { kind?: string } } })?.spec?.names?.kind,
    ),
  );
  if (!kinds.includes('PolicyReport') || !kinds.includes('ClusterPolicyReport'))
    throw new Error(`${directory} does not hold both PolicyReport CRDs (found ${kinds.join(', ')})`);
  return texts.map((text) => text.replace(/^---\s*\n/, '')).join('\n---\n');
}
