// `npm run index:bridge [-- <bridge dir>] [--out FILE] [--commit SHA]`: writes the index of
// upstream recipes' effective settings (default data/megatron-bridge-recipes.json) from a
// Megatron-Bridge checkout, the folder given or MEGATRON_BRIDGE_DIR. The commit comes from
// --commit, else from git in that folder (an exported tree has none: pass --commit).
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { formatBridgeIndex, indexBridge } from "../src/node/bridge-index-build.ts";
import { bridgeLabel } from "../src/core/analyze/bridge-index.ts";
import { packageFile } from "../src/node/package-files.ts";

const { values, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: "string" }, commit: { type: "string" } } });
const dir = positionals[0] ?? process.env.MEGATRON_BRIDGE_DIR;
if (!dir) {
  process.stderr.write("index:bridge: name a Megatron-Bridge checkout (npm run index:bridge -- <dir>) or set MEGATRON_BRIDGE_DIR\n");
  process.exit(2);
}
if (values.commit !== undefined && !/^[0-9a-f]{7,40}$/.test(values.commit)) {
  process.stderr.write(`index:bridge: --commit takes a hexadecimal commit id (got ${JSON.stringify(values.commit)})\n`);
  process.exit(2);
}
const out = values.out ?? packageFile("data/megatron-bridge-recipes.json");
try {
  const index = await indexBridge(dir, values.commit);
  writeFileSync(out, formatBridgeIndex(index));
  process.stdout.write(`${out}: ${Object.keys(index.recipes).length} recipes and ${Object.keys(index.aliases).length} aliases of ${bridgeLabel(index)}\n`);
} catch (error) {
  process.stderr.write(`index:bridge: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
