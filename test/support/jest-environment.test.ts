import { runInContext, constants } from 'node:vm';
import { TestEnvironment } from 'jest-environment-node';

const PlainContextEnvironment = require('./jest-environment.cjs') as typeof TestEnvironment;

/** What jest's constructor reads of the configuration. */
const config = { projectConfig: { testEnvironmentOptions: {}, fakeTimers: {}, testEnvironment: 'node', id: 'environment-test', setupFiles: [], globals: {} }, globalConfig: {} } as unknown as ConstructorParameters<typeof TestEnvironment>[0];
const context = { console, docblockPragmas: {}, testPath: __filename };

/** Whether the environment's context is plain: its global object is the context object itself, not a sandbox behind interceptors. */
function plain(environment: InstanceType<typeof TestEnvironment>): boolean {
  const vmContext = environment.getVmContext()!;
  return runInContext('this', vmContext) === vmContext;
}

describe('the suites\' jest environment', () => {
  const nodeHasPlainContexts = 'DONT_CONTEXTIFY' in constants;

  it('runs each test file in a plain context where Node.js has one, as jest\'s own environment does not', async () => {
    const ours = new PlainContextEnvironment(config, context);
    const jests = new TestEnvironment(config, context);
    try {
      expect({ ours: plain(ours), jests: plain(jests) }).toEqual({ ours: nodeHasPlainContexts, jests: false });
      // jest's globals are there all the same.
      expect(runInContext('typeof setTimeout === "function" && typeof Buffer === "function" && typeof process.env', ours.getVmContext()!)).toBe('object');
    } finally {
      await ours.teardown();
      await jests.teardown();
    }
  });
});
