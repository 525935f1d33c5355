/**
 * The JSON-RPC error codes the MCP gateway answers with, beside the protocol's own
 * (-32602 invalid params, -32001 request timeout, -32000 connection closed). Server-defined codes
 * live in -32000..-32099; these are stable:
 *
 *   -32010  denied        the capability is disabled, or outside the workspace's or key's allow-list
 *   -32011  unavailable   the upstream MCP server could not be reached, or failed mid-call
 *   -32012  not found     the tool, prompt or resource is not one this endpoint offers
 */
import { McpError } from '@modelcontextprotocol/sdk/types.js';

export const MCP_DENIED = -32010;
export const MCP_UNAVAILABLE = -32011;
export const MCP_NOT_FOUND = -32012;

/**
 * A JSON-RPC error the gateway answers with, its message on the wire as written. The SDK's
 * `McpError` prefixes its message with "MCP error <code>: ", which the server sends and the
 * client's SDK prefixes again: a client would read the prefix twice.
 */
export class GatewayMcpError extends McpError {
  constructor(code: number, message: string, data?: unknown) {
    super(code, message, data);
    this.message = message;
  }
}

/** An upstream's JSON-RPC error (or the gateway's own) as the client should read it: the upstream's message, code and data, once prefixed. */
export function relayed(err: McpError): McpError {
  if (err instanceof GatewayMcpError) return err;
  const prefix = `MCP error ${err.code}: `;
  return new GatewayMcpError(err.code, err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message, err.data);
}

export const McpErrors = {
  denied: (message: string, data?: unknown): McpError => new GatewayMcpError(MCP_DENIED, message, data),
  unavailable: (message: string): McpError => new GatewayMcpError(MCP_UNAVAILABLE, message),
  notFound: (message: string): McpError => new GatewayMcpError(MCP_NOT_FOUND, message),
};
