import { buildModelgateApp } from '../lib/app';

// The environment the CLI resolved: the region always (a default when none is configured),
// the account when credentials are at hand. Without either the stack is environment-agnostic.
buildModelgateApp({ env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } });
