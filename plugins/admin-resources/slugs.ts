/**
 * Provider and virtual key slugs share one namespace: `@<slug>/<model>` and a config's
 * `virtual_key` may name either, so a slug taken by one kind is refused for the other (each
 * collection's unique index already guards its own kind).
 */
import { AdminErrors } from '../../core/index.js';

export function assertSlugFree(other: { slug: string } | undefined): void {
  if (other !== undefined) throw AdminErrors.conflict('The slug is already taken by a provider or virtual key.', 'slug');
}
