/**
 * The admin-catalog error catalog. Everything else these routes answer comes from the shared
 * admin catalog (AdminErrors); only the public pricing lookup has a code of its own, so a client
 * can tell "no price for this model" from "no such route".
 */
import { defineError, type GatewayError } from '../../core/index.js';

const modelNotFound = defineError(404, 'not_found_error', 'model_not_found', 'No pricing is known for this model.');

export const CatalogErrors = {
  modelNotFound: (provider: string, model: string): GatewayError =>
    modelNotFound(`No pricing is known for model "${model.slice(0, 128)}" of provider "${provider.slice(0, 64)}".`, { param: 'model' }),
};
