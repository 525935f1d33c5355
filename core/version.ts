/** The gateway's version (kept in step with package.json's by the release process). */
export const VERSION = '0.1.0';
