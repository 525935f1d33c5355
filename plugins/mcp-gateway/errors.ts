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

export const McpErrors = {
  denied: (message: string): McpError => new McpError(MCP_DENIED, message),
  unavailable: (message: string): McpError => new McpError(MCP_UNAVAILABLE, message),
  notFound: (message: string): McpError => new McpError(MCP_NOT_FOUND, message),
};
