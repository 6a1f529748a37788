'use strict';

// Preloaded (`node -r`) into a real service process started by a reliability test, with
// --expose-gc and an IPC channel: answers `{type: 'probe'}` with the process's open file
// descriptors and its heap after a full collection, so a test can tell a leak from garbage that was
// merely not collected yet. Plain JavaScript: it must load before anything else, without a build.

const { readdirSync } = require('node:fs');

if (typeof process.send === 'function') {
  process.on('message', (message) => {
    if (!message || message.type !== 'probe') return;
    if (typeof global.gc === 'function') {
      global.gc();
      global.gc();
    }
    const memory = process.memoryUsage();
    process.send({
      type: 'probe',
      fileDescriptors: readdirSync('/proc/self/fd').length,
      heapUsedBytes: memory.heapUsed,
      externalBytes: memory.external,
      rssBytes: memory.rss,
    });
  });
  // The test going away must not leave a server behind.
  process.on('disconnect', () => process.exit(0));
}
