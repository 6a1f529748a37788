import { admissionOutcome, createWebhookMetrics } from './metrics';

// The webhook metric definitions (wired into the server by the webhook's owner): outcome labels
// and the values each observe call moves.

describe('webhook metrics', () => {
  it('classifies admission outcomes', () => {
    expect(admissionOutcome({ reviewParsed: false, warnings: 0 })).toBe('bad_request');
    expect(admissionOutcome({ reviewParsed: true, query: 'timeout', warnings: 0 })).toBe('timeout');
    expect(admissionOutcome({ reviewParsed: true, query: 'unreachable', warnings: 0 })).toBe(
      'controller_error',
    );
    expect(admissionOutcome({ reviewParsed: true, query: 'bad_body', warnings: 0 })).toBe('controller_error');
    expect(admissionOutcome({ reviewParsed: true, query: 'ok', warnings: 2 })).toBe('warned');
    expect(admissionOutcome({ reviewParsed: true, query: 'ok', warnings: 0 })).toBe('clean');
  });

  it('exports durations by outcome, warnings by severity and the certificate expiry', async () => {
    const metrics = createWebhookMetrics({ processMetrics: false });
    const before = await metrics.registry.metrics();
    expect(before).toContain('forewarn_webhook_admission_duration_seconds_count{outcome="timeout"} 0');
    expect(before).toContain('forewarn_webhook_warnings_total{severity="Critical"} 0');
    expect(before).toContain('forewarn_webhook_certificate_expiry_timestamp_seconds 0');
    expect(before).toContain('forewarn_webhook_reviews_forwarded_total 0');
    expect(before).toContain('forewarn_webhook_check_batches_total 0');

    metrics.observeAdmission('warned', 0.02);
    metrics.observeAdmission('warned', 0.03);
    metrics.observeControllerQuery('ok', 0.01);
    metrics.countWarnings([
      '[CRITICAL] quota - hint',
      '[WARNING] policy - hint',
      '[WARNING] other - hint',
      'plain',
    ]);
    metrics.setCertificateExpiry(new Date('2027-01-01T00:00:00Z'));
    metrics.countForwardedReview();
    metrics.countCheckBatch(3);
    metrics.countCheckBatch(2);

    const after = await metrics.registry.metrics();
    expect(after).toContain('forewarn_webhook_admission_duration_seconds_count{outcome="warned"} 2');
    expect(after).toContain('forewarn_webhook_controller_query_duration_seconds_count{result="ok"} 1');
    expect(after).toContain('forewarn_webhook_warnings_total{severity="Critical"} 1');
    expect(after).toContain('forewarn_webhook_warnings_total{severity="Warning"} 2');
    expect(after).toContain('forewarn_webhook_reviews_forwarded_total 1');
    expect(after).toContain('forewarn_webhook_check_batches_total 2');
    expect(after).toContain('forewarn_webhook_batched_checks_total 5');
    expect(after).toContain(
      `forewarn_webhook_certificate_expiry_timestamp_seconds ${Date.UTC(2027, 0, 1) / 1000}`,
    );
  });
});
