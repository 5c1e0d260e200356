import { App, Validations, type AppProps, type Environment } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ModelgateStack } from './modelgate-stack';
import { readSettingsFromContext } from './settings';

/** How {@link buildModelgateApp} builds the app: extra context, environment and output folder. */
export interface ModelgateAppOptions {
  /**
   * Context beside what the CLI passes (cdk.json, `-c`); tests give cdk.json's here, since an
   * `App` built outside the CLI does not read it.
   * @default none
   */
  readonly context?: Record<string, unknown>;
  /**
   * The environment to build for. The CLI always resolves one (`CDK_DEFAULT_ACCOUNT` and
   * `CDK_DEFAULT_REGION`, the region falling back to a default when none is configured), so
   * the stack a user deploys has its partition, region and account as literals.
   * @default environment-agnostic
   */
  readonly env?: Environment;
  /** Where the cloud assembly goes. @default the CLI's `CDK_OUTDIR`, else a temporary folder */
  readonly outdir?: string;
  /** Stacks whose assets are bundled. @default every stack (`['**']`) */
  readonly bundlingStacks?: string[];
}

/**
 * The one way the modelgate app is built: by `bin/app.ts` under the CLI, and by the tests in
 * every environment the CLI can resolve. The stack is named by `modelgate:instance`
 * (default `Modelgate`), and cdk-nag's AwsSolutions pack runs on every synth: a finding that is
 * neither fixed nor acknowledged next to its resource (with a reason) fails it.
 */
export function buildModelgateApp(options: ModelgateAppOptions = {}): { app: App; stack: ModelgateStack } {
  const props: AppProps = {
    ...(options.context ? { context: options.context } : {}),
    ...(options.outdir ? { outdir: options.outdir } : {}),
  };
  const app = new App(props);
  if (options.bundlingStacks) app.node.setContext('aws:cdk:bundling-stacks', options.bundlingStacks);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const env = options.env && (options.env.account || options.env.region) ? options.env : undefined;
  const settings = readSettingsFromContext(app.node);
  const stack = new ModelgateStack(app, settings.instance, {
    ...settings,
    env,
    description: 'modelgate: an API gateway for AI models',
  });
  return { app, stack };
}
