import { createServer } from 'node:net';

/**
 * A port that was free a moment ago on 127.0.0.1, for children that refuse port 0 (the gateway's
 * config schema requires port >= 1). Another process could take it before the child binds; the
 * child then fails its ready-line wait with a clear error, which is acceptable for a benchmark.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('could not read the bound port'))));
    });
  });
}
