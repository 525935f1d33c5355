/**
 * Options of the `mcp-gateway` plugin.
 *
 *   - mcp-gateway
 *   - mcp-gateway:
 *       timeout_ms: 60000          # a tool call, prompt or resource read (reset by progress)
 *       timeouts: {github: 300000} # per server slug
 *       connect_timeout_ms: 10000  # connect + initialize to an upstream
 *       max_sessions: 1000         # open MCP sessions per process; past it, new ones get 503
 *       session_idle_ms: 1800000   # a session unused this long is closed (its upstreams too)
 */
export interface McpGatewayOptions {
  timeout_ms: number;
  timeouts: Record<string, number>;
  connect_timeout_ms: number;
  max_sessions: number;
  session_idle_ms: number;
}

const ms = (min: number, max: number, dflt: number, description: string): Record<string, unknown> => ({ type: 'integer', minimum: min, maximum: max, default: dflt, description });

export const mcpGatewayOptionsSchema = {
  type: 'object',
  properties: {
    timeout_ms: ms(100, 3_600_000, 60_000, 'How long a tool call, prompt or resource read may take upstream (progress resets it).'),
    timeouts: { type: 'object', default: {}, propertyNames: { pattern: '^[A-Za-z0-9_-]{1,64}$' }, additionalProperties: { type: 'integer', minimum: 100, maximum: 3_600_000 }, description: 'timeout_ms per MCP server slug.' },
    connect_timeout_ms: ms(100, 120_000, 10_000, 'How long connecting to and initializing an upstream MCP server may take.'),
    max_sessions: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1000, description: 'Open MCP sessions per process.' },
    session_idle_ms: ms(1000, 86_400_000, 1_800_000, 'An MCP session unused this long is closed.'),
  },
  additionalProperties: false,
};
