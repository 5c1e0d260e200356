import { App } from 'aws-cdk-lib';
import { ModelgateStack } from '../lib/modelgate-stack';
import { readSettingsFromContext } from '../lib/settings';

const app = new App();
const settings = readSettingsFromContext(app.node);

// Without an account and region the stack stays environment-agnostic, which is what
// an offline `cdk synth` produces; `cdk deploy` with credentials sets both.
const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;

new ModelgateStack(app, 'Modelgate', {
  ...settings,
  env: account || region ? { account, region } : undefined,
  description: 'modelgate: an API gateway for AI models',
});
