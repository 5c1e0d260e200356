/** A command as the interceptor sees it: its class (for `instanceof`) and its input. */
export interface SentCommand {
  constructor: { name: string };
  input: Record<string, unknown>;
}

/**
 * The test's own AWS SDK client with its `send` wrapped by `intercept`, which may look at each
 * command, hold it back or fail it, and passes it on with `send`. The client stays an instance
 * of its class: the SDK's paginators (`paginateQuery`) refuse any other object.
 */
export function interceptSend<C extends object>(client: C, intercept: (command: SentCommand, send: () => Promise<unknown>) => Promise<unknown>): C {
  const real = client as unknown as { send(command: unknown): Promise<unknown> };
  const intercepted = Object.create(client) as { send(command: SentCommand): Promise<unknown> };
  intercepted.send = (command) => intercept(command, () => real.send(command));
  return intercepted as unknown as C;
}
