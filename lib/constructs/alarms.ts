import { Duration, Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { instanceName } from './instance';

/** What {@link ServiceAlarms} watches, and where it sends alarms. */
export interface ServiceAlarmsProps {
  /** The API stage whose 5XX rate is watched. */
  readonly stage: apigateway.Stage;
  /** Every function of the service by name; each gets an errors and a throttles alarm. */
  readonly functions: Readonly<Record<string, lambda.IFunction>>;
  /**
   * The reserved concurrency of functions that have one, by name: each gets an alarm when it
   * runs near its reservation, before its invocations are throttled.
   * @default {}
   */
  readonly reservedConcurrency?: Readonly<Record<string, number>>;
  /** The `MetricName` of the web ACL's visibility config: WAF's `WebACL` metric dimension. */
  readonly webAclMetricName: string;
  /** The functions behind custom resources; any error means a failed deployment step. */
  readonly customResourceFunctions: readonly lambda.IFunction[];
  /**
   * Where alarms (and their recovery) are sent.
   * @default no notification; alarms show in the CloudWatch console only
   */
  readonly topic?: sns.ITopic;
}

/**
 * Functions whose faults share an alarm, by alarm: a metric-math alarm reads at most 10 metrics
 * (errors and throttles of each; the registrar and the custom resource framework, which run at
 * deploy time only, count errors alone). Fewer alarms keep two instances in one stack within
 * CloudFormation's 500 resources. A function in no group has an alarm of its own.
 */
const FAULT_GROUPS: Readonly<Record<string, readonly string[]>> = {
  TokenExchangeAndManagementFaults: ['TokenExchange', 'Management'],
  OtherFunctionsFaults: ['Catalog', 'Jwks', 'SettingsPage', 'UsageRollup'],
};
/** Deploy-time functions: their errors go on `OtherFunctionsFaults`. */
const DEPLOY_TIME: readonly string[] = ['SigningKeyRegistrar'];
const grouped = (name: string) => DEPLOY_TIME.includes(name) || Object.values(FAULT_GROUPS).some((names) => names.includes(name));

/** A function with reserved concurrency is near its cap at this share of it. */
const NEAR_RESERVATION = 0.8;

/** docs/reference.md#errors: a 5XX is never the answer to bad input, so even 1% of requests means a fault. */
const API_5XX_RATE_THRESHOLD = 0.01;
const FIVE_MINUTES = Duration.minutes(5);

/**
 * The alarms an operator needs to know the service is healthy (docs/operating.md lists them):
 * - the API's 5XX rate above 1% for two 5-minute periods in a row;
 * - any error or throttle of a function in a 5-minute period: one alarm each for the inference,
 *   token exchange and management functions, one shared by the others;
 * - a function with reserved concurrency running at 80% of it or more for 5 minutes in a row;
 * - a spike of requests the WAF blocked, above the band CloudWatch learns from its history;
 * - the usage rollup not invoked for 3 hours;
 * - any error of a custom resource function (a deployment step failed).
 * With a topic, each alarm notifies it on ALARM and again on OK.
 */
export class ServiceAlarms extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: ServiceAlarmsProps) {
    super(scope, id);
    this.apiAlarm(props.stage);
    for (const [name, fn] of Object.entries(props.functions)) if (!grouped(name)) this.functionAlarms(name, fn);
    const deployTime = [
      ...Object.entries(props.functions).filter(([name]) => DEPLOY_TIME.includes(name)),
      ...props.customResourceFunctions.map((fn, i): [string, lambda.IFunction] => [`CustomResource${i}`, fn]),
    ];
    for (const [id, names] of Object.entries(FAULT_GROUPS)) {
      const members = Object.entries(props.functions).filter(([name]) => names.includes(name));
      this.groupFaultsAlarm(id, members, id === 'OtherFunctionsFaults' ? deployTime : []);
    }
    for (const [name, reserved] of Object.entries(props.reservedConcurrency ?? {})) {
      const fn = props.functions[name];
      if (!fn) throw new Error(`no function ${name} to watch the reserved concurrency of`);
      this.reservationAlarm(name, fn, reserved);
    }
    this.firewallAlarm(props.webAclMetricName);
    if (props.functions.UsageRollup) this.rollupAlarm(props.functions.UsageRollup);
    if (props.topic) {
      const notify = new actions.SnsAction(props.topic);
      for (const alarm of this.alarms) {
        alarm.addAlarmAction(notify);
        alarm.addOkAction(notify);
      }
    }
  }

  private apiAlarm(stage: apigateway.Stage): void {
    this.add(
      new cloudwatch.Alarm(this, 'Api5xxRate', {
        alarmDescription: 'More than 1% of API requests answered 5XX (never the answer to bad input)',
        metric: stage.metricServerError({ statistic: cloudwatch.Stats.AVERAGE, period: FIVE_MINUTES }),
        threshold: API_5XX_RATE_THRESHOLD,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 2,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }

  /**
   * One alarm per function for its errors and its throttles together: each is a fault the
   * operator must look at, and the alarm's graph tells which. One alarm, not two, keeps an
   * instance's resources within CloudFormation's 500 per stack with two instances in one stack.
   */
  private functionAlarms(name: string, fn: lambda.IFunction): void {
    this.anyInFiveMinutes(
      `${name}Faults`,
      `The ${name} function failed an invocation (an unhandled error, a timeout or a crash) or was throttled (account or reserved concurrency reached)`,
      new cloudwatch.MathExpression({
        expression: 'FILL(errors, 0) + FILL(throttles, 0)',
        usingMetrics: {
          errors: fn.metricErrors({ statistic: cloudwatch.Stats.SUM, period: FIVE_MINUTES }),
          throttles: fn.metricThrottles({ statistic: cloudwatch.Stats.SUM, period: FIVE_MINUTES }),
        },
        label: `${name} errors and throttles`,
        period: FIVE_MINUTES,
      }),
    );
  }

  /**
   * One alarm for the errors and throttles of `functions` and the errors of `deployTime` (a
   * failed deployment step): any fault of any of them, its graph one line per function.
   */
  private groupFaultsAlarm(id: string, functions: ReadonlyArray<[string, lambda.IFunction]>, deployTime: ReadonlyArray<[string, lambda.IFunction]>): void {
    const usingMetrics: Record<string, cloudwatch.IMetric> = {};
    const terms: string[] = [];
    functions.forEach(([, fn], i) => {
      usingMetrics[`errors${i}`] = fn.metricErrors({ statistic: cloudwatch.Stats.SUM, period: FIVE_MINUTES });
      usingMetrics[`throttles${i}`] = fn.metricThrottles({ statistic: cloudwatch.Stats.SUM, period: FIVE_MINUTES });
      terms.push(`FILL(errors${i}, 0) + FILL(throttles${i}, 0)`);
    });
    deployTime.forEach(([, fn], i) => {
      usingMetrics[`deploy${i}`] = fn.metricErrors({ statistic: cloudwatch.Stats.SUM, period: FIVE_MINUTES });
      terms.push(`FILL(deploy${i}, 0)`);
    });
    if (terms.length === 0) return;
    const names = functions.map(([name]) => name);
    const deploySteps = deployTime.length > 0 ? ', or a deployment step (signing-key registration) failed' : '';
    this.anyInFiveMinutes(
      id,
      `One of the ${names.join(', ')} functions failed an invocation (an unhandled error, a timeout or a crash) or was throttled${deploySteps}; the graph shows which`,
      new cloudwatch.MathExpression({ expression: terms.join(' + '), usingMetrics, label: `${names.join(', ')} errors and throttles`, period: FIVE_MINUTES }),
    );
  }

  private reservationAlarm(name: string, fn: lambda.IFunction, reserved: number): void {
    this.add(
      new cloudwatch.Alarm(this, `${name}NearReservedConcurrency`, {
        alarmDescription: `The ${name} function ran at ${NEAR_RESERVATION * 100}% or more of its ${reserved} reserved concurrent executions for 5 minutes: raise the reservation before its invocations are throttled (docs/operating.md)`,
        metric: fn.metric('ConcurrentExecutions', { statistic: cloudwatch.Stats.MAXIMUM, period: Duration.minutes(1) }),
        threshold: Math.ceil(reserved * NEAR_RESERVATION),
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 5,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }

  /**
   * The usage rollup not invoked for 3 hours in a row (its schedule disabled or gone): until it
   * folds again, every usage view reads one more unfolded day each day (docs/architecture.md,
   * "Usage over time"). A run that fails is `OtherFunctionsFaults`.
   */
  private rollupAlarm(fn: lambda.IFunction): void {
    this.add(
      new cloudwatch.Alarm(this, 'UsageRollupStopped', {
        alarmDescription: 'The usage rollup has not run for 3 hours: usage views read more unfolded days until it runs again (docs/operating.md)',
        metric: fn.metricInvocations({ statistic: cloudwatch.Stats.SUM, period: Duration.hours(1) }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluationPeriods: 3,
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      }),
    );
  }

  private firewallAlarm(webAclMetricName: string): void {
    this.add(
      new cloudwatch.AnomalyDetectionAlarm(this, 'WafBlockedSpike', {
        alarmDescription: 'The firewall blocks far more requests than usual: an attack, or a client stuck in a retry loop',
        metric: new cloudwatch.Metric({
          namespace: 'AWS/WAFV2',
          metricName: 'BlockedRequests',
          dimensionsMap: { WebACL: webAclMetricName, Region: Stack.of(this).region, Rule: 'ALL' },
          statistic: cloudwatch.Stats.SUM,
          period: FIVE_MINUTES,
        }),
        stdDevs: 3,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_UPPER_THRESHOLD,
        evaluationPeriods: 2,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }

  /** An alarm when `metric` (a 5-minute sum) counts anything at all. */
  private anyInFiveMinutes(id: string, alarmDescription: string, metric: cloudwatch.IMetric): void {
    this.add(
      new cloudwatch.Alarm(this, id, {
        alarmDescription,
        metric,
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }

  private add(alarm: cloudwatch.Alarm): void {
    // `<instance>-<alarm>`: two instances in one account and region keep apart in the console.
    (alarm.node.defaultChild as cloudwatch.CfnAlarm).alarmName = `${instanceName(this)}-${alarm.node.id}`;
    this.alarms.push(alarm);
  }
}
