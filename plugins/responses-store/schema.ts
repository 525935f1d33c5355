/**
 * Options of the `responses-store` plugin.
 *
 *   - responses-store
 *   - responses-store:
 *       retention_days: 30           # a kept response is deleted this long after it was made
 *       max_record_bytes: 8388608    # a response (input + output) larger than this is not kept
 *       max_conversation_bytes: 33554432  # a previous_response_id chain larger than this is a 400
 */
export interface ResponsesStoreOptions {
  retention_days: number;
  max_record_bytes: number;
  max_conversation_bytes: number;
}

export const responsesStoreOptionsSchema = {
  type: 'object',
  properties: {
    retention_days: { type: 'number', exclusiveMinimum: 0, maximum: 3650, default: 30, description: 'Days a kept response stays retrievable (OpenAI keeps its own for 30).' },
    max_record_bytes: { type: 'integer', minimum: 1024, maximum: 268_435_456, default: 8_388_608, description: 'A response whose input and output are larger than this is not kept.' },
    max_conversation_bytes: { type: 'integer', minimum: 1024, maximum: 1_073_741_824, default: 33_554_432, description: 'A conversation (previous_response_id chain) larger than this is refused with a 400.' },
  },
  additionalProperties: false,
};
