import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ModelgateStack } from '../lib/modelgate-stack';
import { readSettingsFromContext } from '../lib/settings';

const app = new App();
const settings = readSettingsFromContext(app.node);

// Without an account and region the stack stays environment-agnostic, which is what
// an offline `cdk synth` produces; `cdk deploy` with credentials sets both.
const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;

// AwsSolutions rules run on every synth; a finding that is neither fixed nor acknowledged
// next to its resource (with a reason) fails it.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

new ModelgateStack(app, 'Modelgate', {
  ...settings,
  env: account || region ? { account, region } : undefined,
  description: 'modelgate: an API gateway for AI models',
});
