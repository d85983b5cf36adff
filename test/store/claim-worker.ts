// A separate process claiming the same keys as its siblings (test/store/sqlite.test.ts):
// opens the store, says "ready", waits for the go file, claims every key, prints the wins.
import { existsSync } from "node:fs";
import { SqliteStore } from "../../src/store/sqlite/store.ts";

const [dir = "", goFile = "", count = "0"] = process.argv.slice(2);
const store = SqliteStore.open(dir);
process.stdout.write("ready\n");
while (!existsSync(goFile)) await new Promise((r) => setTimeout(r, 1));
// Each process walks the keys in its own order, so claims of one key really do race.
const order = Array.from({ length: Number(count) }, (_, k) => k).sort(() => Math.random() - 0.5);
const won: number[] = [];
for (const k of order) if (await store.claim(`delivery:${k}`, 600)) won.push(k);
await store.close();
process.stdout.write(`${JSON.stringify(won)}\n`);
