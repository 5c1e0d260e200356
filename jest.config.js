// The SDK's notice about the Node.js version in use is noise in test logs.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
// CDK's built-in CloudFormation validation (cdk.json's validateAgainstDefaultRules) takes about
// half of a synth's time. It runs where the suites synthesize what a user deploys: in every
// environment the CLI may resolve (test/lib/deploy-environments.test.ts, `validated`), on the
// custom domain deploys the docs show (test/lib/deploying-docs.test.ts), and in .ci/run's
// `cdk synth`; the other synths of a run skip it.
process.env.CDK_VALIDATION = 'false';

/** @type {import('jest').Config} */
module.exports = {
  // jest's Node.js environment in a plain context where Node.js has one (test/support/jest-environment.cjs).
  testEnvironment: '<rootDir>/test/support/jest-environment.cjs',
  // The longest suites first, whatever jest recorded (test/support/jest-sequencer.cjs).
  testSequencer: '<rootDir>/test/support/jest-sequencer.cjs',
  // The sources are roots too, so `jest --findRelatedTests <source>` finds the tests that import it;
  // tests live under test/ only.
  roots: ['<rootDir>/test', '<rootDir>/lambdas', '<rootDir>/lib', '<rootDir>/local', '<rootDir>/ops', '<rootDir>/web', '<rootDir>/bench', '<rootDir>/scripts', '<rootDir>/bin'],
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  transform: {
    '^.+\\.(t|j|mj)s$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  // ESM-only packages are transformed to CommonJS for jest, also where a package nests its own
  // copy (openapi-typescript's parse-json and supports-color).
  transformIgnorePatterns: [
    '/node_modules/(?!([^/]+/node_modules/)?(jose|oauth4webapi|openid-client|@middy|@marcbachmann|@openrouter|zod|change-case|parse-json|index-to-position|supports-color|ai|@ai-sdk|@workflow|eventsource-parser)/)',
  ],
  moduleNameMapper: {
    '^@middy/([^/]+)$': '<rootDir>/node_modules/@middy/$1/index.js',
  },
  // Three workers share two cores, and the machine may be busy with more: a suite that
  // synthesizes or starts servers may wait its turn. A test that hangs still fails, after two minutes.
  testTimeout: 120000,
  // Most suites wait on their servers and child processes more than they compute: on 2 cores,
  // three workers finish the run about 17% sooner than two (445 s against 538 s, one run each).
  maxWorkers: 3,
  // What the functions were seen to use behind the IAM gate is summarized after the last suite;
  // the stack the gate reads is synthesized by the first suite that needs it.
  globalSetup: '<rootDir>/test/support/iam/jest-global-setup.ts',
  globalTeardown: '<rootDir>/test/support/iam/jest-global-teardown.ts',
};
