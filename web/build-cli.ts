/** `tsx web/build-cli.ts <folder>`: writes the built settings page there (the stack's bundling step). */
import { writeSettingsPage } from './build';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: tsx web/build-cli.ts <output folder>');
  process.exit(2);
}
writeSettingsPage(dir).catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
