/**
 * US Social Security numbers written AAA-GG-SSSS, with the numbers the SSA never issues refused
 * (area 000, 666 or 900–999; group 00; serial 0000). Dashes only: nine bare digits or
 * space-separated ones are as likely a ZIP+4, a phone fragment or an id, and would mostly be
 * false alarms.
 */
import type { Finding } from '../../../../core/index.js';
import { digitAt } from '../char-classes.js';
import { standsAlone } from './boundaries.js';

export const SSN_LENGTH = 11;

export function findSsns(text: string): Finding[] {
  const out: Finding[] = [];
  for (let i = text.indexOf('-'); i !== -1; i = text.indexOf('-', i + 1)) {
    // `i` is the first dash of AAA-GG-SSSS.
    const start = i - 3;
    if (start < 0 || text[i + 3] !== '-') continue;
    if (!digitAt(text, start) || !digitAt(text, start + 1) || !digitAt(text, start + 2)) continue;
    if (!digitAt(text, i + 1) || !digitAt(text, i + 2)) continue;
    if (!digitAt(text, i + 4) || !digitAt(text, i + 5) || !digitAt(text, i + 6) || !digitAt(text, i + 7)) continue;
    const end = start + SSN_LENGTH;
    if (!standsAlone(text, start, end)) continue;
    if (!issuable(text.slice(start, start + 3), text.slice(i + 1, i + 3), text.slice(i + 4, end))) continue;
    out.push({ start, end, label: 'SSN' });
    i = end - 1;
  }
  return out;
}

function issuable(area: string, group: string, serial: string): boolean {
  return area !== '000' && area !== '666' && area[0] !== '9' && group !== '00' && serial !== '0000';
}
