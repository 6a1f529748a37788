import { ownEntry } from './own-entry';

describe('ownEntry', () => {
  const table: Readonly<Record<string, string>> = { Pod: 'pods', Service: 'services' };

  it('answers the table’s own entries', () => {
    expect(ownEntry(table, 'Pod')).toBe('pods');
    expect(ownEntry(table, 'Service')).toBe('services');
  });

  it.each(Object.getOwnPropertyNames(Object.prototype))('answers undefined for %s', (name) => {
    expect(ownEntry(table, name)).toBeUndefined();
  });
});
