import { detail, namespaceName, objectName, renderFullText, renderText, text } from './text';

describe('privacy-aware text', () => {
  const sentence = text`Policy ${objectName('deny-all', 'payments')} in ${namespaceName('payments')} blocks ${detail('TCP/5432', 'a port')} (cluster rule ${objectName('global', null)})`;

  it('shows same-namespace names at every level and hides the rest below full', () => {
    expect(renderText(sentence, { level: 'summary', namespace: 'payments' })).toBe(
      'Policy deny-all in payments blocks a port (cluster rule redacted)',
    );
    expect(renderText(sentence, { level: 'summary', namespace: 'shop' })).toBe(
      'Policy redacted in redacted blocks a port (cluster rule redacted)',
    );
  });

  it('shows details from detailed on, foreign names only at full', () => {
    expect(renderText(sentence, { level: 'detailed', namespace: 'shop' })).toBe(
      'Policy redacted in redacted blocks TCP/5432 (cluster rule redacted)',
    );
    expect(renderText(sentence, { level: 'full', namespace: 'shop' })).toBe(
      'Policy deny-all in payments blocks TCP/5432 (cluster rule global)',
    );
    expect(renderFullText(sentence)).toBe(renderText(sentence, { level: 'full', namespace: 'anything' }));
  });
});
