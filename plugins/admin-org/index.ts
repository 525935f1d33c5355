/**
 * The `admin-org` plugin: the organisation's people and places (admin-api.md §7–§10).
 *
 *   /v1/admin/users                      users (organisation keys)
 *   /v1/admin/users/invites              invites (organisation keys); `…/accept` is public
 *   /v1/admin/workspaces                 workspaces (create/delete: organisation keys; get, list,
 *                                        update: also a workspace key, for its own workspace)
 *   /v1/admin/workspaces/:id/users       workspace members (either kind; a workspace key on its own)
 *
 * Needs the `auth` plugin before it in the pipeline (without a principal every route but
 * `…/invites/accept` answers 401).
 */
import { adminRoutes, definePlugin, optionalService } from '../../core/index.js';
import { userRoutes } from './users.js';
import { inviteRoutes } from './invites.js';
import { acceptInviteRoute } from './invite-accept.js';
import { workspaceRoutes } from './workspaces.js';
import { memberRoutes } from './members.js';

export default definePlugin({
  name: 'admin-org',
  configSchema: { type: 'object', additionalProperties: false },
  setup(app) {
    // Invite links point back at this gateway, in the scheme it serves.
    const secure = app.config.server.tls !== undefined;
    // `defaults.input_guardrails` / `output_guardrails` are checked by the guardrails plugin.
    const guardrails = optionalService(app, 'guardrails', 'workspaces cannot name guardrails in their defaults');
    return { routes: adminRoutes(app, [...userRoutes, ...inviteRoutes(secure), acceptInviteRoute, ...workspaceRoutes(guardrails), ...memberRoutes]) };
  },
});
