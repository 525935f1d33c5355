/**
 * Version history and version diffs, shared by the versioned resources (versioned.tsx): every saved
 * version (newest first) with its time and author, one opened in full, and a line diff between
 * two chosen versions (default: the previous against the current). Diff lines carry a `+` or
 * `-` prefix and are `<ins>`/`<del>` elements, so the change reads without colour.
 */
import type { JSX } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { diffLines } from 'diff';
import { Button, Dialog, Empty, Json, SelectField, Table, fmtTime } from '../ui';
import { pretty } from './versioned-json';

/** The fields both kinds of version share. */
export interface Version {
  version_id: string;
  name: string;
  created_by: string | null;
  created_at: string;
}

/** `v3 · 4 Jan 2026, 10:12:03`, numbered from the oldest (the list is newest first). */
function versionLabel(versions: Version[], i: number): string {
  const n = versions.length - i;
  return `v${n} · ${fmtTime(versions[i]!.created_at)}${i === 0 ? ' (current)' : ''}`;
}

/** What a version holds, as the diff compares it: its name and its body (under `bodyKey`). */
function versionText<V extends Version>(v: V, body: (v: V) => unknown, bodyKey: string): string {
  return pretty({ name: v.name, [bodyKey]: body(v) });
}

export function VersionHistory<V extends Version>(props: { versions: V[]; body: (v: V) => unknown; bodyLabel: string; onRestore?: (v: V) => void }): JSX.Element {
  const [open, setOpen] = useState<number | null>(null);
  const { versions } = props;
  const shown = open === null ? undefined : versions[open];
  return (
    <>
      <Table
        caption="Versions"
        rows={versions.map((v, i) => ({ v, i }))}
        rowKey={(r) => r.v.version_id}
        empty={<Empty title="No versions yet.">Saving creates the first version.</Empty>}
        columns={[
          { label: 'Version', render: (r) => `v${versions.length - r.i}${r.i === 0 ? ' (current)' : ''}` },
          { label: 'Saved', render: (r) => fmtTime(r.v.created_at) },
          { label: 'Name', render: (r) => r.v.name },
          { label: 'By', render: (r) => (r.v.created_by === null ? <span class="muted">a service key</span> : <code>{r.v.created_by}</code>) },
          {
            label: 'Open',
            render: (r) => (
              <Button aria-label={`View version ${versions.length - r.i}`} onClick={() => setOpen(r.i)}>
                View
              </Button>
            ),
          },
        ]}
      />
      {shown !== undefined && open !== null && (
        <Dialog title={`Version ${versions.length - open} of “${shown.name}”`} open onClose={() => setOpen(null)} wide>
          <p class="muted">
            Saved {fmtTime(shown.created_at)} · <code>{shown.version_id}</code>
          </p>
          <h3>{props.bodyLabel}</h3>
          <Json value={props.body(shown)} />
          {props.onRestore !== undefined && open !== 0 && (
            <div class="row end">
              <Button
                kind="primary"
                onClick={() => {
                  props.onRestore!(shown);
                  setOpen(null);
                }}
              >
                Load into the editor
              </Button>
            </div>
          )}
        </Dialog>
      )}
    </>
  );
}

/** Two version pickers and the line diff between them. */
export function VersionDiff<V extends Version>(props: { versions: V[]; body: (v: V) => unknown; bodyKey: string }): JSX.Element {
  const { versions } = props;
  const [from, setFrom] = useState(Math.min(1, versions.length - 1));
  const [to, setTo] = useState(0);
  // A new save shifts every index by one: show the newest pair again.
  useEffect(() => {
    setFrom(Math.min(1, versions.length - 1));
    setTo(0);
  }, [versions[0]?.version_id]);
  const options = versions.map((_, i): [string, string] => [String(i), versionLabel(versions, i)]);
  const a = versions[from];
  const b = versions[to];
  const parts = useMemo(() => (a === undefined || b === undefined ? [] : diffLines(versionText(a, props.body, props.bodyKey), versionText(b, props.body, props.bodyKey))), [a, b]);
  if (versions.length < 2) return <Empty title="Only one version so far.">Save a change to compare versions.</Empty>;
  const added = parts.filter((p) => p.added).reduce((n, p) => n + (p.count ?? 0), 0);
  const removed = parts.filter((p) => p.removed).reduce((n, p) => n + (p.count ?? 0), 0);
  return (
    <div class="version-diff">
      <div class="filters">
        <SelectField label="Compare version" value={String(from)} options={options} onChange={(v) => setFrom(Number(v))} />
        <SelectField label="With version" value={String(to)} options={options} onChange={(v) => setTo(Number(v))} />
      </div>
      <p class="muted" role="status">
        {from === to ? 'The same version: nothing to compare.' : added + removed === 0 ? 'No difference.' : `${added} line${added === 1 ? '' : 's'} added, ${removed} removed.`}
      </p>
      <pre class="diff" aria-label="Differences" data-testid="diff">
        {parts.flatMap((part, i) => {
          const lines = part.value.replace(/\n$/, '').split('\n');
          return lines.map((line, j) =>
            part.added ? (
              <ins key={`${i}-${j}`} class="diff-add">{`+ ${line}\n`}</ins>
            ) : part.removed ? (
              <del key={`${i}-${j}`} class="diff-del">{`- ${line}\n`}</del>
            ) : (
              <span key={`${i}-${j}`} class="diff-same">{`  ${line}\n`}</span>
            ),
          );
        })}
      </pre>
    </div>
  );
}
