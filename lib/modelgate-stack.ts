import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as route53 from 'aws-cdk-lib/aws-route53';
import type { Construct } from 'constructs';
import { TABLE_SCHEMAS, type TableId } from '../lambdas/aws/table-schemas';
import { Modelgate } from './modelgate';
import type { ModelgateSettings } from './settings';

/**
 * The settings as the CDK context gives them (see {@link ModelgateSettings} for ranges), the
 * custom domain's zone and certificate by id and ARN. The stack's name is the instance's.
 */
export interface ModelgateStackProps extends StackProps, Partial<Omit<ModelgateSettings, 'instance'>> {}

/**
 * One modelgate instance in a stack of its own, named by the instance (`bin/app.ts` builds it
 * from the `modelgate:*` context), with the outputs an operator needs: the API URL, the table
 * names for the operator CLI, the signing key, the secret to put provider keys in.
 */
export class ModelgateStack extends Stack {
  readonly gateway: Modelgate;

  constructor(scope: Construct, id: string, props: ModelgateStackProps = {}) {
    super(scope, id, props);
    const { hostedZoneId, hostedZoneName, certificateArn, ...settings } = props;
    // `Default`: the instance's resources keep the logical ids they had when the stack built them itself.
    const gateway = (this.gateway = new Modelgate(this, 'Default', {
      ...settings,
      instance: this.stackName,
      hostedZone:
        hostedZoneId && hostedZoneName
          ? route53.HostedZone.fromHostedZoneAttributes(this, 'HostedZone', { hostedZoneId, zoneName: hostedZoneName })
          : undefined,
      certificate: certificateArn ? acm.Certificate.fromCertificateArn(this, 'Certificate', certificateArn) : undefined,
    }));

    new CfnOutput(this, 'ApiUrl', {
      value: gateway.apiUrl,
      description: 'Base URL of the API, e.g. https://<id>.execute-api.<region>.amazonaws.com/v1/api/v1',
    });
    new CfnOutput(this, 'SettingsPageUrl', {
      value: gateway.settingsPageUrl,
      description: 'The Workload identity settings page (sign in with a management key)',
    });
    for (const [id, table] of Object.entries(gateway.tables) as [TableId, typeof gateway.tables[TableId]][]) {
      new CfnOutput(this, `${id[0]!.toUpperCase()}${id.slice(1)}TableName`, {
        value: table.tableName,
        description: `${TABLE_SCHEMAS[id].envVar} for the functions and the operator CLI`,
      });
    }
    new CfnOutput(this, 'SigningKeyId', { value: gateway.signingKey.keyId });
    new CfnOutput(this, 'SigningKeyArn', { value: gateway.signingKey.keyArn });
    new CfnOutput(this, 'ProviderCredentialsSecretArn', {
      value: gateway.providerCredentials.secretArn,
      description: 'Secret holding the inference providers\' API keys: {"<provider or *>": "<key>"}',
    });
    new CfnOutput(this, 'WebAclArn', { value: gateway.webAcl.attrArn });
    // Without a hosted zone the DNS records are the domain owner's: what each hostname must point at.
    for (const domain of gateway.customDomain?.domainNames ?? []) {
      new CfnOutput(this, `DnsTarget${domain.node.id.replace(/(^|[.-])([a-z0-9])/g, (_match, _separator, first: string) => first.toUpperCase())}`, {
        value: domain.domainNameAliasDomainName,
        description: `The target of ${domain.node.id}'s CNAME (or alias A and AAAA) records: its API Gateway regional domain name`,
      });
    }
  }
}
