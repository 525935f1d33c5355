/**
 * Options of the `admin-catalog` plugin.
 */
export interface CatalogOptions {
  /**
   * The public base URL MCP clients reach the gateway at; an MCP server's `url` is
   * `<mcp_base_url>/<slug>/mcp`. Default: the scheme and `Host` of the request that reads it,
   * which is right unless a proxy in front rewrites the host.
   */
  mcp_base_url?: string;
}

export const catalogOptionsSchema = {
  type: 'object',
  properties: {
    mcp_base_url: { type: 'string', pattern: '^https?://[^\\s]+$', maxLength: 2048 },
  },
  additionalProperties: false,
};
