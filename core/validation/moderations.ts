/** Body schema for POST /moderations. No cross-field rules. */

import type { SchemaObject } from 'ajv';

export const moderationsSchema: SchemaObject = {
  type: 'object',
  required: ['input'],
  properties: {
    // Text, many texts, or multimodal parts (objects such as {type:"image_url", …}); not mixed.
    input: {
      type: ['string', 'array'],
      description: 'a string, an array of strings, or an array of objects',
      anyOf: [{ items: { type: 'string' } }, { items: { type: 'object' } }],
    },
    // Deliberately no enum: the spec lists two model names, but newer moderation models exist
    // and the gateway must not block them.
    model: { type: 'string' },
  },
};
