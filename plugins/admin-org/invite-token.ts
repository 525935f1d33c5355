/**
 * Invite tokens: 256 random bits, shown once inside the invite link and stored only as SHA-256
 * (`token_hash`), like API keys. A fast hash is right for the same reason: the input is a long
 * random secret, so there is nothing to brute-force.
 */
import { createHash, randomBytes } from 'node:crypto';
import { headerString, type GatewayContext } from '../../core/index.js';

/** How long an invite (and each resent link) stays valid. */
export const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export function generateInviteToken(): string {
  return `inv-${randomBytes(32).toString('base64url')}`;
}

export function hashInviteToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A hostname or IP literal with an optional port: nothing that could smuggle a path or scheme in. */
const HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * `<scheme>://<host>/v1/admin/users/invites/accept?token=…`, the host taken from the request
 * (`Host`, or `:authority` over HTTP/2) so the link points where the admin reached the gateway.
 * A malformed host falls back to `localhost` rather than echoing it into a link.
 */
export function inviteLink(ctx: GatewayContext, secure: boolean, token: string): string {
  const raw = headerString(ctx.headers, 'host') ?? headerString(ctx.headers, ':authority');
  const host = raw !== undefined && HOST.test(raw) ? raw : 'localhost';
  return `${secure ? 'https' : 'http'}://${host}/v1/admin/users/invites/accept?token=${encodeURIComponent(token)}`;
}
