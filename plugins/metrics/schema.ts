/**
 * Options of the `metrics` plugin.
 *
 *   - metrics                      # GET /metrics, public
 *   - metrics:
 *       require_key: true          # an API key with the scope `analytics.view` (needs `auth` in the pipeline)
 *       max_label_sets: 1000       # distinct label sets per metric; past it, new ones fold into `other`
 */
export interface MetricsOptions {
  require_key: boolean;
  max_label_sets: number;
}

export const metricsOptionsSchema = {
  type: 'object',
  properties: {
    require_key: { type: 'boolean', default: false, description: 'Serve /metrics only to keys with the scope analytics.view.' },
    max_label_sets: { type: 'integer', minimum: 10, maximum: 100_000, default: 1000, description: 'Distinct label sets kept per metric.' },
  },
  additionalProperties: false,
};
