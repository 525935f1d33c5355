/**
 * `gateway pricing import FILE [--dry-run]`: reads an open price catalogue (LiteLLM's
 * `model_prices_and_context_window.json`) into the pricing table of a config's data dir, as
 * admin overrides. Idempotent; `--dry-run` prints what would change and writes nothing. The
 * import is audited (resource `model_pricing`, action `import`). A running gateway prices its
 * next request with the new table (the pricing collection's version is checked per lookup).
 *
 * stdout: one line per change (`+ provider/model in/out $/M` or `~ … was …`) and a summary;
 * problems go to stderr with exit code 1.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { openCliStore } from './store.js';
import { applyImport, CatalogueError, parseCatalogue, planImport, type ImportEntry } from '../plugins/admin-catalog/pricing-import.js';

export const PRICING_USAGE = `  gateway pricing import FILE [--dry-run] [--config FILE]
                                     import a LiteLLM price catalogue (JSON) as pricing overrides
`;

/** Cents per token → USD per million tokens, for people. */
function perMillion(pay: Record<string, unknown>, key: string): string {
  const cents = (pay[key] as { price?: unknown } | undefined)?.price;
  return typeof cents === 'number' ? `$${Number(((cents * 1_000_000) / 100).toPrecision(6))}` : '-';
}

function describe(entry: ImportEntry): string {
  return `${entry.provider}/${entry.model} in ${perMillion(entry.pay_as_you_go, 'request_token')}/M out ${perMillion(entry.pay_as_you_go, 'response_token')}/M`;
}

function parseArgs(argv: string[]): { file: string; dryRun: boolean } {
  const at = argv.indexOf('pricing');
  const rest = argv.slice(at + 1);
  if (rest[0] !== 'import') throw new CatalogueError(rest[0] === undefined ? 'missing subcommand: pricing import FILE' : `unknown subcommand "pricing ${rest[0]}" (expected "pricing import")`);
  let file: string | undefined;
  let dryRun = false;
  for (let i = 1; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--config' || arg === '-c') i++;
    else if (arg.startsWith('--config=')) continue;
    else if (arg === '--dry-run') dryRun = true;
    else if (arg.startsWith('-')) throw new CatalogueError(`unknown argument "${arg}"`);
    else if (file === undefined) file = arg;
    else throw new CatalogueError(`unexpected argument "${arg}"`);
  }
  if (file === undefined) throw new CatalogueError('pricing import needs the catalogue file');
  return { file, dryRun };
}

/**
 * Runs `gateway pricing …` and returns the exit code.
 *
 * @example
 *   process.exitCode = await pricingCommand(['pricing', 'import', 'prices.json', '--dry-run'], 'config/gateway.yaml');
 */
export async function pricingCommand(argv: string[], configFile: string): Promise<number> {
  let args: { file: string; dryRun: boolean };
  let parsed: ReturnType<typeof parseCatalogue>;
  try {
    args = parseArgs(argv);
    let text: string;
    try {
      text = await readFile(args.file, 'utf8');
    } catch (err) {
      throw new CatalogueError(`cannot read ${args.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new CatalogueError(`${args.file} is not JSON: ${(err as Error).message}`);
    }
    parsed = parseCatalogue(json);
  } catch (err) {
    if (!(err instanceof CatalogueError)) throw err;
    process.stderr.write(`gateway pricing: ${err.message}\n${PRICING_USAGE}`);
    return 1;
  }
  const opened = await openCliStore(configFile, 'pricing');
  if (opened === undefined) return 1;
  try {
    const plan = planImport(opened.store, parsed.entries);
    for (const entry of plan.added) process.stdout.write(`+ ${describe(entry)}\n`);
    for (const { entry, before } of plan.changed) {
      process.stdout.write(`~ ${describe(entry)} (was in ${perMillion(before, 'request_token')}/M out ${perMillion(before, 'response_token')}/M)\n`);
    }
    const { provider, mode, price, name } = parsed.skipped;
    const summary = `${plan.added.length} added, ${plan.changed.length} changed, ${plan.unchanged} unchanged; skipped ${provider} of other providers, ${mode} of other modes, ${price} without token prices, ${name} with unusable names`;
    if (args.dryRun) {
      process.stdout.write(`dry run: ${summary}; nothing written\n`);
      return 0;
    }
    if (plan.added.length + plan.changed.length > 0) {
      await opened.write(() => applyImport(opened.store, plan, { organisationId: opened.organisationId, command: `gateway pricing import ${basename(args.file)}` }));
    }
    process.stdout.write(`${summary}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`gateway pricing: could not import: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await opened.close();
  }
}
