import { Token } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as targets from 'aws-cdk-lib/aws-route53-targets';
import { Construct } from 'constructs';
import { SettingsError } from '../settings';

/** The hostnames of {@link CustomDomain}, the API it maps, and where its certificate and DNS records come from. */
export interface CustomDomainProps {
  /** The API's hostname, e.g. `api.example.com`. */
  readonly domainName: string;
  /** Hostnames served beside it, e.g. the regional hostnames `eu.api.example.com`. */
  readonly alsoServes: readonly string[];
  /** The REST API whose stage is mapped at the root of every hostname. */
  readonly restApi: apigateway.RestApi;
  /**
   * The zone that holds every hostname: a DNS-validated certificate for all of them is made,
   * and A and AAAA alias records to each hostname's API Gateway domain name.
   * @default no DNS records: they are the zone owner's to make
   */
  readonly hostedZone?: route53.IHostedZone;
  /**
   * A certificate that covers every hostname, in the stack's region.
   * @default a certificate validated in `hostedZone`
   */
  readonly certificate?: acm.ICertificate;
}

/**
 * The API under a domain of its own: one certificate for the domain and every hostname served
 * beside it, a regional API Gateway domain name per hostname (TLS 1.2 or stricter, reachable
 * over IPv4 and IPv6) mapping the stage at the hostname's root, so `/api/v1`, the settings
 * pages and the path-inserted discovery documents (`/.well-known/...`, RFC 8414 §3 and
 * RFC 9728 §3) sit under the versioned base path (docs/reference.md#versioning), and alias records in the zone when one is given.
 * The web ACL on the stage sees the requests of every hostname.
 */
export class CustomDomain extends Construct {
  readonly certificate: acm.ICertificate;
  /** One per hostname: the domain first, then the others in the order given. */
  readonly domainNames: readonly apigateway.DomainName[];

  constructor(scope: Construct, id: string, props: CustomDomainProps) {
    super(scope, id);
    const hostnames = [...new Set([props.domainName, ...props.alsoServes])];
    if (props.hostedZone) checkInZone(props.hostedZone, hostnames);
    this.certificate = props.certificate ?? this.certificateFor(hostnames, props.hostedZone);
    this.domainNames = hostnames.map((hostname) => {
      // Named by the hostname, so adding or removing another hostname never replaces this one.
      const domain = new apigateway.DomainName(this, hostname, {
        domainName: hostname,
        certificate: this.certificate,
        endpointType: apigateway.EndpointType.REGIONAL,
        securityPolicy: apigateway.SecurityPolicy.TLS_1_2,
      });
      // The AAAA record needs a dual-stack domain name; CDK's DomainName does not expose it.
      (domain.node.defaultChild as apigateway.CfnDomainName).addPropertyOverride('EndpointConfiguration.IpAddressType', 'dualstack');
      domain.addBasePathMapping(props.restApi);
      if (props.hostedZone) aliasRecords(domain, props.hostedZone, hostname);
      return domain;
    });
  }

  private certificateFor(hostnames: readonly string[], zone: route53.IHostedZone | undefined): acm.ICertificate {
    if (!zone) throw new SettingsError('A custom domain needs a hosted zone or a certificate');
    return new acm.Certificate(this, 'Certificate', {
      domainName: hostnames[0]!,
      subjectAlternativeNames: hostnames.slice(1),
      validation: acm.CertificateValidation.fromDns(zone),
    });
  }
}

/** A and AAAA alias records for the hostname, to its API Gateway domain name. */
function aliasRecords(domain: apigateway.DomainName, zone: route53.IHostedZone, hostname: string): void {
  const target = route53.RecordTarget.fromAlias(new targets.ApiGatewayDomain(domain));
  new route53.ARecord(domain, 'A', { zone, recordName: `${hostname}.`, target });
  new route53.AaaaRecord(domain, 'AAAA', { zone, recordName: `${hostname}.`, target });
}

/** DNS validation and the alias records need every hostname inside the zone. */
function checkInZone(zone: route53.IHostedZone, hostnames: readonly string[]): void {
  if (Token.isUnresolved(zone.zoneName)) return;
  const zoneName = zone.zoneName.replace(/\.$/, '').toLowerCase();
  const outside = hostnames.filter((hostname) => hostname !== zoneName && !hostname.endsWith(`.${zoneName}`));
  if (outside.length > 0) {
    throw new SettingsError(`The hosted zone ${zoneName} cannot hold ${outside.join(', ')}: every hostname the API serves must be in it`);
  }
}
