import { answerResourceRequest } from '../http/resource-requests';
import { buildNamespaceReport } from './report';
import { buildConstraintList } from './constraint-list';
import { ConstraintIndex } from '../index/constraint-index';
import { Ingestor, ParseErrorCounter } from '../index/ingest';
import { AdapterRegistry } from '../adapters/registry';
import { formatWarning } from '../../model/warnings';
import type { DetailLevel } from '../../model/api';
import { demoClusterObjects, FIXED_NOW, runtimeStateFor } from '../../../test/support/controller-fixtures';

// Issue 22: a redacted constraint carries a stable opaque reference (keyed hash, per-installation
// key) in reports, list entries and warnings, and a caller entitled to `full` can look it up.

const KEY = Buffer.from('the installation key of this test, 32+ bytes', 'utf8');

function demoIndex(key: Uint8Array = KEY) {
  const index = new ConstraintIndex({ opaqueReferenceKey: key });
  const parseErrors = new ParseErrorCounter();
  const ingestor = new Ingestor(index, new AdapterRegistry(), parseErrors, undefined, () => FIXED_NOW);
  for (const object of demoClusterObjects()) ingestor.upsert(object);
  return { index, ingestor, parseErrors };
}

function lookup(cluster: ReturnType<typeof demoIndex>, ref: unknown, level: DetailLevel) {
  return answerResourceRequest(
    {
      index: cluster.index,
      runtimeState: () => runtimeStateFor(cluster),
      configuredDetailLevel: level,
      clock: () => FIXED_NOW,
    },
    { resource: 'references', params: { ref } },
  );
}

describe('opaque references of redacted constraints', () => {
  const cluster = demoIndex();
  const summary = buildNamespaceReport(cluster.index, 'shop', 'summary', FIXED_NOW);
  const redacted = summary.constraints.filter((entry) => entry.name === 'redacted');

  it('give every redacted report entry its own reference, and none to names shown', () => {
    expect(redacted.length).toBeGreaterThan(3);
    for (const entry of redacted) expect(entry.ref).toMatch(/^fw-[0-9a-f]{16}$/);
    expect(new Set(redacted.map((entry) => entry.ref)).size).toBe(redacted.length);
    for (const entry of summary.constraints.filter((each) => each.name !== 'redacted'))
      expect(entry.ref).toBeUndefined();
    const full = buildNamespaceReport(cluster.index, 'shop', 'full', FIXED_NOW);
    expect(full.constraints.every((entry) => entry.ref === undefined)).toBe(true);
  });

  it('are stable for one key across restarts and differ under another key', () => {
    const again = buildNamespaceReport(demoIndex().index, 'shop', 'summary', FIXED_NOW);
    expect(again.constraints.map((entry) => entry.ref)).toEqual(
      summary.constraints.map((entry) => entry.ref),
    );
    const other = buildNamespaceReport(
      demoIndex(Buffer.from('another installation key, 32 bytes')).index,
      'shop',
      'summary',
      FIXED_NOW,
    );
    const otherRefs = new Set(other.constraints.map((entry) => entry.ref).filter(Boolean));
    expect(redacted.some((entry) => otherRefs.has(entry.ref))).toBe(false);
  });

  it('travel in list entries and in the warning text, where shortening cannot cut them', () => {
    const listed = buildConstraintList(cluster.index, { namespace: 'shop' }, [], 'summary').constraints;
    const entry = listed.find((each) => each.name === 'redacted' && each.severity !== 'Info');
    expect(entry?.ref).toMatch(/^fw-/);
    if (!entry) return;
    expect(formatWarning({ ...entry, summary: 'x'.repeat(400) })).toMatch(
      new RegExp(`^\\[(CRITICAL|WARNING)\\] \\(ref ${entry.ref}\\) x+…$`),
    );
  });

  it('are looked up at full only: the name behind it at full, 403 below, 404 unknown, 400 malformed', () => {
    const ref = redacted[0].ref;
    const found = lookup(cluster, ref, 'full');
    expect(found.status).toBe(200);
    const body = found.body as { ref: string; name: string; sourceName: string };
    expect(body.ref).toBe(ref);
    expect(body.name).not.toBe('redacted');
    const named = cluster.index.allConstraints().find((constraint) => constraint.ref === ref);
    expect(body).toMatchObject({
      name: named?.name,
      sourceName: named?.source.name,
      sourceKind: named?.source.kind,
    });
    for (const level of ['summary', 'detailed'] as const) {
      const refused = lookup(cluster, ref, level);
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ error: expect.stringMatching(/full detail level/) });
    }
    expect(lookup(cluster, 'fw-0000000000000000', 'full').status).toBe(404);
    expect(lookup(cluster, 'require-requests', 'full')).toEqual({
      status: 400,
      body: { error: expect.stringMatching(/opaque reference/) },
    });
  });
});
