/**
 * Options of the `console` plugin.
 *
 *   - console                      # the console at /console/, and / redirects there
 *   - console:
 *       redirect_root: false       # leave / alone (404)
 *       dir: ./my-console-build    # serve another build (index.html + assets/)
 */
export interface ConsoleOptions {
  redirect_root: boolean;
  dir?: string;
}

export const consoleOptionsSchema = {
  type: 'object',
  properties: {
    redirect_root: { type: 'boolean', default: true, description: 'Redirect GET / to /console/.' },
    dir: { type: 'string', minLength: 1, description: 'A built console to serve instead of the one npm install builds (dist/console).' },
  },
  additionalProperties: false,
};
