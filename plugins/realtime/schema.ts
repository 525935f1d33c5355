/** Options of the `realtime` plugin (YAML), with their defaults. */
export interface RealtimeOptions {
  /** How long the upstream handshake may take (ms) before the client gets 504 `upstream_timeout`. */
  connect_timeout: number;
  /** The largest message either side may send (bytes); a larger one closes the session with 1009. */
  max_message_bytes: number;
  /**
   * Bytes one side may have queued towards a slow peer before the other side is paused (it
   * resumes once the queue drained below half of it).
   */
  high_water_mark: number;
}

export const realtimeOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    connect_timeout: { type: 'integer', minimum: 100, maximum: 120_000, default: 10_000 },
    max_message_bytes: { type: 'integer', minimum: 1024, maximum: 104_857_600, default: 16_777_216 },
    high_water_mark: { type: 'integer', minimum: 1024, maximum: 67_108_864, default: 1_048_576 },
  },
} as const;
