import { parseArgs } from 'node:util';
import type { AccountsService } from '../lambdas/accounts/accounts-service';
import type { CatalogStore } from '../lambdas/catalog/catalog-store';
import type { CopiesReport } from '../lambdas/aws/dynamo-copies-audit';
import type { RollupSummary } from '../lambdas/usage/rollup';
import type { SigningKeyRecord, SigningKeyStore } from '../lambdas/signing/signer';
import type { SigningKeyRegistration } from '../lambdas/signing/signing-key-registry';
import type { FederationService } from '../lambdas/federation/federation-service';
import type { SeedSources } from '../local/seed-sources';
import type { ProviderCredentials, UpstreamOptions } from '../lambdas/inference/upstream';
import type { UpstreamTarget } from '../lambdas/providers/targets';
import { UsageError } from './errors';

/** How the CLI is invoked, as usage lines show it. */
export const PROGRAM = 'npm run ops --';

/** Where output goes: stdout and stderr in the CLI, arrays in tests. Each call is one line (or a block). */
export interface OpsIo {
  out(text: string): void;
  err(text: string): void;
}

/** The stores a command works on, built by the CLI for its target or by a test. */
export interface OpsServices {
  accounts: AccountsService;
  catalog: CatalogStore;
  /** The access-token signing keys: their records, and how this target makes a new key. */
  signingKeys?: {
    store: SigningKeyStore;
    /** A new key, made like the active one when there is one. */
    createKey(active: SigningKeyRecord | undefined): Promise<SigningKeyRegistration>;
  };
  /** The usage rollup; absent on a deployed stack when USAGE_TABLE is not set. */
  usage?: { rollUp(): Promise<RollupSummary> };
  /** The read copies of copied items: their audit and repair. */
  copies?: { check(): Promise<CopiesReport>; repair(): Promise<CopiesReport> };
  /** Issuers and policies; absent on a deployed stack when POLICIES_TABLE is not set. */
  federation?: FederationService;
  /**
   * The inference upstreams as the target's inference function reads them, the providers' keys,
   * and how it calls them; absent on a deployed stack when INFERENCE_UPSTREAMS is not set.
   */
  upstreams?: { targets: Readonly<Record<string, UpstreamTarget>>; credentials: ProviderCredentials; options(): UpstreamOptions };
  /** Real endpoint records and model statistics for deriving demo endpoints. @default the files in data/ */
  seedSources?: () => SeedSources;
}

/** Everything a command's action works with: the target's stores and the output. */
export type OpsContext = OpsServices & OpsIo;

/** One `--flag` of a command: its kind, how usage shows it, and its help. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  /** Placeholder in the usage line: `--name <name>`. */
  value?: string;
  /** Shown without brackets in the usage line; {@link CommandInput.requiredString} enforces it. */
  required?: boolean;
  /** Comma-separated and repeatable: `--allow a,b --allow c`. */
  list?: boolean;
  help: string;
}

/** One positional argument of a command, named in its usage line. */
export interface ArgumentSpec {
  name: string;
  help: string;
  /** One or more values; only the last argument may be variadic. */
  variadic?: boolean;
}

/** A command (`<group> <name>`): its help, its arguments and options, and how it parses them. */
export interface CommandSpec {
  group: string;
  name: string;
  summary: string;
  /** Paragraphs of the command's help, after the usage line. */
  description?: readonly string[];
  args?: readonly ArgumentSpec[];
  options?: Readonly<Record<string, OptionSpec>>;
  /** The service's field names by this command's flags, for its error messages (`expires_at` → `--expires`). */
  flagsByParameter?: Readonly<Record<string, string>>;
  /**
   * Reads and checks the arguments (and any input file) before the target is touched, so
   * bad usage is reported without a connection; returns the action that does the work.
   */
  parse(input: CommandInput): CommandAction;
}

/** The work of a command, run against the target once its arguments have been checked. */
export type CommandAction = (ctx: OpsContext) => Promise<void>;

/** Options every command accepts; the CLI reads `aws` and `data-dir` to pick its target. */
export const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec & { short?: string }>> = {
  json: { type: 'boolean', help: 'print machine-readable JSON on stdout' },
  aws: { type: 'boolean', help: 'use a deployed stack (KEYS_TABLE, MODELS_TABLE, default AWS credentials)' },
  'data-dir': { type: 'string', value: 'dir', help: 'the local service data directory holding runtime.json (default MODELGATE_DATA_DIR, else .local)' },
  help: { type: 'boolean', short: 'h', help: 'show help' },
};

/** The {@link GLOBAL_OPTIONS} as given on the command line. */
export interface GlobalFlags {
  json: boolean;
  aws: boolean;
  dataDir?: string;
}

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** A command's parsed arguments, with readers that throw {@link UsageError} naming the flag. */
export class CommandInput {
  constructor(
    private readonly spec: CommandSpec,
    private readonly positionals: ReadonlyMap<string, string[]>,
    private readonly values: Values,
    readonly globals: GlobalFlags,
  ) {}

  get json(): boolean {
    return this.globals.json;
  }

  /** A required positional argument. */
  arg(name: string): string {
    return this.args(name)[0]!;
  }

  /** A variadic positional argument: one or more values. */
  args(name: string): string[] {
    const values = this.positionals.get(name);
    if (!values) throw new Error(`${this.spec.group} ${this.spec.name} declares no argument <${name}>`);
    return values;
  }

  has(option: string): boolean {
    return this.values[option] !== undefined;
  }

  flag(option: string): boolean {
    return this.values[option] === true;
  }

  string(option: string): string | undefined {
    const value = this.values[option];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${option} needs a non-empty value`);
    return value;
  }

  requiredString(option: string): string {
    const value = this.string(option);
    if (value === undefined) throw new UsageError(`missing --${option}`);
    return value;
  }

  choice<T extends string>(option: string, allowed: readonly T[]): T | undefined {
    const value = this.string(option);
    if (value === undefined) return undefined;
    if (!allowed.includes(value as T)) {
      throw new UsageError(`--${option} must be one of ${allowed.join(', ')} (got "${value}")`);
    }
    return value as T;
  }

  requiredChoice<T extends string>(option: string, allowed: readonly T[]): T {
    const value = this.choice(option, allowed);
    if (value === undefined) throw new UsageError(`missing --${option} (${allowed.join(', ')})`);
    return value;
  }

  /** A comma-separated, repeatable list, trimmed and without duplicates; `--x ""` is the empty list. */
  list(option: string): string[] | undefined {
    const value = this.values[option];
    if (value === undefined) return undefined;
    const parts = (Array.isArray(value) ? value : [value]).flatMap((item) => String(item).split(','));
    return [...new Set(parts.map((part) => part.trim()).filter((part) => part !== ''))];
  }

  /** A list that must name at least one item. */
  nonEmptyList(option: string, what: string): string[] | undefined {
    const list = this.list(option);
    if (list !== undefined && list.length === 0) throw new UsageError(`--${option} needs at least one ${what}`);
    return list;
  }

  /**
   * A USD amount as digits with an optional fraction (`25`, `12.50`); `none` as null where the
   * flag may clear one (`orNone`). The accounts service checks its range and decimals.
   */
  usd(option: string, { orNone = false }: { orNone?: boolean } = {}): number | null | undefined {
    const value = this.string(option);
    if (value === undefined) return undefined;
    if (orNone && value === 'none') return null;
    if (!/^\d+(\.\d+)?$/.test(value)) {
      throw new UsageError(`--${option} must be an amount in USD such as 25 or 12.50${orNone ? ', or none' : ''} (got "${value}")`);
    }
    return Number(value);
  }

  /** `on` or `off` as a boolean; undefined when not given. */
  onOff(option: string): boolean | undefined {
    const value = this.choice(option, ['on', 'off'] as const);
    return value === undefined ? undefined : value === 'on';
  }

  integer(option: string, min = 0): number | undefined {
    const value = this.string(option);
    if (value === undefined) return undefined;
    const number = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number < min) {
      throw new UsageError(`--${option} must be an integer ≥ ${min} (got "${value}")`);
    }
    return number;
  }
}

/** Parses a command's arguments (after its two command words) with `node:util` parseArgs. */
export function parseCommandArgs(spec: CommandSpec, argv: readonly string[]): CommandInput {
  const options = { ...spec.options, ...GLOBAL_OPTIONS };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: Object.fromEntries(
        Object.entries(options).map(([name, option]) => [
          name,
          {
            type: option.type,
            ...(option.list ? { multiple: true } : {}),
            ...('short' in option && option.short ? { short: option.short } : {}),
          },
        ]),
      ),
    });
  } catch (error) {
    throw toUsageError(error);
  }
  const values = parsed.values as Values;
  return new CommandInput(spec, assignPositionals(spec, parsed.positionals), values, {
    json: values.json === true,
    aws: values.aws === true,
    dataDir: typeof values['data-dir'] === 'string' ? values['data-dir'] : undefined,
  });
}

function assignPositionals(spec: CommandSpec, positionals: string[]): Map<string, string[]> {
  const assigned = new Map<string, string[]>();
  const declared = spec.args ?? [];
  let next = 0;
  for (const arg of declared) {
    const count = arg.variadic ? Math.max(positionals.length - next, 0) : 1;
    const values = positionals.slice(next, next + count);
    if (values.length === 0) throw new UsageError(`missing <${arg.name}${arg.variadic ? '...' : ''}>`);
    assigned.set(arg.name, values);
    next += count;
  }
  if (next < positionals.length) throw new UsageError(`unexpected argument "${positionals[next]}"`);
  return assigned;
}

/** parseArgs' messages explain its own API; the CLI's name the flag and what is wrong. */
function toUsageError(error: unknown): unknown {
  const code = (error as { code?: string }).code;
  const message = (error as Error).message ?? '';
  const option = /'(-[^' ]+)/.exec(message)?.[1] ?? 'option';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return new UsageError(`unknown option ${option}`);
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (/does not take an argument/.test(message)) return new UsageError(`${option} takes no value`);
    if (/ambiguous/.test(message)) return new UsageError(`${option} needs a value (write ${option}=<value> for one starting with "-")`);
    return new UsageError(`${option} needs a value`);
  }
  return error;
}

/** `org create --name <name> --plan <plan> [--json]`, without the program name. */
export function synopsis(spec: CommandSpec): string {
  const parts = [spec.group, spec.name];
  for (const arg of spec.args ?? []) parts.push(`<${arg.name}${arg.variadic ? '...' : ''}>`);
  for (const [name, option] of Object.entries(spec.options ?? {})) {
    const text = option.type === 'boolean' ? `--${name}` : `--${name} <${option.value ?? name}>`;
    parts.push(option.required ? text : `[${text}]`);
  }
  return parts.join(' ');
}

/** `Usage: npm run ops -- <synopsis>`. */
export function usageLine(spec: CommandSpec): string {
  return `Usage: ${PROGRAM} ${synopsis(spec)}`;
}

/** The full help of one command. */
export function commandHelp(spec: CommandSpec): string[] {
  const lines = [usageLine(spec), '', spec.summary];
  for (const paragraph of spec.description ?? []) lines.push('', paragraph);
  const args = (spec.args ?? []).map((arg) => [`<${arg.name}${arg.variadic ? '...' : ''}>`, arg.help] as const);
  if (args.length > 0) lines.push('', 'Arguments:', ...describe(args));
  const options = Object.entries(spec.options ?? {}).map(
    ([name, option]) =>
      [option.type === 'boolean' ? `--${name}` : `--${name} <${option.value ?? name}>`, option.help + (option.list ? ' (comma-separated, repeatable)' : '')] as const,
  );
  if (options.length > 0) lines.push('', 'Options:', ...describe(options));
  lines.push('', 'Global options:', ...describe(globalOptionRows()));
  return lines;
}

/** The {@link GLOBAL_OPTIONS} as help rows: the flag (with its short form) and its help. */
export function globalOptionRows(): (readonly [string, string])[] {
  return Object.entries(GLOBAL_OPTIONS).map(([name, option]) => {
    const flag = option.type === 'boolean' ? `--${name}` : `--${name} <${option.value ?? name}>`;
    return [option.short ? `-${option.short}, ${flag}` : flag, option.help] as const;
  });
}

/** Two-column, indented option descriptions. */
export function describe(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}
