/**
 * Optional services, found on first use. A plugin that would like a service another plugin
 * provides (pricing, credentials, log stats) may sit earlier in the pipeline than its provider, or
 * run without it: the lookup waits for the first request and, when the service is absent, says so
 * once in the log and answers undefined from then on.
 */
import type { AppServices, GatewayApp } from './plugin.js';

/**
 * @example
 *   const pricing = optionalService(app, 'pricing', 'costs are counted as 0');
 *   const price = pricing()?.priceFor('openai', 'gpt-4o');
 */
export function optionalService<K extends keyof AppServices>(app: GatewayApp, name: K, consequence: string): () => AppServices[K] | undefined {
  let found: AppServices[K] | null | undefined;
  return () => {
    if (found === undefined) {
      try {
        found = app.service(name);
      } catch {
        found = null;
        app.log.warn(`no "${String(name)}" service in the pipeline: ${consequence}`);
      }
    }
    return found ?? undefined;
  };
}
