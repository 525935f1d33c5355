/**
 * Everything that is not a model call: `GET /v1/models`, file content, and an echo for any
 * other path so pass-through tests can see exactly what the gateway forwarded.
 */

import { createHash } from 'node:crypto';
import { openaiDialect } from './openai-errors.js';
import { ok, type MockReply, type MockRequest, type Route } from './route.js';

/** Size of every file's content; large enough to span several socket reads. */
const FILE_CONTENT_BYTES = 4096;

/** Byte i is `(i*31+7) & 255`: every value occurs, and a shifted or truncated copy shows. */
const FILE_CONTENT: Buffer = Buffer.from(
  Array.from({ length: FILE_CONTENT_BYTES }, (_, i) => (i * 31 + 7) & 255),
);

const MODELS = [
  { id: 'gpt-4o-mini', object: 'model', created: 1721172741, owned_by: 'openai' },
  { id: 'gpt-4o', object: 'model', created: 1715367049, owned_by: 'openai' },
  { id: 'text-embedding-3-small', object: 'model', created: 1705948997, owned_by: 'openai' },
  { id: 'omni-moderation-latest', object: 'model', created: 1731689265, owned_by: 'openai' },
];

export const modelsRoute: Route = { dialect: openaiDialect, json: false, handle: listModels };
export const fileContentRoute: Route = { dialect: openaiDialect, json: false, handle: fileContent };
export const echoRoute: Route = { dialect: openaiDialect, json: false, handle: echo };

function listModels(): MockReply {
  return ok({ object: 'list', data: MODELS });
}

function fileContent(): MockReply {
  return { kind: 'raw', status: 200, contentType: 'application/octet-stream', body: FILE_CONTENT };
}

/** True for `/v1/files/<id>/content`, with exactly one segment for the id. */
export function isFileContentPath(pathname: string): boolean {
  if (!pathname.startsWith('/v1/files/') || !pathname.endsWith('/content')) return false;
  const id = pathname.slice('/v1/files/'.length, -'/content'.length);
  return id.length > 0 && !id.includes('/');
}

/** The request as received: method, path, raw query, headers and a fingerprint of the body. */
function echo(request: MockRequest): MockReply {
  return ok({
    method: request.method,
    path: request.pathname,
    query: request.query,
    headers: request.headers,
    body_base64: request.body.toString('base64'),
    body_sha256: createHash('sha256').update(request.body).digest('hex'),
    body_length: request.body.length,
  });
}

/** The bytes `GET /v1/files/<id>/content` returns, for tests that compare them. */
export function mockFileContent(): Buffer {
  return Buffer.from(FILE_CONTENT);
}
