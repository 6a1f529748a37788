import {
  readSharedReplies,
  readSharedRequest,
  writeSharedReplies,
  writeSharedRequest,
} from './shared-channel';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

describe('shared channel of the evaluation isolate', () => {
  it('hands each item the review and its own parameters, side by side', () => {
    const area = new Uint8Array(new SharedArrayBuffer(4096));
    const review = encoder.encode('{"review":{"name":"é-web"}');
    const items = [
      { policy: 'first', parameters: encoder.encode(',"parameters":{"labels":["app"]}}') },
      { policy: 'second', parameters: encoder.encode(',"parameters":{}}') },
    ];
    expect(writeSharedRequest(area, review, items)).toBe(true);
    const { header, inputOf } = readSharedRequest(area);
    expect(header.items.map(({ policy }) => policy)).toEqual(['first', 'second']);
    expect(JSON.parse(decoder.decode(inputOf(0)))).toEqual({
      review: { name: 'é-web' },
      parameters: { labels: ['app'] },
    });
    expect(JSON.parse(decoder.decode(inputOf(1)))).toEqual({ review: { name: 'é-web' }, parameters: {} });
  });

  it('refuses a request or replies that do not fit, before writing anything', () => {
    const area = new Uint8Array(new SharedArrayBuffer(64));
    area.fill(7);
    const review = encoder.encode(`{"review":"${'x'.repeat(100)}"`);
    expect(writeSharedRequest(area, review, [{ policy: 'p', parameters: encoder.encode('}') }])).toBe(false);
    expect(area.every((byte) => byte === 7)).toBe(true);
    expect(writeSharedReplies(area, [{ messages: ['y'.repeat(100)] }])).toBeUndefined();
  });

  it('reads back the replies written', () => {
    const area = new Uint8Array(new SharedArrayBuffer(1024));
    const replies = [
      { messages: ['container "app" has no limits'] },
      { error: 'boom' },
      { notViolations: true as const },
    ];
    const length = writeSharedReplies(area, replies);
    expect(length).toBeGreaterThan(0);
    expect(readSharedReplies(area, length ?? 0)).toEqual(replies);
  });
});
