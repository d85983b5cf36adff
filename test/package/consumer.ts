// A TypeScript program that uses the published types of both entry points of the hcp-bot
// package (light-install.test.ts compiles it against the installed declarations and runs it).
/** A TypeScript program that uses the published types of both entry points. */
export const CONSUMER_TS = `import { adviseLayout, analyze, rankGrid, recommendLayout, type Finding } from "hcp-bot";
import { loadPythonLanguage, readSources } from "hcp-bot/node";

const layout = recommendLayout({ cp: 16, tp: 1, gpusPerNode: 8 });
const sizes: [number, number] | undefined = layout.sizes;
const advice = adviseLayout({ cp: 16, numAttentionHeads: 32, numQueryGroups: 8 });
const rings: number[][] = rankGrid({ tp: 1, cp: 16, sizes: [8, 2] }).levels[1]!;
const { files } = await readSources(["r.py"]);
const findings: readonly Finding[] = analyze(files, { python: await loadPythonLanguage() }).findings;
console.log(JSON.stringify({ sizes, advised: advice.recommendation.sizes, rings: rings.length, findings: findings.map((f) => f.ruleId) }));
`;

