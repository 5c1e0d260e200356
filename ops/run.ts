import {
  PROGRAM,
  commandHelp,
  describe,
  globalOptionRows,
  parseCommandArgs,
  synopsis,
  usageLine,
  type CommandSpec,
  type GlobalFlags,
  type OpsIo,
  type OpsServices,
} from './command';
import { GROUPS } from './commands';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, OperationError, UsageError, translateServiceError } from './errors';

/** Services for the chosen target; `close` releases its clients. */
export type ConnectedServices = OpsServices & { close?(): void | Promise<void> };

/** Builds the services for the target the global flags select (see ops/target.ts). */
export type Connect = (flags: GlobalFlags) => Promise<ConnectedServices>;

const TARGET_HELP = [
  'Target:',
  '  By default the local service (npm start): the CLI reads runtime.json in the data directory',
  '  (--data-dir, else MODELGATE_DATA_DIR, else .local) and connects to the embedded DynamoDB it names.',
  '  With --aws, or when KEYS_TABLE or MODELS_TABLE is set (and no data directory named), a deployed stack:',
  '  the default AWS credential chain (AWS_PROFILE, AWS_REGION, ...) and the table names in',
  '  KEYS_TABLE and MODELS_TABLE, as the stack outputs KeysTableName and ModelsTableName give them',
  '  (issuer and policy commands also need POLICIES_TABLE, the output PoliciesTableName).',
];

const EXIT_HELP = ['Exit status: 0 done; 1 the operation failed (not found, conflict, rejected import, target unreachable); 2 bad usage.'];

/** The help of `npm run ops -- --help`: every command, the global options, the target and the exit status. */
export function overallHelp(): string[] {
  const rows = GROUPS.flatMap((group) => group.commands.map((spec) => [`${spec.group} ${spec.name}`, spec.summary.replace(/\.$/, '')] as const));
  return [
    'modelgate operator CLI: organizations, plans, workspaces, users, API keys, guardrails, workload identity and the model catalog.',
    '',
    `Usage: ${PROGRAM} <command> [arguments] [options]`,
    '',
    'Commands:',
    ...describe(rows),
    '',
    'Global options:',
    ...describe(globalOptionRows()),
    '',
    ...TARGET_HELP,
    '',
    ...EXIT_HELP,
    `Run "${PROGRAM} <command> --help" for a command's arguments and options.`,
  ];
}

function groupHelp(group: (typeof GROUPS)[number]): string[] {
  return [
    `${group.name}: ${group.summary}`,
    '',
    ...group.commands.map((spec) => `  ${PROGRAM} ${synopsis(spec)}`),
    '',
    `Run "${PROGRAM} ${group.name} <command> --help" for details.`,
  ];
}

/**
 * Runs one CLI invocation and returns its exit status. Help and bad usage are answered
 * before anything connects; `connect` is called only when a command is about to run.
 */
export async function runOps(argv: readonly string[], io: OpsIo, connect: Connect): Promise<number> {
  const { words, rest } = splitCommandWords(argv);
  const options = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  const wantsHelp = options.includes('--help') || options.includes('-h');

  if (words[0] === 'help') return help(words.slice(1), io);
  if (words.length === 0) {
    if (wantsHelp) return print(io.out, overallHelp(), EXIT_OK);
    return print(io.err, ['error: missing command', '', ...overallHelp()], EXIT_USAGE);
  }
  const group = GROUPS.find((g) => g.name === words[0]);
  if (!group) return print(io.err, [`error: unknown command "${words[0]}"`, `Run "${PROGRAM} --help" for the list of commands.`], EXIT_USAGE);
  if (words.length === 1) {
    if (wantsHelp) return print(io.out, groupHelp(group), EXIT_OK);
    return print(io.err, [`error: missing ${group.name} command`, '', ...groupHelp(group)], EXIT_USAGE);
  }
  const spec = group.commands.find((c) => c.name === words[1]);
  if (!spec) return print(io.err, [`error: unknown command "${words.join(' ')}"`, '', ...groupHelp(group)], EXIT_USAGE);
  if (wantsHelp) return print(io.out, commandHelp(spec), EXIT_OK);

  let services: ConnectedServices | undefined;
  try {
    const input = parseCommandArgs(spec, rest);
    const action = spec.parse(input);
    services = await connect(input.globals);
    await action({ ...services, out: io.out, err: io.err });
    return EXIT_OK;
  } catch (error) {
    return report(translateServiceError(error, spec.flagsByParameter), spec, io);
  } finally {
    await services?.close?.();
  }
}

function help(words: readonly string[], io: OpsIo): number {
  if (words.length === 0) return print(io.out, overallHelp(), EXIT_OK);
  const group = GROUPS.find((g) => g.name === words[0]);
  if (!group) return print(io.err, [`error: unknown command "${words[0]}"`, `Run "${PROGRAM} --help" for the list of commands.`], EXIT_USAGE);
  if (words.length === 1) return print(io.out, groupHelp(group), EXIT_OK);
  const spec = group.commands.find((c) => c.name === words[1]);
  if (!spec) return print(io.err, [`error: unknown command "${words.join(' ')}"`, '', ...groupHelp(group)], EXIT_USAGE);
  return print(io.out, commandHelp(spec), EXIT_OK);
}

function report(error: unknown, spec: CommandSpec, io: OpsIo): number {
  if (error instanceof UsageError) {
    return print(io.err, [`error: ${error.message}`, usageLine(spec), `Run "${PROGRAM} ${spec.group} ${spec.name} --help" for details.`], EXIT_USAGE);
  }
  if (error instanceof OperationError) return print(io.err, [`error: ${error.message}`, ...error.details], EXIT_FAILED);
  return print(io.err, [`error: ${error instanceof Error ? error.message : String(error)}`], EXIT_FAILED);
}

function print(write: (line: string) => void, lines: readonly string[], code: number): number {
  for (const line of lines) write(line);
  return code;
}

/**
 * The first two words that are not options are the command (`org create`); global options
 * may come before them. What remains is parsed with the command's options.
 */
function splitCommandWords(argv: readonly string[]): { words: string[]; rest: string[] } {
  const words: string[] = [];
  const rest: string[] = [];
  // `help org create` names a command after its first word.
  const wanted = () => (words[0] === 'help' ? 3 : 2);
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (words.length < wanted() && !token.startsWith('-')) {
      words.push(token);
      continue;
    }
    rest.push(token);
    // A global option's value is not a command word.
    if (words.length < wanted() && token === '--data-dir' && i + 1 < argv.length) rest.push(argv[++i]!);
  }
  return { words, rest };
}
