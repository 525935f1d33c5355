/**
 * Exporting the records the Logs filters select (`/v1/logs/exports`): create the export with the
 * same filters (the draft says how many records match), start it, watch its status until it
 * succeeds, then download the JSON Lines file and save it. A run can be cancelled.
 */
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, download } from '../api';
import { Button, Checkbox, Dialog, ErrorNote, fmtNumber, useAction, useSession } from '../ui';
import { exportFilters, type Filters } from './logs-filters';

type Status = 'draft' | 'in_progress' | 'success' | 'failed' | 'stopped';

interface ExportItem {
  id: string;
  status: Status;
  total: number;
}

/** The export's line fields (admin-api.md §18 `requested_data`), in the reference's order. */
const FIELDS = [
  'id', 'trace_id', 'created_at', 'request', 'response', 'is_success', 'ai_org', 'ai_model', 'req_units', 'res_units', 'total_units',
  'request_url', 'cost', 'cost_currency', 'response_time', 'response_status_code', 'mode', 'config', 'prompt_slug', 'metadata',
] as const;
const DEFAULT_FIELDS = ['id', 'trace_id', 'created_at', 'is_success', 'ai_org', 'ai_model', 'total_units', 'cost', 'response_time', 'response_status_code', 'config', 'metadata'];

const POLL_MS = 1000;

/** Saves a blob as a file: an object URL on a temporary link, released after the click. */
function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function ExportDialog({ filters, onClose }: { filters: Filters; onClose: () => void }): JSX.Element {
  const session = useSession();
  const [fields, setFields] = useState<Set<string>>(new Set(DEFAULT_FIELDS));
  const [job, setJob] = useState<ExportItem | null>(null);
  const [startedAt, setStartedAt] = useState(0);
  const [elapsed, setElapsed] = useState(0);
  const [saved, setSaved] = useState(false);
  const closed = useRef(false);
  useEffect(() => () => void (closed.current = true), []);

  const save = useAction(async (item: ExportItem) => {
    const blob = await download(`/v1/logs/exports/${item.id}/download`);
    saveBlob(blob, `log-export-${item.id}.jsonl`);
    setSaved(true);
  });

  const start = useAction(async () => {
    setSaved(false);
    const body: Record<string, unknown> = { filters: exportFilters(filters, Date.now()), requested_data: FIELDS.filter((f) => fields.has(f)), description: 'Console export' };
    if (session.isOrganisation && filters.workspace_id !== undefined) body.workspace_id = filters.workspace_id;
    const made = await api.post<{ id: string; total: number }>('/v1/logs/exports', body);
    setJob({ id: made.id, total: made.total, status: 'draft' });
    await api.post(`/v1/logs/exports/${made.id}/start`);
    setStartedAt(Date.now());
    setJob({ id: made.id, total: made.total, status: 'in_progress' });
  });

  const cancel = useAction(async () => {
    if (job === null) return;
    await api.post(`/v1/logs/exports/${job.id}/cancel`);
    setJob({ ...job, status: 'stopped' });
  });

  // While it runs: its status every second; on success the file is saved once.
  const [pollError, setPollError] = useState<unknown>(undefined);
  useEffect(() => {
    if (job === null || job.status !== 'in_progress') return;
    const timer = setInterval(() => {
      setElapsed(Date.now() - startedAt);
      api.get<ExportItem>(`/v1/logs/exports/${job.id}`).then(
        (item) => {
          if (closed.current || item.status === 'in_progress') return;
          setJob(item);
          if (item.status === 'success') void save.run(item);
        },
        (err: unknown) => setPollError(err),
      );
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [job?.id, job?.status]);

  const running = job?.status === 'in_progress' || start.busy;
  const toggle = (f: string, on: boolean): void => {
    const next = new Set(fields);
    if (on) next.add(f);
    else next.delete(f);
    setFields(next);
  };
  return (
    <Dialog title="Export logs" open onClose={onClose} wide>
      <p>The records the current filters select, as a JSON Lines file: one object per record with the fields below, oldest first.</p>
      <fieldset disabled={running}>
        <legend>Fields</legend>
        <div class="export-fields">
          {FIELDS.map((f) => (
            <Checkbox key={f} label={f} checked={fields.has(f)} onChange={(on) => toggle(f, on)} />
          ))}
        </div>
      </fieldset>
      {job !== null && <ExportProgress job={job} elapsed={elapsed} saved={saved} />}
      <ErrorNote error={start.error ?? cancel.error ?? pollError ?? save.error} />
      <div class="row end">
        <Button onClick={onClose}>Done</Button>
        {job?.status === 'in_progress' && (
          <Button kind="danger" busy={cancel.busy} onClick={() => void cancel.run()}>
            Cancel export
          </Button>
        )}
        {job?.status === 'success' && (
          <Button busy={save.busy} onClick={() => void save.run(job)}>
            Download again
          </Button>
        )}
        <Button kind="primary" busy={running} disabled={fields.size === 0} onClick={() => void start.run()}>
          {job === null ? 'Start export' : 'Export again'}
        </Button>
      </div>
    </Dialog>
  );
}

function ExportProgress({ job, elapsed, saved }: { job: ExportItem; elapsed: number; saved: boolean }): JSX.Element {
  const records = `${fmtNumber(job.total)} record${job.total === 1 ? '' : 's'}`;
  if (job.status === 'in_progress' || job.status === 'draft') {
    return (
      <div class="export-progress" role="status">
        {/* The export API reports no count while it runs: the bar shows activity, not a fraction. */}
        <progress aria-label="Export progress" />
        <span>
          Exporting {records}… {elapsed >= 1000 ? `${Math.round(elapsed / 1000)} s` : ''}
        </span>
      </div>
    );
  }
  const message: Record<Exclude<Status, 'in_progress' | 'draft'>, string> = {
    success: saved ? `Done: ${records} exported and saved.` : `Done: ${records} exported; saving the file…`,
    failed: 'The export failed. Start it again; the gateway log says why.',
    stopped: 'The export was cancelled.',
  };
  return (
    <div class="export-progress" role="status">
      <progress aria-label="Export progress" value={job.status === 'success' ? 1 : 0} max={1} />
      <span>{message[job.status]}</span>
    </div>
  );
}
