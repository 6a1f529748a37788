import { ApiStatusError } from './api-status';
import { FieldSelectorQuery, LabelSelectorQuery } from './selectors';

// The selector grammar of apimachinery's labels.Parse / fields.ParseSelector, case by case.

const labels = { app: 'web', tier: 'front', version: '3', empty: '' };

describe('LabelSelectorQuery', () => {
  test.each([
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app=db', false],
    ['app!=db', true],
    ['missing!=x', true],
    ['app', true],
    ['missing', false],
    ['!missing', true],
    ['!app', false],
    ['app in (db, web)', true],
    ['app in (db)', false],
    ['app notin (db)', true],
    ['missing notin (db)', true],
    ['missing in (db)', false],
    ['version>2', true],
    ['version<3', false],
    ['missing>1', false],
    ['empty=', true],
    ['app=web,tier=front', true],
    ['app=web, tier=back', false],
    ['example.com/owner!=me,app', true],
  ])('%j matches %j', (selector, expected) => {
    expect(LabelSelectorQuery.parse(selector).matches(labels)).toBe(expected);
  });

  test.each(['app in ()', 'app in (a', 'app=web,', '=web', 'app=(web)', 'app >', 'version>x', 'a b'])(
    '%j is a 400 BadRequest',
    (selector) => {
      expect(() => LabelSelectorQuery.parse(selector)).toThrow(ApiStatusError);
      try {
        LabelSelectorQuery.parse(selector);
      } catch (error) {
        expect(error).toMatchObject({ code: 400, reason: 'BadRequest' });
      }
    },
  );
});

describe('FieldSelectorQuery', () => {
  const pod = { metadata: { name: 'web-1', namespace: 'team-a' }, status: { phase: 'Running' } };

  test.each([
    ['metadata.name=web-1', 'ConfigMap', true],
    ['metadata.name==web-2', 'ConfigMap', false],
    ['metadata.namespace!=team-b', 'ConfigMap', true],
    ['metadata.name=web-1,metadata.namespace=team-b', 'ConfigMap', false],
    ['status.phase=Running', 'Pod', true],
  ])('%j on a %s matches %j', (selector, kind, expected) => {
    expect(FieldSelectorQuery.parse(selector, kind).matches(pod)).toBe(expected);
  });

  test('fields a kind does not index are refused like the real server refuses them', () => {
    expect(() => FieldSelectorQuery.parse('status.phase=Running', 'ConfigMap')).toThrow(
      'field label not supported: status.phase',
    );
  });
});
