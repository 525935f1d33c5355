/**
 * A JSON editor checked as you type, shared by the versioned resources (versioned.tsx): a monospace
 * textarea; ~300 ms after the last keystroke the text is parsed here (a syntax error names its
 * line and column), then, if it parses, handed to the page's own check (the API's validation),
 * whose problems are listed next to the editor with their path and code.
 */
import type { JSX } from 'preact';
import { useEffect, useId, useState } from 'preact/hooks';
import { ApiError } from '../api';
import { ErrorNote } from '../ui';

/** One problem the API found, where it is (`config.targets[1].weight`) and its stable code. */
export interface Problem {
  path: string;
  message: string;
  code: string;
}

export interface SyntaxProblem {
  message: string;
  line: number;
  column: number;
}

export type Parsed = { ok: true; value: unknown } | { ok: false; error: SyntaxProblem };

/** Line and column (1-based) of a character offset in `text`. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

/** `JSON.parse` with the position of a syntax error as line and column. */
export function parseJson(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    const message = (err as Error).message;
    const lc = /line (\d+) column (\d+)/.exec(message);
    const pos = /position (\d+)/.exec(message);
    const at = lc !== null ? { line: Number(lc[1]), column: Number(lc[2]) } : pos !== null ? lineColumn(text, Number(pos[1])) : lineColumn(text, text.length);
    const clean = message.replace(/^JSON\.parse: /, '').replace(/\s*\(line \d+ column \d+\)/, '').replace(/ in JSON at position \d+/, '');
    return { ok: false, error: { message: clean, ...at } };
  }
}

export const pretty = (value: unknown): string => JSON.stringify(value, null, 2);

/**
 * What the editor's text is worth: `checking` while typing or while the API looks at it,
 * `valid`, `invalid` (syntax or problems), or `unchecked` (the API could not check it: the save
 * will tell).
 */
export interface JsonCheck {
  state: 'checking' | 'valid' | 'invalid' | 'unchecked';
  value?: unknown;
  syntax?: SyntaxProblem;
  problems: Problem[];
  /** Why the API could not check (no scope, network): shown, and the save decides. */
  error?: unknown;
}

/**
 * Checks `text` 300 ms after it last changed: locally (`shape` returns problems the JSON's shape
 * has, e.g. "must be an object"), then with `remote` (the API), if given. A newer text aborts
 * the older check.
 */
export function useJsonCheck(
  text: string,
  shape: (value: unknown) => Problem[],
  remote: ((value: unknown, signal: AbortSignal) => Promise<Problem[]>) | undefined,
  deps: unknown[] = [],
): JsonCheck {
  const [check, setCheck] = useState<JsonCheck>({ state: 'checking', problems: [] });
  useEffect(() => {
    const abort = new AbortController();
    setCheck((c) => ({ ...c, state: 'checking' }));
    const timer = setTimeout(() => {
      const parsed = parseJson(text);
      if (!parsed.ok) {
        setCheck({ state: 'invalid', syntax: parsed.error, problems: [] });
        return;
      }
      const local = shape(parsed.value);
      if (local.length > 0 || remote === undefined) {
        setCheck({ state: local.length > 0 ? 'invalid' : 'valid', value: parsed.value, problems: local });
        return;
      }
      remote(parsed.value, abort.signal).then(
        (problems) => !abort.signal.aborted && setCheck({ state: problems.length > 0 ? 'invalid' : 'valid', value: parsed.value, problems }),
        (error: unknown) => {
          if (abort.signal.aborted || (error as Error).name === 'AbortError') return;
          setCheck({ state: 'unchecked', value: parsed.value, problems: [], error });
        },
      );
    }, 300);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [text, ...deps]);
  return check;
}

/** A 400 of a save as a problem next to the editor (its `param` is the path). */
export function problemOf(err: unknown): Problem | undefined {
  if (!(err instanceof ApiError) || err.status !== 400) return undefined;
  return { path: err.param ?? '', message: err.message, code: err.code };
}

function CheckStatus({ check }: { check: JsonCheck }): JSX.Element {
  const text =
    check.state === 'checking'
      ? 'Checking…'
      : check.state === 'valid'
        ? '✓ Valid'
        : check.state === 'unchecked'
          ? 'Not checked by the gateway (the save will check it)'
          : check.syntax !== undefined
            ? '✗ Not valid JSON'
            : `✗ ${check.problems.length} problem${check.problems.length === 1 ? '' : 's'}`;
  const tone = check.state === 'valid' ? 'ok' : check.state === 'invalid' ? 'bad' : 'plain';
  return (
    <p class={`check-status check-${tone}`} role="status" aria-live="polite" data-testid="check-status">
      {text}
    </p>
  );
}

/** The problems of the text, each with where it is. */
export function ProblemList({ check, extra }: { check: JsonCheck; extra?: Problem }): JSX.Element | null {
  const problems = extra !== undefined ? [...check.problems, extra] : check.problems;
  if (check.syntax === undefined && problems.length === 0) return <ErrorNote error={check.error} />;
  return (
    <ul class="problems" aria-label="Problems">
      {check.syntax !== undefined && (
        <li>
          <code class="problem-path">
            line {check.syntax.line}, column {check.syntax.column}
          </code>
          <span>{check.syntax.message}</span>
          <span class="code">json_syntax</span>
        </li>
      )}
      {problems.map((p, i) => (
        <li key={`${p.path}-${i}`}>
          <code class="problem-path">{p.path === '' ? '(top level)' : p.path}</code>
          <span>{p.message}</span>
          <span class="code">{p.code}</span>
        </li>
      ))}
    </ul>
  );
}

/** The labelled monospace editor with its check status and problems beside it. */
export function JsonEditor(props: { id?: string; label: string; value: string; onInput: (v: string) => void; check: JsonCheck; hint?: string; rows?: number; saveProblem?: Problem; readOnly?: boolean }): JSX.Element {
  const generated = useId();
  const id = props.id ?? generated;
  const hintId = `${id}-hint`;
  const invalid = props.check.state === 'invalid' || props.saveProblem !== undefined;
  return (
    <div class="json-editor">
      <div class="field json-editor-text">
        <label for={id}>{props.label}</label>
        <textarea
          id={id}
          class="mono"
          rows={props.rows ?? 22}
          spellcheck={false}
          autoComplete="off"
          readOnly={props.readOnly}
          aria-invalid={invalid}
          aria-describedby={hintId}
          value={props.value}
          onInput={(e) => props.onInput((e.currentTarget as HTMLTextAreaElement).value)}
        />
        <small id={hintId} class="muted">
          {props.hint}
        </small>
      </div>
      <aside class="json-editor-check" aria-label="Check">
        <CheckStatus check={props.check} />
        <ProblemList check={props.check} extra={props.saveProblem} />
      </aside>
    </div>
  );
}
