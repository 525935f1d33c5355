/**
 * Hash routing (`#/logs/<id>?status=429`): the server serves one page at /console/, so every
 * view is a fragment, which browsers never send to the server or write to its access log.
 */
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  /** `/logs/abc` */
  path: string;
  /** `['logs', 'abc']` */
  parts: string[];
  query: URLSearchParams;
}

export function currentRoute(): Route {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path = '/', search = ''] = hash.split('?', 2);
  return { path, parts: path.split('/').filter((p) => p !== '').map(decodeURIComponent), query: new URLSearchParams(search) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = (): void => setRoute(currentRoute());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

/** `href` for a view: `link('/logs', {status: 429})` → `#/logs?status=429`. */
export function link(path: string, query?: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') params.set(k, String(v));
  const text = params.toString();
  return `#${path}${text === '' ? '' : `?${text}`}`;
}

export function navigate(path: string, query?: Record<string, string | number | undefined>, replace = false): void {
  const target = link(path, query);
  if (replace) history.replaceState(null, '', target);
  else location.hash = target.slice(1);
  if (replace) dispatchEvent(new HashChangeEvent('hashchange'));
}
