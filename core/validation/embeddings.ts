/** Body schema for POST /embeddings. No cross-field rules. */

import type { SchemaObject } from 'ajv';
import { textOrTokensSchema } from './completions.js';

export const embeddingsSchema: SchemaObject = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: { type: 'string' },
    // Empty input has nothing to embed; upstreams reject it with a less useful message.
    input: textOrTokensSchema(true),
    dimensions: { type: 'integer', minimum: 1 },
    encoding_format: { type: 'string', enum: ['float', 'base64'] },
    user: { type: 'string' },
  },
};
