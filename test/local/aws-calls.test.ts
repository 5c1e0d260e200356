import { callStages, modelledLatencyMs, sequentialDepth, type AwsCall } from '../../local/aws-calls';

/** A DynamoDB call that ran from `start` to `end` (milliseconds). */
function call(command: string, start: number, end: number): AwsCall {
  return { requestId: 'r', functionName: 'f', service: 'DynamoDB', command, tables: [], start, end, serviceStart: start, serviceEnd: end };
}

describe('sequential stages of a request’s calls', () => {
  it('calls side by side share a stage; one that starts after another answered is the next', () => {
    const counter = call('UpdateItem', 0, 8);
    const policy = call('GetItem', 0.2, 9);
    const issuer = call('GetItem', 9.1, 15);
    const key = call('GetItem', 9.2, 16);
    const sign = call('Sign', 16.1, 16.2);
    const stages = callStages([sign, key, issuer, policy, counter]);
    expect([counter, policy, issuer, key, sign].map((each) => stages.get(each))).toEqual([1, 1, 2, 2, 3]);
    expect(sequentialDepth([counter, policy, issuer, key, sign])).toBe(3);
    expect(modelledLatencyMs([counter, policy, issuer, key, sign])).toBe(15);
  });

  it('a join is as deep as its deepest member, whichever answered last', () => {
    // The usage write waits for the open completion's put; the charge waits for the usage write
    // and for the estimate's write, which went out beside the put and answered last.
    const key = call('BatchGetItem', 0, 5);
    const open = call('PutItem', 5.1, 10);
    const estimate = call('UpdateItem', 5.2, 40);
    const usage = call('PutItem', 20, 25);
    const charge = call('UpdateItem', 40.1, 45);
    const calls = [key, open, estimate, usage, charge];
    expect(callStages(calls).get(usage)).toBe(3);
    expect(callStages(calls).get(charge)).toBe(4);
    expect(sequentialDepth(calls)).toBe(4);
  });

  it('a chain of calls, each waiting for the last, is as deep as it is long; no calls, no stage', () => {
    const chain = [call('GetItem', 0, 1), call('GetItem', 1, 2), call('GetItem', 2.5, 3), call('PutItem', 3, 4)];
    expect(sequentialDepth(chain)).toBe(4);
    expect(sequentialDepth([])).toBe(0);
  });
});
