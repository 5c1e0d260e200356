import { quietSdkNodeNotice } from './sdk-node-notice';
import { DemoError, runDemo, tryItYourself } from './demo';
import { localDataDir } from './environment';

/**
 * `npm run demo`: workload identity federation end to end against the running `npm start`
 * (`MODELGATE_DATA_DIR` names its data folder, `.local` by default). With `--serve` the
 * demo's identity provider keeps running until Ctrl-C, for exchanges by hand.
 */
async function main(): Promise<void> {
  quietSdkNodeNotice();
  const dataDir = localDataDir(process.env);
  const serve = process.argv.slice(2).includes('--serve');
  const result = await runDemo({ dataDir, out: (line) => console.log(line) });
  if (!serve) {
    await result.identityProvider.close();
    console.log('Done. Run "npm run demo -- --serve" to keep the identity provider running for exchanges by hand.');
    return;
  }
  for (const line of tryItYourself(result, dataDir)) console.log(line);
  const stop = () => void result.identityProvider.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: Error) => {
  console.error(error instanceof DemoError ? `demo failed: ${error.message}` : `demo failed: ${error.stack ?? error.message}`);
  process.exit(1);
});
